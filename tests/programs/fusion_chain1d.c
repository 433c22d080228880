// yosegi-test: rtol=1e-12
// Chains of 1-D loops in one region, for loop fusion: loops with different bounds, an
// intermediate read at several offsets (redundant iterations at the tile edges), one read back
// in place, a scratch array the host never names (its global stores can be left out), and a
// chain cut where a loop reads what a later one writes.
#include <stdio.h>
#include <stdlib.h>

#define N 10007

static double smooth_twice(const double *restrict in, double *restrict out, int n) {
    double t[N];
    #pragma acc parallel loop copyin(in[0:n]) copyout(out[0:n]) create(t)
    for (int i = 0; i < n; i++) {
        out[i] = in[i];
    }
    #pragma acc kernels copyin(in[0:n]) copy(out[0:n]) create(t)
    {
        for (int i = 1; i < n - 1; i++) t[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
        for (int i = 2; i < n - 2; i++) out[i] = 0.25 * t[i - 1] + 0.5 * t[i] + 0.25 * t[i + 1];
    }
    double s = 0;
    for (int i = 0; i < n; i++) s += out[i] * (1 + i % 5);
    return s;
}

/* A scratch block the host only allocates and frees: a chain of two loops writes and reads
 * it, and a later region reads it too, so its stores must stay. */
static double scratch_read_later(const double *restrict in, int n) {
    double *s = malloc(n * sizeof(double));
    double *r = malloc(n * sizeof(double));
    double total = 0.0;
    #pragma acc data create(s[0:n]) copyin(in[0:n]) copyout(r[0:n])
    {
        #pragma acc parallel
        {
            #pragma acc loop
            for (int i = 1; i < n - 1; i++) s[i] = in[i - 1] - in[i + 1];
            #pragma acc loop
            for (int i = 2; i < n - 2; i++) r[i] = s[i - 1] * s[i + 1];
        }
        #pragma acc parallel loop reduction(+:total)
        for (int i = 1; i < n - 1; i++) total += s[i];
    }
    for (int i = 2; i < n - 2; i++) total += r[i];
    free(s);
    free(r);
    return total;
}

int main(void) {
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
    double *c = malloc(N * sizeof(double)), *d = malloc(N * sizeof(double));
    double *e = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        a[i] = (i * 37 % 101) * 0.5;
        b[i] = -1;
        c[i] = -2;
        d[i] = -3;
        e[i] = i % 3;
    }
    #pragma acc kernels copyin(a[0:N]) copy(b[0:N], c[0:N], d[0:N], e[0:N])
    {
        for (int i = 1; i < N - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
        for (int i = 2; i < N - 2; i++) c[i] = b[i - 1] - 2.0 * b[i] + b[i + 1] + b[i - 2] * 0.1;
        // Reads b and c where their loops did not write them too (i = 0, 1, N-1).
        for (int i = 0; i < N; i++) d[i] = c[i] * 0.5 + b[i] + a[i];
        // In place, at the iteration's own element.
        for (int i = 0; i < N; i++) e[i] = e[i] * 2.0 + d[i];
        // Reads e, which the next loop writes: the chain stops before that one.
        for (int i = 1; i < N; i++) c[i] = e[i - 1] + 1.0;
        for (int i = 0; i < N; i++) e[i] = 0.5 * c[i];
    }
    double s = 0;
    for (int i = 0; i < N; i++) s += b[i] * 1.0 + c[i] * 3.0 + d[i] * 7.0 + (i % 13) * e[i];
    printf("sum %.12e\n", s);
    printf("samples %.12e %.12e %.12e %.12e\n", b[5], c[N - 3], d[N - 1], e[1]);
    printf("smoothed %.12e\n", smooth_twice(a, b, N));
    printf("ends %.12e %.12e %.12e\n", b[0], b[1], b[N - 2]);
    printf("scratch read later %.12e\n", scratch_read_later(a, N));
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    return 0;
}
