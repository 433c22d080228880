// Pointers into device arrays inside kernels: pointer locals, arithmetic, comparisons,
// NULL tests, pointers to rows, walking a row with `p++`, `*p++ = v`, differences.
#include <stdio.h>
#include <stdlib.h>

#define N 96
#define M 8

int main(void) {
    double *a = malloc(sizeof(double) * N * M);
    double *out = malloc(sizeof(double) * N);
    double *rowsum = malloc(sizeof(double) * N * M);
    double grid[N][M];
    long dist[N];
    int found[N];
    for (int i = 0; i < N * M; i++) a[i] = (i % 13) * 0.5 - 2.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) grid[i][j] = i * 0.25 + j;

    #pragma acc parallel loop copyin(a[0:N*M], grid) copyout(out[0:N], rowsum[0:N*M], dist[0:N], found[0:N])
    for (int k = 0; k < N; k++) {
        const double *row = &a[M * k];
        const double *end = row + M;
        double s = 0.0;
        for (const double *p = row; p < end; p++) s += *p;
        /* the largest element's position, found through a pointer that starts as NULL */
        const double *best = NULL;
        for (int j = 0; j < M; j++)
            if (best == NULL || row[j] > *best) best = &row[j];
        dist[k] = best - row;
        /* a row of a 2-D array, and the same row seen flat */
        double *g = grid[k];
        double t = g[0] + g[M - 1] + *(g + 2);
        const double *flat = (const double *) grid;
        t += flat[k * M + 1];
        /* writes through a pointer, `*q++ = v` */
        double *q = &rowsum[M * k];
        double run = 0.0;
        for (int j = 0; j < M; j++) {
            run += row[j];
            *q++ = run;
        }
        found[k] = (q == &rowsum[M * k + M]) + 2 * (best != NULL) + 4 * (!best);
        const double *pick = (k % 2) ? row : row + 1;
        out[k] = s + t + *pick;
    }

    double total = 0.0, rs = 0.0;
    long dsum = 0, fsum = 0;
    for (int k = 0; k < N; k++) {
        total += out[k];
        dsum += dist[k] * (k + 1);
        fsum += found[k];
    }
    for (int i = 0; i < N * M; i++) rs += rowsum[i] * (i % 7);
    printf("total %.6f rowsum %.6f dist %ld found %ld\n", total, rs, dsum, fsum);
    free(a);
    free(out);
    free(rowsum);
    return 0;
}
