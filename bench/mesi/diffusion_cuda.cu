/* Hand-written CUDA twin of examples/mesi/diffusion.cu: the same kernel and steps, with the
 * memory code a CUDA programmer writes (cudaMalloc, cudaMemcpy both ways, cudaFree). The
 * baseline of bench/mesi.sh: build with `nvcc -O3 -DN=...`. Prints the same result line, the
 * time of the same section (first copy in to the checksum after the copy back) and the bytes
 * it copied. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#ifndef N
#define N 65536
#endif
#define BLOCK 256

static float u[N], un[N];

static double wall_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, 0);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

__global__ void diffuse(float *dst, const float *src, int n, float r)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i < n - 1)
        dst[i] = src[i] + r * (src[i - 1] - 2.0f * src[i] + src[i + 1]);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 1000;
    for (int i = 0; i < N; i++)
        u[i] = (i > N / 4 && i < N / 2) ? 1.0f : 0.0f;
    un[0] = u[0];
    un[N - 1] = u[N - 1];
    float *d_u, *d_un;
    cudaMalloc((void **)&d_u, sizeof u);
    cudaMalloc((void **)&d_un, sizeof un);
    cudaDeviceSynchronize();
    double t0 = wall_seconds();
    cudaMemcpy(d_u, u, sizeof u, cudaMemcpyHostToDevice);
    cudaMemcpy(d_un, un, sizeof un, cudaMemcpyHostToDevice);
    int blocks = (N - 2 + BLOCK - 1) / BLOCK;
    for (int s = 0; s < steps; s += 2) {
        diffuse<<<blocks, BLOCK>>>(d_un, d_u, N, 0.25f);
        diffuse<<<blocks, BLOCK>>>(d_u, d_un, N, 0.25f);
    }
    cudaMemcpy(u, d_u, sizeof u, cudaMemcpyDeviceToHost);
    double sum = 0.0, moment = 0.0;
    for (int i = 0; i < N; i++) {
        sum += u[i];
        moment += u[i] * ((double)i / N);
    }
    double t1 = wall_seconds();
    printf("diffusion N=%d steps=%d sum=%.6f moment=%.6f mid=%.6f\n", N, steps, sum, moment, u[N / 2]);
    printf("time: %.6f s\n", t1 - t0);
    printf("bytes: %zu to the device, %zu back\n", 2 * sizeof u, sizeof u);
    cudaFree(d_u);
    cudaFree(d_un);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
