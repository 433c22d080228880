/*
 * 3-D heat equation, explicit, seven-point stencil (PolyBench's heat-3d form: B from A, then A
 * from B), a fixed number of steps: each step loop's body is one compute region, so Yosegi may
 * run several steps in one kernel (fusion across time steps). `run` is called twice: a short
 * warm-up (kernels loaded, the runtime's first-launch measurements), then the timed run.
 *
 *   yosegi run bench/fusion/heat3d_steps.c -- N STEPS      (default 256 100)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

static void run(int n, double (*restrict A)[n][n], double (*restrict B)[n][n], int steps) {
    #pragma acc data present(A[0:n][0:n][0:n], B[0:n][0:n][0:n])
    for (int t = 0; t < steps; t++) {
        #pragma acc parallel loop collapse(3)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                for (int k = 1; k < n - 1; k++)
                    B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                               + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                               + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1]) + A[i][j][k];
        #pragma acc parallel loop collapse(3)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                for (int k = 1; k < n - 1; k++)
                    A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                               + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                               + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1]) + B[i][j][k];
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 256;
    int steps = argc > 2 ? atoi(argv[2]) : 100;
    double (*A)[n][n] = malloc(sizeof(double[n][n][n]));
    double (*B)[n][n] = malloc(sizeof(double[n][n][n]));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                A[i][j][k] = B[i][j][k] = (double)(i + j + (n - k)) * 10 / n;
    double elapsed;
    #pragma acc data copy(A[0:n][0:n][0:n], B[0:n][0:n][0:n])
    {
        run(n, A, B, 100);
        #pragma acc wait
        double t0 = now();
        run(n, A, B, steps);
        #pragma acc wait
        elapsed = now() - t0;
    }
    double sa = 0.0, sb = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                sa += A[i][j][k] * (1 + (i + j + k) % 3);
                sb += B[i][j][k];
            }
    printf("Heat 3-D %d^3, %d + 100 steps\n", n, steps);
    printf("checksums %.10e %.10e %.10e\n", sa, sb, A[n / 2][n / 3][n / 4]);
    printf("time: %.6f s\n", elapsed);
    return 0;
}
