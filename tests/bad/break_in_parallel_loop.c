// bad input: break leaves a parallel loop early
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) {
        a[i] = i;
        if (i == 50) break;
    }
    printf("%f\n", a[5]);
    return 0;
}
