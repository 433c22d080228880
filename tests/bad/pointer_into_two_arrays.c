// bad input: a pointer local assigned pointers into two arrays (kernels resolve each pointer
// to one object)
#include <stdio.h>
int main(void) {
    double a[10], b[10], c[10];
    for (int i = 0; i < 10; i++) { a[i] = i; b[i] = -i; }
#pragma acc parallel loop copyin(a, b) copyout(c)
    for (int i = 0; i < 10; i++) {
        const double *p = a;
        if (i % 2) p = b;
        c[i] = p[i];
    }
    printf("%f\n", c[3]);
    return 0;
}
