// yosegi-test: rtol=0
// Integer histogram with atomic updates on bins; the samples come from an unsigned wraparound hash.
#include <stdio.h>

#define N 200000
#define NBINS 64

static unsigned int hash_u32(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static int bins[NBINS];
static unsigned int keys[N];

int main(void) {
    for (int b = 0; b < NBINS; b++) bins[b] = 0;
    /* The hash is computed inline in the kernel so that unsigned overflow happens on the device. */
    #pragma acc parallel loop copyout(keys)
    for (int i = 0; i < N; i++) {
        unsigned int x = (unsigned int)i * 2654435761U + 12345U;
        x ^= x >> 13;
        x *= 0x5bd1e995U;
        x ^= x >> 15;
        keys[i] = x;
    }
    #pragma acc parallel loop copyin(keys) copy(bins)
    for (int i = 0; i < N; i++) {
        int b = (int)(keys[i] % NBINS);
        #pragma acc atomic update
        bins[b] += 1;
    }
    unsigned int check = 0;
    for (int i = 0; i < N; i++) check = check * 31U + keys[i];
    int total = 0, maxb = 0, minb = N;
    for (int b = 0; b < NBINS; b++) {
        total += bins[b];
        if (bins[b] > maxb) maxb = bins[b];
        if (bins[b] < minb) minb = bins[b];
    }
    printf("total %d max %d min %d\n", total, maxb, minb);
    printf("bins %d %d %d %d %d\n", bins[0], bins[1], bins[17], bins[32], bins[63]);
    printf("check %u host_hash %u\n", check, hash_u32(check));
    return 0;
}
