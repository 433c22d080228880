// bad input: a reduction on an array of complex numbers
#include <complex.h>
#include <stdio.h>
int main(void) {
    double complex h[4] = {0};
#pragma acc parallel loop reduction(+:h)
    for (int i = 0; i < 100; i++) {
        h[i % 4] += I;
    }
    printf("%g\n", cimag(h[0]));
    return 0;
}
