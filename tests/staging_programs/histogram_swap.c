/* A histogram in the seed's data-swapping form (section 000): each thread owns one bin and scans
 * all LEN data elements. LEN ints (36000 bytes) exceed the 28 KiB a block may stage, so a staged
 * variant must strip-mine the scan and reload its tile each strip. */
#include <stdio.h>

#define BINS 256
#define LEN 9000

static int data[LEN];
static int hist[BINS];

void histogram(void) {
    #pragma acc parallel loop copyin(data) copyout(hist)
    for (int b = 0; b < BINS; b++) {
        int count = 0;
        for (int k = 0; k < LEN; k++) count += data[k] == b;
        hist[b] = count;
    }
}

int main(void) {
    unsigned x = 12345u;
    for (int k = 0; k < LEN; k++) {
        x = x * 1103515245u + 12345u;
        data[k] = (int)((x >> 8) % BINS);
    }
    histogram();
    long total = 0, weighted = 0;
    for (int b = 0; b < BINS; b++) {
        total += hist[b];
        weighted += (long)hist[b] * b;
    }
    printf("histogram: total %ld weighted %ld hist[0] %d hist[200] %d\n", total, weighted, hist[0], hist[200]);
    return 0;
}
