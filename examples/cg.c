/*
 * Unpreconditioned conjugate gradient on the 2-D Poisson matrix (5-point Laplacian, Dirichlet
 * boundary) of an M x M grid, stored in CSR and built on the host; right-hand side all ones.
 * Each iteration: an SpMV (gang loop over rows, `loop vector reduction` over a row's nonzeros),
 * a dot product, a fused x/r update with the r.r reduction, and the search-direction update.
 * With TOL = 0 it runs exactly MAX_ITERS iterations (what the benchmark uses).
 *
 *   yosegi run examples/cg.c                     (M = 64: 4096 rows, at most 100 iterations)
 *   yosegi run examples/cg.c -- 2048 200 0
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
    int m = argc > 1 ? atoi(argv[1]) : 64;
    int max_iters = argc > 2 ? atoi(argv[2]) : 100;
    double tol = argc > 3 ? atof(argv[3]) : 1.0e-8;
    /* 5 * m * m nonzeros must fit in an int. */
    if (m < 2 || m > 20000 || max_iters < 1 || tol < 0.0) {
        fprintf(stderr, "usage: cg [2 <= M <= 20000] [MAX_ITERS >= 1] [TOL >= 0]\n");
        return 1;
    }
    int n = m * m;
    int *rowptr = malloc((size_t)(n + 1) * sizeof(int));
    int *col = malloc((size_t)5 * n * sizeof(int));
    double *val = malloc((size_t)5 * n * sizeof(double));
    int nnz = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            int row = i * m + j;
            rowptr[row] = nnz;
            if (i > 0) { col[nnz] = row - m; val[nnz] = -1.0; nnz++; }
            if (j > 0) { col[nnz] = row - 1; val[nnz] = -1.0; nnz++; }
            col[nnz] = row; val[nnz] = 4.0; nnz++;
            if (j < m - 1) { col[nnz] = row + 1; val[nnz] = -1.0; nnz++; }
            if (i < m - 1) { col[nnz] = row + m; val[nnz] = -1.0; nnz++; }
        }
    rowptr[n] = nnz;

    double *x = malloc((size_t)n * sizeof(double));
    double *r = malloc((size_t)n * sizeof(double));
    double *p = malloc((size_t)n * sizeof(double));
    double *q = malloc((size_t)n * sizeof(double));
    /* x0 = 0, so r0 = b = 1 and p0 = r0. */
    for (int i = 0; i < n; i++) {
        x[i] = 0.0;
        r[i] = 1.0;
        p[i] = 1.0;
        q[i] = 0.0;
    }
    double rr = (double)n;
    double rnorm0 = sqrt(rr);

    int iters = 0;
    double t0 = now();
    #pragma acc data copyin(rowptr[0:n+1], col[0:nnz], val[0:nnz], r[0:n], p[0:n]) copy(x[0:n]) create(q[0:n])
    {
        while (iters < max_iters && sqrt(rr) > tol * rnorm0) {
            #pragma acc parallel loop gang present(rowptr[0:n+1], col[0:nnz], val[0:nnz], p[0:n], q[0:n])
            for (int row = 0; row < n; row++) {
                double sum = 0.0;
                int start = rowptr[row];
                int end = rowptr[row + 1];
                #pragma acc loop vector reduction(+:sum)
                for (int e = start; e < end; e++) sum += val[e] * p[col[e]];
                q[row] = sum;
            }
            double pq = 0.0;
            #pragma acc parallel loop reduction(+:pq) present(p[0:n], q[0:n])
            for (int i = 0; i < n; i++) pq += p[i] * q[i];
            double alpha = rr / pq;
            double rr_new = 0.0;
            #pragma acc parallel loop reduction(+:rr_new) present(x[0:n], r[0:n], p[0:n], q[0:n])
            for (int i = 0; i < n; i++) {
                x[i] += alpha * p[i];
                r[i] -= alpha * q[i];
                rr_new += r[i] * r[i];
            }
            double beta = rr_new / rr;
            rr = rr_new;
            #pragma acc parallel loop present(r[0:n], p[0:n])
            for (int i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
            iters++;
        }
    }
    double elapsed = now() - t0;

    double xsum = 0.0;
    for (int i = 0; i < n; i++) xsum += x[i];
    printf("cg: %d x %d grid, %d rows, %d nonzeros\n", m, m, n, nnz);
    printf("iterations: %d, residual: %.10e, relative: %.10e\n", iters, sqrt(rr), sqrt(rr) / rnorm0);
    printf("x sum: %.10e, x center: %.10e\n", xsum, x[(m / 2) * m + m / 2]);
    printf("time: %f s\n", elapsed);
    free(rowptr); free(col); free(val);
    free(x); free(r); free(p); free(q);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: args=32 20
// yosegi-test: ignore-lines=time:
