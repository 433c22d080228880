/* The plain C twin of histogram_atomic.cu. */
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef LEN
#define LEN (1 << 22)
#endif
#ifndef BINS
#define BINS 256
#endif

unsigned int values[LEN];
int hist[BINS];
int largest[1];

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
        for (int b = 0; b < BINS; b++)
            hist[b] = 0;
        for (int i = 0; i < LEN; i++) {
            hist[values[i] % BINS] += 1;
            int v = (int)(values[i] >> 4);
            if (v > largest[0])
                largest[0] = v;
        }
        for (int b = 0; b < BINS; b++)
            check += (long)hist[b] * (b % 7 + 1);
    }
    double t1 = wall_seconds();
    printf("histogram_atomic LEN=%d BINS=%d check=%ld hist[3]=%d largest=%d\n", LEN, BINS, check, hist[3], largest[0]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
