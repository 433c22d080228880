// bad input: the address of a pointer in a kernel
#include <stdio.h>
#pragma acc routine seq
static void advance(const double **p) { *p = *p + 1; }
int main(void) {
    double a[10], c[10];
    for (int i = 0; i < 10; i++) a[i] = i;
#pragma acc parallel loop copyin(a) copyout(c)
    for (int i = 0; i < 9; i++) {
        const double *p = &a[i];
        advance(&p);
        c[i] = *p;
    }
    printf("%f\n", c[3]);
    return 0;
}
