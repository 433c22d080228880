/*
 * 1-D diffusion with a wide stencil (radius 8): each point relaxes toward its 16 neighbours,
 * weighted 1/k^2 at distance k. Every element of u is read by 17 threads, 8 of them on each
 * side, so a block's tile of u (block + 2 x 8 halo) is reused 17 times: the case the shared-
 * memory staging of the MESI-CUDA paper is about, with a halo wider than its examples.
 *
 *   yosegi run examples/diffusion_wide.c                    (N = 4194304 points, 500 steps)
 *   yosegi run examples/diffusion_wide.c -- 65536 1000
 *   yosegi run --staging off examples/diffusion_wide.c      (global memory only, to compare)
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
    int n = argc > 1 ? atoi(argv[1]) : 4194304;
    int steps = argc > 2 ? atoi(argv[2]) : 500;
    if (n < 2 * R + 1 || steps < 1) {
        fprintf(stderr, "usage: diffusion_wide [N >= 17] [STEPS >= 1]\n");
        return 1;
    }
    /* Stable: the operator's most negative eigenvalue is -4 * sum(1/k^2) > -6.2, and r * 6.2 < 1. */
    const double r = 0.15;
    double *u = malloc(n * sizeof(double));
    double *un = malloc(n * sizeof(double));
    /* A rough field of values in [1, 2) whose differences u[i-k] + u[i+k] - 2u[i] are never
       zero (7919*2k^2 is no multiple of 1000 for k <= 8): a double division with a zero
       dividend takes the GPU's slow path, and the benchmark would time that, not memory. */
    for (int i = 0; i < n; i++) u[i] = 1.0 + (double)(((long long)i * i % 1000 * 7919 + 31LL * i) % 1000) / 1000.0;
    for (int i = 0; i < n; i++) un[i] = u[i];

    double t0 = now();
    #pragma acc data copy(u[0:n]) copyin(un[0:n])
    {
        for (int s = 0; s < steps; s++) {
            #pragma acc parallel loop present(u[0:n], un[0:n])
            for (int i = R; i < n - R; i++)
                un[i] = u[i] + r * ((u[i - 1] + u[i + 1] - 2.0 * u[i])
                                    + (u[i - 2] + u[i + 2] - 2.0 * u[i]) / 4.0
                                    + (u[i - 3] + u[i + 3] - 2.0 * u[i]) / 9.0
                                    + (u[i - 4] + u[i + 4] - 2.0 * u[i]) / 16.0
                                    + (u[i - 5] + u[i + 5] - 2.0 * u[i]) / 25.0
                                    + (u[i - 6] + u[i + 6] - 2.0 * u[i]) / 36.0
                                    + (u[i - 7] + u[i + 7] - 2.0 * u[i]) / 49.0
                                    + (u[i - 8] + u[i + 8] - 2.0 * u[i]) / 64.0);
            double *tmp = u;
            u = un;
            un = tmp;
        }
    }
    double elapsed = now() - t0;

    double heat = 0.0;
    for (int i = 0; i < n; i++) heat += u[i];
    printf("diffusion_wide: %d points, radius %d, %d steps\n", n, R, steps);
    printf("heat: %.10f, u(1/3): %.10f\n", heat / n, u[n / 3]);
    printf("time: %f s, %.1f M point-updates/s\n", elapsed, elapsed > 0.0 ? (double)(n - 2 * R) * steps / elapsed * 1.0e-6 : 0.0);
    free(u);
    free(un);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=4096 5
// yosegi-test: ignore-lines=time:
