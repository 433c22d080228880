/*
 * 2-D Jacobi in PolyBench's form (B from A's five-point stencil, then A copied back from B), a
 * fixed number of steps: the body of the step loop is one compute region, so Yosegi may run
 * several steps in one kernel (fusion across time steps). `run` is called twice: a short
 * warm-up (kernels loaded, the runtime's first-launch measurements), then the timed run.
 *
 *   yosegi run bench/fusion/jacobi2d_steps.c -- N STEPS      (default 4096 100)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

static void run(int n, double (*restrict A)[n], double (*restrict B)[n], int steps) {
    #pragma acc data present(A[0:n][0:n], B[0:n][0:n])
    for (int t = 0; t < steps; t++) {
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = B[i][j];
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int steps = argc > 2 ? atoi(argv[2]) : 100;
    double (*A)[n] = malloc(sizeof(double[n][n]));
    double (*B)[n] = malloc(sizeof(double[n][n]));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            A[i][j] = ((double)i * (j + 2) + 2) / n;
            B[i][j] = ((double)i * (j + 3) + 3) / n;
        }
    double elapsed;
    #pragma acc data copy(A[0:n][0:n], B[0:n][0:n])
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
        for (int j = 0; j < n; j++) {
            sa += A[i][j] * (1 + (i + j) % 3);
            sb += B[i][j];
        }
    printf("Jacobi 2-D %d x %d, %d + 100 steps\n", n, n, steps);
    printf("checksums %.10e %.10e %.10e\n", sa, sb, A[n / 2][n / 3]);
    printf("time: %.6f s\n", elapsed);
    return 0;
}
