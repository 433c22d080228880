/* The plain C twin of diffusion.cu: the same computation, sequential; what the dialect's
 * output is checked against. */
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef N
#define N 65536
#endif

float u[N], un[N];

static void diffuse(float *dst, const float *src, int n, float r)
{
    for (int i = 1; i < n - 1; i++)
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
    for (int s = 0; s < steps; s += 2) {
        diffuse(un, u, N, 0.25f);
        diffuse(u, un, N, 0.25f);
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
