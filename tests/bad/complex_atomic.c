// bad input: an atomic update of a complex number
#include <complex.h>
#include <stdio.h>
int main(void) {
    double complex s[1] = {0};
#pragma acc parallel loop copy(s)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic update
        s[0] += I;
    }
    printf("%g\n", cimag(s[0]));
    return 0;
}
