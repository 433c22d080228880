/* Hand-written CUDA twin of examples/mesi/histogram.cu (one thread per bin), with its memory
 * code: the data copied in once, then per round the one element the host changed, and the
 * histogram copied back each round (the host reads one bin of it). The baseline of
 * bench/mesi.sh: build with `nvcc -O3 -DLEN=... -DBINS=...`. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#ifndef LEN
#define LEN 25600
#endif
#ifndef BINS
#define BINS 2048
#endif
#define BLOCK 256

static int data[LEN];
static int hist[BINS];

static double wall_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, 0);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

__global__ void histogram(const int *data, int *hist, int len, int bins)
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
    int *d_data, *d_hist;
    cudaMalloc((void **)&d_data, sizeof data);
    cudaMalloc((void **)&d_hist, sizeof hist);
    cudaDeviceSynchronize();
    size_t in = 0, out = 0;
    double t0 = wall_seconds();
    cudaMemcpy(d_data, data, sizeof data, cudaMemcpyHostToDevice);
    in += sizeof data;
    long total = 0;
    for (int r = 0; r < repeats; r++) {
        int k = r % LEN;
        data[k] = (data[k] + 1) % BINS;
        cudaMemcpy(d_data + k, data + k, sizeof(int), cudaMemcpyHostToDevice);
        in += sizeof(int);
        histogram<<<(BINS + BLOCK - 1) / BLOCK, BLOCK>>>(d_data, d_hist, LEN, BINS);
        cudaMemcpy(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost);
        out += sizeof hist;
        total += hist[r % BINS];
    }
    double t1 = wall_seconds();
    long check = 0;
    for (int b = 0; b < BINS; b++)
        check += (long)hist[b] * (b + 1);
    printf("histogram LEN=%d BINS=%d total=%ld check=%ld first=%d last=%d\n", LEN, BINS, total, check, hist[0], hist[BINS - 1]);
    printf("time: %.6f s\n", t1 - t0);
    printf("bytes: %zu to the device, %zu back\n", in, out);
    cudaFree(d_data);
    cudaFree(d_hist);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
