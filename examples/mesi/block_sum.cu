/* A sum in two stages, the usual CUDA way: each block adds its part of the data in a
 * `__shared__` array, halving the active threads between `__syncthreads()` barriers, and
 * the host adds the blocks' sums. A kernel whose threads work together like this runs as
 * written, on blocks of the launch's (constant) size. block_sum.c is the plain C twin.
 *
 *   yosegi run examples/mesi/block_sum.cu -- [rounds]     (size: -DN=..., default 1 << 24) */
// yosegi-test: cflags=-DN=20000
// yosegi-test: args=3
// yosegi-test: ignore-lines=time:
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef N
#define N (1 << 24)
#endif
#define BLOCK 256
#define BLOCKS ((N + BLOCK - 1) / BLOCK)

__global__ int values[N];
__global__ long long block_sums[BLOCKS];

__global__ void sum_blocks(int n)
{
    __shared__ long long part[BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? values[i] : 0;
    __syncthreads();
    for (int half = BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        block_sums[blockIdx.x] = part[0];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    for (int i = 0; i < N; i++)
        values[i] = (i * 37) % 1001 - 500;
    double t0 = wall_seconds();
    long long check = 0;
    for (int r = 0; r < rounds; r++) {
        values[r] += 1000;
        sum_blocks<<<BLOCKS, BLOCK>>>(N);
        long long total = 0;
        for (int b = 0; b < BLOCKS; b++)
            total += block_sums[b];
        check = check * 3 + total;
    }
    double t1 = wall_seconds();
    printf("block_sum N=%d check=%lld first=%lld last=%lld\n", N, check, block_sums[0], block_sums[BLOCKS - 1]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
