/* 1-D diffusion, the MESI-CUDA paper's first benchmark, in the MESI-CUDA dialect: a kernel over
 * shared variables and no memory code. diffusion.c is the same program in plain C.
 *
 *   yosegi run examples/mesi/diffusion.cu -- [steps]      (size: -DN=..., default 65536)
 *
 * Each step computes every interior point from its neighbours (a halo of one on each side),
 * swapping the two arrays; the host reads the result once at the end. */
// yosegi-test: cflags=-DN=4096
// yosegi-test: args=20
// yosegi-test: rtol=1e-5
// yosegi-test: ignore-lines=time:
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef N
#define N 65536
#endif
#define BLOCK 256

__global__ float u[N], un[N];

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
    double t0 = wall_seconds();
    int blocks = (N - 2 + BLOCK - 1) / BLOCK;
    for (int s = 0; s < steps; s += 2) {
        diffuse<<<blocks, BLOCK>>>(un, u, N, 0.25f);
        diffuse<<<blocks, BLOCK>>>(u, un, N, 0.25f);
    }
    double sum = 0.0, moment = 0.0;
    for (int i = 0; i < N; i++) {
        sum += u[i];
        moment += u[i] * ((double)i / N);
    }
    double t1 = wall_seconds();
    printf("diffusion N=%d steps=%d sum=%.6f moment=%.6f mid=%.6f\n", N, steps, sum, moment, u[N / 2]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
