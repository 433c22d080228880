/*
 * The matrix-product kernel of the MESI-CUDA staging paper (Fig. 4 / Fig. 19): each thread owns
 * one element of c and accumulates c[id] += a[k] * b[id + k*N] over k. Every thread of a block
 * reads all of a, so a is the array worth staging in shared memory; b is read once per element
 * (column k of a row-major M x N matrix, coalesced along id).
 *
 *   yosegi run examples/matmul_vec.c                       (N = 65536, M = 1024, 10 repetitions)
 *   yosegi run examples/matmul_vec.c -- 1048576 4096 20    (N, M, repetitions)
 *   yosegi run --staging off examples/matmul_vec.c         (global memory only, to compare)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 65536;
    int m = argc > 2 ? atoi(argv[2]) : 1024;
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    if (n < 1 || m < 1 || reps < 1) {
        fprintf(stderr, "usage: matmul_vec [N >= 1] [M >= 1] [REPETITIONS >= 1]\n");
        return 1;
    }
    float *a = malloc((size_t)m * sizeof(float));
    float *b = malloc((size_t)m * (size_t)n * sizeof(float));
    float *c = malloc((size_t)n * sizeof(float));
    /* Small exact values: sums of products stay integers times 1/64 for moderate M. */
    for (int k = 0; k < m; k++) a[k] = (float)(k % 7) * 0.125f;
    for (long j = 0; j < (long)m * n; j++) b[j] = (float)(j % 11) * 0.125f;
    for (int i = 0; i < n; i++) c[i] = 0.0f;

    double t0 = now();
    #pragma acc data copyin(a[0:m], b[0:(long)m*n]) copy(c[0:n])
    {
        for (int r = 0; r < reps; r++) {
            #pragma acc parallel loop present(a[0:m], b[0:(long)m*n], c[0:n])
            for (int id = 0; id < n; id++)
                for (int k = 0; k < m; k++) c[id] += a[k] * b[id + (long)k * n];
        }
    }
    double elapsed = now() - t0;

    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += c[i];
    printf("matmul_vec: N %d, M %d, %d repetitions\n", n, m, reps);
    printf("c: sum %.6e, c[N/3] %.6e\n", sum, c[n / 3]);
    printf("time: %f s, %.2f GFLOP/s\n", elapsed, elapsed > 0.0 ? 2.0 * n * (double)m * reps / elapsed * 1.0e-9 : 0.0);
    free(a);
    free(b);
    free(c);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=512 64 2
// yosegi-test: ignore-lines=time:
