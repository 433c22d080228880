// Data clauses that name arrays without sections, as PolyBench-ACC writes them: a parameter
// declared `double A[N][M]` takes its declared extent (constant and variable-length), and a
// plain pointer the extent of its allocation (malloc, calloc, posix_memalign, aligned_alloc).
#include <stdio.h>
#include <stdlib.h>
#define N 40
#define M 24

static void scale(double A[N][M], double f) {
    #pragma acc parallel loop copy(A)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) A[i][j] *= f;
}

static void shift(int n, int m, double B[n][m], double *restrict d) {
    #pragma acc parallel loop copy(B) copyin(d)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) B[i][j] += d[j];
}

int main(void) {
    double (*A)[M];
    if (posix_memalign((void **)&A, 64, sizeof(double) * N * M) != 0) return 3;
    double *d = aligned_alloc(64, sizeof(double) * 64);
    double *e = calloc(N, sizeof(double));
    double *f = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < M; j++) A[i][j] = i - 0.5 * j;
        e[i] = i * 0.25;
    }
    for (int j = 0; j < 64; j++) d[j] = j * 0.125;
    scale(A, 1.5);
    shift(N, M, A, d);
    #pragma acc parallel loop copyin(e) copyout(f)
    for (int i = 0; i < N; i++) f[i] = 2 * e[i] + 1;
    double t = 0;
    for (int i = 0; i < N; i++) {
        t += f[i];
        for (int j = 0; j < M; j++) t += A[i][j] * (j + 1);
    }
    printf("%.4f\n", t);
    free(A);
    free(d);
    free(e);
    free(f);
    return 0;
}
