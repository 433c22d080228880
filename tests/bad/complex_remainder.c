// bad input: `%` on a complex number
#include <complex.h>
#include <stdio.h>
int main(void) {
    double complex z[16];
    for (int i = 0; i < 16; i++) z[i] = i - 2.0 * I;
#pragma acc parallel loop copy(z)
    for (int i = 0; i < 16; i++) {
        z[i] = z[i] % 2;
    }
    printf("%g\n", creal(z[3]));
    return 0;
}
