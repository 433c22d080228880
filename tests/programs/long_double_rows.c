// `long double` through tables of row pointers: `long double **a` copied as a two-dimensional
// section, its rows written by a kernel and passed one by one to a `routine seq` function that
// takes a `long double *`; the elements keep the host's x87 format.
#include <stdio.h>
#include <stdlib.h>
#define N 16
#define M 10
#pragma acc routine seq
static long double row_sum(long double *r, int m) {
    long double s = 0;
    for (int j = 0; j < m; j++) s += r[j];
    return s;
}
int main(void) {
    long double **a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++) {
        a[i] = malloc(M * sizeof **a);
        for (int j = 0; j < M; j++) a[i][j] = i * 0.5L + j / 3.0L;
    }
    long double sums[N];
    #pragma acc parallel loop copy(a[0:N][0:M]) copyout(sums[0:N])
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < M; j++) a[i][j] = a[i][j] * 2;
        sums[i] = row_sum(a[i], M);
    }
    double t = 0;
    for (int i = 0; i < N; i++) t += (double)sums[i] + (double)a[i][M - 1];
    printf("%.12g\n", t);
    return 0;
}
