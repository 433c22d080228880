/* The MESI-CUDA dialect's forms, each checked against forms.c (the same computations in plain
 * C): bounds tests folded into the launch and not, early returns, the built-in variables
 * alone, a grid-stride loop, a device function, a prototype before the definition, atomics
 * and their captures, `warpSize`, and launches with `dim3` and integer shapes. */
#include <stdio.h>

#define N 1000
#define B 128

__global__ int a[N], b[N], c[N];
__global__ float x[N], y[N];
__global__ int limit;
__global__ int counters[4];
__global__ int slots[N];
__global__ int grid2[40][50];

__device__ float scale(float v, float s)
{
    return v * s + 1.0f;
}

__global__ void prototyped(int n, float s);

/* Folded: `if (i < n)` after a side-effect-free declaration. */
__global__ void fill(int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = i * 3 % 17;
        b[i] = threadIdx.x + 1000 * blockIdx.x;
    }
}

/* Not folded: the bound is a shared variable the host may have changed. */
__global__ void below_limit(void)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < limit)
        c[i] = a[i] + b[i];
}

/* Folded early return with a disjunction, and an offset index. */
__global__ void shifted(int n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x + 2;
    if (i >= n || i <= 2)
        return;
    c[i] += a[i - 2] - a[i - 1];
}

/* Not folded: unsigned index (its comparison wraps differently). */
__global__ void unsigned_index(unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = b[i] - (int)(i % 7);
}

/* A grid-stride loop over more elements than threads. */
__global__ void strided(int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = (float)(a[i] - b[i % 100]) * 0.5f;
}

__global__ void prototyped(int n, float s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    y[i] = scale(x[i], s);
}

/* Atomics: update, extremum, capture, exchange; warpSize. */
__global__ void atomics(int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&counters[0], a[i]);
        atomicMax(&counters[1], b[i] % 997);
        atomicSub(&counters[2], 1);
        if (i % warpSize == 0) {
            int slot;
            slot = atomicAdd(&counters[3], 1);
            slots[i] = slot >= 0;
        }
    }
}

/* A 2-D launch folded along both axes. */
__global__ void plane(int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols)
        grid2[row][col] = row * 100 + col;
}

int main(void)
{
    limit = N / 2;
    fill<<<(N + B - 1) / B, B>>>(N);
    below_limit<<<(N + B - 1) / B, B>>>();
    limit = N;
    below_limit<<<(N + B - 1) / B, B>>>();
    shifted<<<(N + B - 1) / B, B>>>(N);
    unsigned_index<<<(N + B - 1) / B, B>>>(N);
    strided<<<2, 64>>>(N);
    dim3 threads(B);
    prototyped<<<(N + B - 1) / B, threads>>>(N, 0.25f);
    atomics<<<(N + B - 1) / B, B>>>(N);
    dim3 block2(16, 8), shape2((50 + 15) / 16, (40 + 7) / 8);
    plane<<<shape2, block2>>>(40, 50);
    long sum = 0;
    double fsum = 0.0;
    int claimed = 0;
    for (int i = 0; i < N; i++) {
        sum += (long)a[i] * 3 + (long)b[i] * 5 + (long)c[i] * 7;
        fsum += x[i] + 2.0 * y[i];
        claimed += slots[i];
    }
    long plane_sum = 0;
    for (int r = 0; r < 40; r++)
        for (int q = 0; q < 50; q++)
            plane_sum += grid2[r][q] % 97;
    printf("sum=%ld fsum=%.4f counters=%d %d %d %d claimed=%d plane=%ld\n", sum, fsum, counters[0], counters[1], counters[2],
           counters[3], claimed, plane_sum);
    return 0;
}
