// yosegi-test: rtol=1e-12
// Tables of row pointers in device code: routines taking `double **` and indexing a[x][y],
// routines given one row (f(a[x])), a `kernels` loop nest over a[i][j], atomics on rows, and
// writes through rows read back after the region.
#include <stdio.h>
#include <stdlib.h>

#define N 12
#define M 10

#pragma acc routine seq
double row_sum(double **a, int x, int m) {
    double s = 0;
    for (int y = 0; y < m; y++) s += a[x][y];
    return s;
}

#pragma acc routine seq
double dot(const double *u, const double *v, int m) {
    double s = 0;
    for (int y = 0; y < m; y++) s += u[y] * v[y];
    return s;
}

#pragma acc routine seq
void scale_rows(double **a, double *f, int n, int m) {
    for (int x = 0; x < n; x++)
        for (int y = 0; y < m; y++) a[x][y] *= f[x];
}

/// Calls another routine with the table it was given.
#pragma acc routine seq
void sums(double **a, double *out, int n, int m) {
    for (int x = 0; x < n; x++) out[x] = row_sum(a, x, m);
}

int main(void) {
    double **a = (double **)malloc(N * sizeof(double *));
    double **b = (double **)malloc(N * sizeof(double *));
    double **h = (double **)malloc(N * sizeof(double *));
    double f[N], out[N], dots[N];
    for (int i = 0; i < N; i++) {
        a[i] = (double *)malloc(M * sizeof(double));
        b[i] = (double *)malloc(M * sizeof(double));
        h[i] = (double *)malloc(4 * sizeof(double));
        for (int j = 0; j < M; j++) {
            a[i][j] = (i * 7 + j * 3) % 11 - 5;
            b[i][j] = 0.5 * j - i;
        }
        for (int k = 0; k < 4; k++) h[i][k] = 0;
        f[i] = 1 + i % 3;
        out[i] = dots[i] = 0;
    }

    #pragma acc data copy(a[0:N][0:M]) copyin(b[0:N][0:M], f[0:N]) copyout(out[0:N], dots[0:N])
    {
        #pragma acc parallel
        {
            scale_rows(a, f, N, M);
        }
        #pragma acc parallel loop
        for (int x = 0; x < N; x++) dots[x] = dot(a[x], b[x], M);
        #pragma acc serial
        {
            sums(a, out, N, M);
        }
    }
    double s = 0;
    for (int i = 0; i < N; i++) s += out[i] * (i + 1) + dots[i];
    printf("routines: %.6f\n", s);

    // `kernels`: the dependence test sees a[i][j] = a[i][j] + b[i][j] as independent.
    #pragma acc kernels copy(a[0:N][0:M]) copyin(b[0:N][0:M])
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) a[i][j] = a[i][j] + b[i][j];
    // ... and a[i][j] = a[i-1][j] as a dependence along i (that loop runs sequentially).
    #pragma acc kernels copy(a[0:N][0:M])
    for (int i = 1; i < N; i++)
        for (int j = 0; j < M; j++) a[i][j] = a[i - 1][j] * 0.5 + a[i][j];
    double t = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) t += a[i][j] * (j + 1);
    printf("kernels: %.6f\n", t);

    // Atomic updates of a histogram with one row per bin group.
    #pragma acc parallel loop collapse(2) copy(h[0:N][0:4]) copyin(a[0:N][0:M])
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            int bin = ((int)a[i][j] % 4 + 4) % 4;
            #pragma acc atomic update
            h[(i + j) % N][bin] += 1;
        }
    int counted = 0;
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 4; k++) counted += (int)h[i][k] * (k + 1);
    printf("histogram: %d\n", counted);

    for (int i = 0; i < N; i++) {
        free(a[i]);
        free(b[i]);
        free(h[i]);
    }
    free(a);
    free(b);
    free(h);
    return 0;
}
