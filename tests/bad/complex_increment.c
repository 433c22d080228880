// bad input: `++` on a complex number (C allows it on real numbers and pointers only)
#include <complex.h>
#include <stdio.h>
int main(void) {
    double complex z[16];
    for (int i = 0; i < 16; i++) z[i] = i - 2.0 * I;
#pragma acc parallel loop copy(z)
    for (int i = 0; i < 16; i++) {
        z[i]++;
    }
    printf("%g\n", creal(z[3]));
    return 0;
}
