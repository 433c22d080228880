/* The MESI-CUDA paper's worked example (its Fig. 19): `c[id] += a[k] * b[id + k*N]`, one launch
 * per row of the shared matrices, each launch given pointers into them. Every thread of a
 * block reads the same `a[k]`: the staged variant reads it from shared memory. matvec.c is the
 * same program in plain C.
 *
 *   yosegi run examples/mesi/matvec.cu                    (size: -DN=..., default 1024) */
// yosegi-test: cflags=-DN=128
// yosegi-test: ignore-lines=time:
#include <stdio.h>
#include "timer.h"

#ifndef N
#define N 1024
#endif
#define BLOCKx 128

__global__ int a[N][N], b[N][N], c[N][N];

__global__ void product_row(int *a, int *b, int *c)
{
    int id = blockDim.x * blockIdx.x + threadIdx.x;
    int k;
    c[id] = 0;
    for (k = 0; k < N; k++)
        c[id] += a[k] * b[id + (k * N)];
}

void init_array(int d[N][N], int seed)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            d[i][j] = (i * 7 + j * 13 + seed) % 17 - 8;
}

int main(void)
{
    init_array(a, 1);
    init_array(b, 5);
    double t0 = wall_seconds();
    for (int i = 0; i < N; i++)
        product_row<<<N / BLOCKx, BLOCKx>>>(&a[i][0], &b[0][0], &c[i][0]);
    long trace = 0, sum = 0;
    for (int i = 0; i < N; i++) {
        trace += c[i][i];
        for (int j = 0; j < N; j++)
            sum += (long)c[i][j] * ((i + j) % 5);
    }
    double t1 = wall_seconds();
    printf("matvec N=%d trace=%ld weighted=%ld c[1][2]=%d\n", N, trace, sum, c[1][2]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
