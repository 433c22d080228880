// bad input: a `max` reduction on a complex variable (complex numbers reduce with + and *)
#include <complex.h>
#include <stdio.h>
int main(void) {
    double complex z[16], biggest = 0;
    for (int i = 0; i < 16; i++) z[i] = i - 2.0 * I;
#pragma acc parallel loop reduction(max:biggest) copyin(z)
    for (int i = 0; i < 16; i++) {
        biggest = z[i];
    }
    printf("%g\n", creal(biggest));
    return 0;
}
