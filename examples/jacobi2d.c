/*
 * 2-D Jacobi iteration for Laplace's equation on an N x N grid, stopping when the largest
 * change of one sweep drops below a tolerance (OpenACC, reduction(max:err)).
 *
 *   yosegi run examples/jacobi2d.c              (128 x 128, at most 500 sweeps)
 *   yosegi run examples/jacobi2d.c -- 1024 1000 (N and the sweep limit from the command line)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 128;
    int iter_max = argc > 2 ? atoi(argv[2]) : 500;
    if (n < 3 || iter_max < 1) {
        fprintf(stderr, "usage: jacobi2d [N >= 3] [MAX_SWEEPS >= 1]\n");
        return 1;
    }
    const double tol = 1.0e-6;
    double (*A)[n] = malloc(sizeof(double[n][n]));
    double (*Anew)[n] = malloc(sizeof(double[n][n]));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            A[j][i] = 0.0;
            Anew[j][i] = 0.0;
        }
    /* Fixed boundary: the top edge is hot, a sine profile on the left edge. */
    for (int i = 0; i < n; i++) {
        A[0][i] = Anew[0][i] = 1.0;
        A[i][0] = Anew[i][0] = sin(3.141592653589793 * i / (n - 1));
    }

    printf("Jacobi relaxation: %d x %d mesh, tolerance %g, at most %d sweeps\n", n, n, tol, iter_max);
    double t0 = now();
    double err = 1.0;
    int iter = 0;
    #pragma acc data copy(A[0:n][0:n]) create(Anew[0:n][0:n])
    while (err > tol && iter < iter_max) {
        err = 0.0;
        #pragma acc parallel loop reduction(max:err)
        for (int j = 1; j < n - 1; j++) {
            #pragma acc loop reduction(max:err)
            for (int i = 1; i < n - 1; i++) {
                Anew[j][i] = 0.25 * (A[j][i + 1] + A[j][i - 1] + A[j - 1][i] + A[j + 1][i]);
                err = fmax(err, fabs(Anew[j][i] - A[j][i]));
            }
        }
        #pragma acc parallel loop
        for (int j = 1; j < n - 1; j++) {
            #pragma acc loop
            for (int i = 1; i < n - 1; i++) A[j][i] = Anew[j][i];
        }
        if (iter % 100 == 0) printf("%5d, %0.6f\n", iter, err);
        iter++;
    }
    double elapsed = now() - t0;
    printf("sweeps: %d, final error: %e, center value: %f\n", iter, err, A[n / 2][n / 2]);
    printf("total: %f s\n", elapsed);
    free(A);
    free(Anew);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=48 60
// yosegi-test: ignore-lines=total:
