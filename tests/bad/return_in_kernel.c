// bad input: return inside a parallel loop
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) {
        if (i == 99) return 1;
        a[i] = i;
    }
    printf("%f\n", a[5]);
    return 0;
}
