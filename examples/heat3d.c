/*
 * 3-D heat equation, 7-point explicit stencil in double precision: u_t = alpha (u_xx + u_yy + u_zz)
 * on an N x N x N grid with fixed (zero) faces and a hot cube in the middle. All time steps run
 * inside one OpenACC data region; the two arrays are swapped by pointer, so each step is one
 * kernel that reads u and writes un (16 bytes and 9 flops per interior point).
 *
 *   yosegi run examples/heat3d.c                 (N = 32, 20 steps)
 *   yosegi run examples/heat3d.c -- 512 100
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
    int n = argc > 1 ? atoi(argv[1]) : 32;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    /* (i * n + j) * n + k must fit in an int. */
    if (n < 3 || n > 1024 || steps < 1) {
        fprintf(stderr, "usage: heat3d [3 <= N <= 1024] [STEPS >= 1]\n");
        return 1;
    }
    int total = n * n * n;
    int plane = n * n;
    double h = 1.0 / (n - 1);
    /* r = alpha dt / h^2; the explicit scheme is stable for r <= 1/6. */
    double r = 0.125;
    double *u = malloc((size_t)total * sizeof(double));
    double *un = malloc((size_t)total * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                int inside = i > n / 4 && i < 3 * n / 4 && j > n / 4 && j < 3 * n / 4 && k > n / 4 && k < 3 * n / 4;
                int c = (i * n + j) * n + k;
                u[c] = inside ? 1.0 : 0.0;
                un[c] = u[c];
            }

    double t0 = now();
    #pragma acc data copy(u[0:total]) copyin(un[0:total])
    {
        for (int s = 0; s < steps; s++) {
            #pragma acc parallel loop collapse(2) present(u[0:total], un[0:total])
            for (int i = 1; i < n - 1; i++)
                for (int j = 1; j < n - 1; j++) {
                    #pragma acc loop vector
                    for (int k = 1; k < n - 1; k++) {
                        int c = (i * n + j) * n + k;
                        un[c] = u[c] + r * (u[c - plane] + u[c + plane] + u[c - n] + u[c + n] + u[c - 1] + u[c + 1]
                                            - 6.0 * u[c]);
                    }
                }
            double *tmp = u;
            u = un;
            un = tmp;
        }
    }
    double elapsed = now() - t0;

    double heat = 0.0;
    for (int c = 0; c < total; c++) heat += u[c];
    heat *= h * h * h;
    printf("heat3d: %d^3 points, %d steps\n", n, steps);
    printf("heat: %.12e, center: %.12e\n", heat, u[(n / 2 * n + n / 2) * n + n / 2]);
    printf("time: %f s, %.1f M point-updates/s\n", elapsed,
           elapsed > 0.0 ? (double)(n - 2) * (n - 2) * (n - 2) * steps / elapsed * 1.0e-6 : 0.0);
    free(u);
    free(un);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=16 4
// yosegi-test: ignore-lines=time:
