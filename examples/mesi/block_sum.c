/* The plain C twin of block_sum.cu. */
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef N
#define N (1 << 24)
#endif
#define BLOCK 256
#define BLOCKS ((N + BLOCK - 1) / BLOCK)

int values[N];
long long block_sums[BLOCKS];

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    for (int i = 0; i < N; i++)
        values[i] = (i * 37) % 1001 - 500;
    double t0 = wall_seconds();
    long long check = 0;
    for (int r = 0; r < rounds; r++) {
        values[r] += 1000;
        for (int b = 0; b < BLOCKS; b++) {
            long long s = 0;
            for (int i = b * BLOCK; i < (b + 1) * BLOCK && i < N; i++)
                s += values[i];
            block_sums[b] = s;
        }
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
