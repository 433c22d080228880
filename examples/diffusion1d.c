/*
 * 1-D heat equation, explicit finite differences: u_t = alpha u_xx on [0, 1] with fixed ends.
 * All time steps run inside one OpenACC data region; the two arrays are swapped by pointer.
 *
 *   yosegi run examples/diffusion1d.c                 (N = 20000 points, 400 steps)
 *   yosegi run examples/diffusion1d.c -- 1000000 2000
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int steps = argc > 2 ? atoi(argv[2]) : 400;
    if (n < 3 || steps < 1) {
        fprintf(stderr, "usage: diffusion1d [N >= 3] [STEPS >= 1]\n");
        return 1;
    }
    double dx = 1.0 / (n - 1);
    double alpha = 1.0;
    double dt = 0.4 * dx * dx / alpha; /* below the stability limit 0.5 dx^2 / alpha */
    double r = alpha * dt / (dx * dx);
    double *u = malloc(n * sizeof(double));
    double *un = malloc(n * sizeof(double));
    /* A hot block in the middle, cold ends. */
    for (int i = 0; i < n; i++) u[i] = (i > n / 3 && i < 2 * n / 3) ? 1.0 : 0.0;
    u[0] = u[n - 1] = 0.0;
    un[0] = un[n - 1] = 0.0;

    double t0 = now();
    #pragma acc data copy(u[0:n]) copyin(un[0:n])
    {
        for (int s = 0; s < steps; s++) {
            #pragma acc parallel loop present(u[0:n], un[0:n])
            for (int i = 1; i < n - 1; i++) un[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
            double *tmp = u;
            u = un;
            un = tmp;
        }
    }
    double elapsed = now() - t0;

    double heat = 0.0;
    for (int i = 0; i < n; i++) heat += u[i] * dx;
    printf("diffusion1d: %d points, %d steps, dt %e\n", n, steps, dt);
    printf("heat: %.10f, u(1/3): %.10f\n", heat, u[n / 3]);
    printf("time: %f s, %.1f M point-updates/s\n", elapsed, elapsed > 0.0 ? (double)(n - 2) * steps / elapsed * 1.0e-6 : 0.0);
    free(u);
    free(un);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=2000 20
// yosegi-test: ignore-lines=time:
