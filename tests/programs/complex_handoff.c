// Complex variables handed from one kernel of a compute construct to the next: a complex `+`
// reduction and a `long double _Complex` `*` reduction whose results a later loop of the same
// `parallel` region reads, part by part. The later loop sees the values the sequential
// program has at that point.
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#define N 200
int main(void) {
    double complex *a = malloc(N * sizeof *a);
    double *c = malloc(N * sizeof *c);
    for (int i = 0; i < N; i++) { a[i] = (i % 7) * 0.5 + (i % 3) * 0.25 * I; c[i] = 0; }
    double complex total = 1.0 + 2.0 * I;
    #pragma acc parallel copyin(a[0:N]) copy(c[0:N])
    {
        #pragma acc loop reduction(+:total)
        for (int i = 0; i < N; i++) total += a[i];
        #pragma acc loop
        for (int i = 0; i < N; i++) c[i] = creal(a[i] * total) + cimag(total);
    }
    double check = 0;
    for (int i = 0; i < N; i++) check += c[i] * (i % 5 + 1);
    printf("total %.10g %+.10gi check %.10g\n", creal(total), cimag(total), check);
    long double complex z = 3.0L - 1.0L * I;
    #pragma acc parallel copy(c[0:N])
    {
        #pragma acc loop reduction(*:z)
        for (int i = 0; i < 4; i++) z *= 1.0L + 0.5L * I;
        #pragma acc loop
        for (int i = 0; i < N; i++) c[i] = (double)creall(z) * i + (double)cimagl(z);
    }
    check = 0;
    for (int i = 0; i < N; i++) check += c[i];
    printf("z %.10g %+.10gi check %.10g\n", (double)creall(z), (double)cimagl(z), check);
    return 0;
}
