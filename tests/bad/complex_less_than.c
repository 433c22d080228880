// bad input: `<` on complex numbers (C defines no order on them)
#include <complex.h>
#include <stdio.h>
int main(void) {
    double complex z[16];
    int below = 0;
    for (int i = 0; i < 16; i++) z[i] = i - 2.0 * I;
#pragma acc parallel loop reduction(+:below) copyin(z)
    for (int i = 0; i < 16; i++) {
        if (z[i] < 3.0 * I) below++;
    }
    printf("%d\n", below);
    return 0;
}
