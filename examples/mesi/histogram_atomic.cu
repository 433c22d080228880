/* A histogram with one thread per value and an atomic increment of its bin (the usual CUDA
 * form), in the MESI-CUDA dialect; histogram_atomic.c is the plain C twin. The host refills
 * a part of the data between launches, so only that part moves to the device.
 *
 *   yosegi run examples/mesi/histogram_atomic.cu -- [rounds]   (sizes: -DLEN=... -DBINS=...) */
// yosegi-test: cflags=-DLEN=5000 -DBINS=64
// yosegi-test: args=4
// yosegi-test: ignore-lines=time:
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef LEN
#define LEN (1 << 22)
#endif
#ifndef BINS
#define BINS 256
#endif
#define BLOCK 256

__global__ unsigned int values[LEN];
__global__ int hist[BINS];
__global__ int largest[1];

__global__ void clear(int bins)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= bins)
        return;
    hist[b] = 0;
}

__global__ void count(int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) {
        int bin = values[i] % BINS;
        atomicAdd(&hist[bin], 1);
        atomicMax(&largest[0], (int)(values[i] >> 4));
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    unsigned int seed = 7u;
    for (int i = 0; i < LEN; i++) {
        seed = seed * 1664525u + 1013904223u;
        values[i] = seed >> 6;
    }
    double t0 = wall_seconds();
    long check = 0;
    for (int r = 0; r < rounds; r++) {
        int first = (r % 16) * (LEN / 16);
        for (int i = first; i < first + LEN / 16; i++)
            values[i] ^= 0x5a5u;
        clear<<<(BINS + BLOCK - 1) / BLOCK, BLOCK>>>(BINS);
        count<<<(LEN + BLOCK - 1) / BLOCK, BLOCK>>>(LEN);
        for (int b = 0; b < BINS; b++)
            check += (long)hist[b] * (b % 7 + 1);
    }
    double t1 = wall_seconds();
    printf("histogram_atomic LEN=%d BINS=%d check=%ld hist[3]=%d largest=%d\n", LEN, BINS, check, hist[3], largest[0]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
