// bad input: a function declared and called but defined in no file given on the command line
#include <stdio.h>

double norm2(const double *v, int n);

int main(void) {
    double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
#pragma acc parallel loop copy(v)
    for (int i = 0; i < 8; i++) v[i] *= 0.5;
    printf("%f\n", norm2(v, 8));
    return 0;
}
