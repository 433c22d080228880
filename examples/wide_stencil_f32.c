/*
 * A 1-D radius-8 stencil in single precision with its coefficients as products: the form of
 * the high-order finite-difference operators of wave and seismic codes (16th order here).
 * Every element of u is read by 17 threads, and a warp's 17 loads are 32 consecutive floats at
 * 17 offsets: most of them straddle two 128-byte lines, which an L1 cache serves as two
 * requests and a shared-memory tile as one. This is the wide-stencil case where staging u in
 * shared memory pays on a GPU with a large L1; examples/diffusion_wide.c (doubles, a division
 * per distance) is bound by DRAM and by FP64 division instead.
 *
 *   yosegi run examples/wide_stencil_f32.c                   (N = 16777216 points, 200 steps)
 *   yosegi run examples/wide_stencil_f32.c -- 65536 1000
 *   yosegi run --staging off examples/wide_stencil_f32.c     (global memory only, to compare)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#define R 8

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 16777216;
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    if (n < 2 * R + 1 || steps < 1) {
        fprintf(stderr, "usage: wide_stencil_f32 [N >= 17] [STEPS >= 1]\n");
        return 1;
    }
    /* c_k = 1/k^2 scaled by r = 0.15: stable, since r * 4 * sum(1/k^2) < 1. */
    const float c1 = 0.15f, c2 = 0.0375f, c3 = 0.016666668f, c4 = 0.009375f;
    const float c5 = 0.006f, c6 = 0.004166667f, c7 = 0.0030612245f, c8 = 0.00234375f;
    const float c0 = -2.0f * (c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8);
    float *u = malloc(n * sizeof(float));
    float *un = malloc(n * sizeof(float));
    /* A rough field of values in [1, 2), so the benchmark never times a smooth or zero field. */
    for (int i = 0; i < n; i++) u[i] = 1.0f + (float)(((long long)i * i % 1000 * 7919 + 31LL * i) % 1000) / 1000.0f;
    for (int i = 0; i < n; i++) un[i] = u[i];

    double t0 = now();
    #pragma acc data copy(u[0:n]) copyin(un[0:n])
    {
        for (int s = 0; s < steps; s++) {
            #pragma acc parallel loop present(u[0:n], un[0:n])
            for (int i = R; i < n - R; i++)
                un[i] = u[i] + c0 * u[i]
                        + c1 * (u[i - 1] + u[i + 1]) + c2 * (u[i - 2] + u[i + 2])
                        + c3 * (u[i - 3] + u[i + 3]) + c4 * (u[i - 4] + u[i + 4])
                        + c5 * (u[i - 5] + u[i + 5]) + c6 * (u[i - 6] + u[i + 6])
                        + c7 * (u[i - 7] + u[i + 7]) + c8 * (u[i - 8] + u[i + 8]);
            float *tmp = u;
            u = un;
            un = tmp;
        }
    }
    double elapsed = now() - t0;

    double heat = 0.0;
    for (int i = 0; i < n; i++) heat += u[i];
    printf("wide_stencil_f32: %d points, radius %d, %d steps\n", n, R, steps);
    printf("heat: %.6f, u(1/3): %.6f\n", heat / n, u[n / 3]);
    printf("time: %f s, %.1f M point-updates/s\n", elapsed, elapsed > 0.0 ? (double)(n - 2 * R) * steps / elapsed * 1.0e-6 : 0.0);
    free(u);
    free(un);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=4096 5
// yosegi-test: rtol=1e-4
// yosegi-test: ignore-lines=time:
