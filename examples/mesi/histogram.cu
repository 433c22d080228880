/* A histogram, the MESI-CUDA paper's second benchmark, in the MESI-CUDA dialect: one thread per
 * bin counts the values equal to its bin. Every thread of a block reads every element of
 * `data`, the reuse the paper stages with data swapping (the array in shared-memory strips).
 * histogram.c is the same program in plain C.
 *
 *   yosegi run examples/mesi/histogram.cu -- [repeats]    (sizes: -DLEN=... -DBINS=...) */
// yosegi-test: cflags=-DLEN=3000 -DBINS=300
// yosegi-test: args=3
// yosegi-test: ignore-lines=time:
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef LEN
#define LEN 25600
#endif
#ifndef BINS
#define BINS 2048
#endif
#define BLOCK 256

__global__ int data[LEN];
__global__ int hist[BINS];

__global__ void histogram(int len, int bins)
{
    int bin = blockIdx.x * blockDim.x + threadIdx.x;
    if (bin < bins) {
        int count = 0;
        for (int i = 0; i < len; i++)
            count += data[i] == bin;
        hist[bin] = count;
    }
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 100;
    unsigned int seed = 12345u;
    for (int i = 0; i < LEN; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = (int)((seed >> 8) % BINS);
    }
    double t0 = wall_seconds();
    long total = 0;
    for (int r = 0; r < repeats; r++) {
        data[r % LEN] = (data[r % LEN] + 1) % BINS;   /* the host changes one element per round */
        histogram<<<(BINS + BLOCK - 1) / BLOCK, BLOCK>>>(LEN, BINS);
        total += hist[r % BINS];
    }
    double t1 = wall_seconds();
    long check = 0;
    for (int b = 0; b < BINS; b++)
        check += (long)hist[b] * (b + 1);
    printf("histogram LEN=%d BINS=%d total=%ld check=%ld first=%d last=%d\n", LEN, BINS, total, check, hist[0], hist[BINS - 1]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
