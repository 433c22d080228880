/* A small conjugate gradient on a tridiagonal matrix in CSR form (the -Minfo tests): an SpMV
 * with an inner reduction loop, dot products with reduction(+:), axpy updates, all inside a
 * data region around the iteration loop. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 1000, iters = 25;
    int nnz = 3 * n - 2;
    int *rowptr = malloc((n + 1) * sizeof(int));
    int *col = malloc(nnz * sizeof(int));
    double *val = malloc(nnz * sizeof(double));
    double *x = malloc(n * sizeof(double));
    double *r = malloc(n * sizeof(double));
    double *p = malloc(n * sizeof(double));
    double *q = malloc(n * sizeof(double));
    int k = 0;
    for (int i = 0; i < n; i++) {
        rowptr[i] = k;
        if (i > 0) { col[k] = i - 1; val[k] = -1.0; k++; }
        col[k] = i; val[k] = 4.0; k++;
        if (i < n - 1) { col[k] = i + 1; val[k] = -1.0; k++; }
        x[i] = 0.0; r[i] = 1.0; p[i] = 1.0;
    }
    rowptr[n] = k;
    double rr = n;
    #pragma acc data copyin(rowptr[0:n+1], col[0:nnz], val[0:nnz]) copyin(r[0:n], p[0:n]) copy(x[0:n]) create(q[0:n])
    {
        for (int it = 0; it < iters; it++) {
            #pragma acc parallel loop gang
            for (int row = 0; row < n; row++) {
                double sum = 0.0;
                #pragma acc loop vector reduction(+:sum)
                for (int e = rowptr[row]; e < rowptr[row + 1]; e++) sum += val[e] * p[col[e]];
                q[row] = sum;
            }
            double pq = 0.0;
            #pragma acc parallel loop reduction(+:pq)
            for (int i = 0; i < n; i++) pq += p[i] * q[i];
            double alpha = rr / pq;
            double rr_new = 0.0;
            #pragma acc parallel loop reduction(+:rr_new)
            for (int i = 0; i < n; i++) {
                x[i] += alpha * p[i];
                r[i] -= alpha * q[i];
                rr_new += r[i] * r[i];
            }
            double beta = rr_new / rr;
            rr = rr_new;
            #pragma acc kernels loop
            for (int i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
            #pragma acc update host(r[0:1])
            if (it % 10 == 0) printf("%d %.6e %.6e\n", it, rr, r[0]);
        }
    }
    double s = 0.0;
    for (int i = 0; i < n; i++) s += x[i];
    printf("x sum %.6e\n", s);
    return 0;
}
