/* The plain C twin of histogram.cu. */
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef LEN
#define LEN 25600
#endif
#ifndef BINS
#define BINS 2048
#endif

int data[LEN];
int hist[BINS];

static void histogram(int len, int bins)
{
    for (int bin = 0; bin < bins; bin++) {
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
        data[r % LEN] = (data[r % LEN] + 1) % BINS;
        histogram(LEN, BINS);
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
