// bad input: a pointer to untracked memory (a local array passed as a pointer) read through an irregular index with no data clause giving its extent
#include <stdio.h>
static void gather(double *dst, const double *src, const int *idx, int n) {
#pragma acc parallel loop
    for (int i = 0; i < n; i++) dst[i] = src[idx[i]];
}

int main(void) {
    enum { N = 64 };
    double src[4 * N];
    double dst[N];
    int idx[N];
    for (int i = 0; i < 4 * N; i++) src[i] = i;
    for (int i = 0; i < N; i++) idx[i] = (i * 37) % (4 * N);
    gather(dst, src, idx, N);
    printf("%f\n", dst[3]);
    return 0;
}
