// yosegi-test: rtol=1e-12
// Adjacent `parallel loop` constructs in a data region are one compute region (so their loops
// can fuse): a stencil chain written NPB-style, a reduction whose result the next construct
// reads (the next kernel must see the folded value), and constructs that stay apart (a copy
// clause, host code between).
#include <stdio.h>
#include <stdlib.h>

#define N 5003

int main(void) {
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
    double *c = malloc(N * sizeof(double)), *d = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        a[i] = (i * 13 % 29) * 0.25;
        b[i] = c[i] = d[i] = 0.0;
    }
    double total = 0.0;
    #pragma acc data copyin(a[0:N]) copy(b[0:N], c[0:N], d[0:N])
    {
        for (int step = 0; step < 3; step++) {
            #pragma acc parallel loop present(a[0:N], b[0:N])
            for (int i = 1; i < N - 1; i++)
                b[i] = 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]) + step;
            #pragma acc parallel loop present(b[0:N], c[0:N])
            for (int i = 2; i < N - 2; i++)
                c[i] = b[i + 1] - b[i - 1];
            #pragma acc parallel loop present(c[0:N]) reduction(+:total)
            for (int i = 0; i < N; i++)
                total += c[i] * c[i];
            #pragma acc parallel loop present(c[0:N], d[0:N])
            for (int i = 0; i < N; i++)
                d[i] = c[i] / (1.0 + total);
            // A copy clause keeps this construct apart from the one before.
            #pragma acc parallel loop copy(d[0:N])
            for (int i = 0; i < N; i++)
                d[i] = d[i] * 2.0;
        }
    }
    double s = 0.0;
    for (int i = 0; i < N; i++) s += b[i] + 3.0 * c[i] + 7.0 * d[i] * (1 + i % 3);
    printf("sum %.12e total %.12e\n", s, total);
    printf("samples %.12e %.12e %.12e\n", b[1], c[N - 3], d[N / 2]);
    free(a); free(b); free(c); free(d);
    return 0;
}
