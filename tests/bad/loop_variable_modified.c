// bad input: the body of a parallel loop assigns its loop variable
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) {
        a[i] = i;
        i += 1;
    }
    printf("%f\n", a[4]);
    return 0;
}
