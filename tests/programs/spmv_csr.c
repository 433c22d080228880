// yosegi-test: rtol=1e-9
// CSR sparse matrix-vector product: gang loop over rows, vector reduction(+:sum) over each row's nonzeros.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const int n = 3000;
    int *rowptr = malloc((n + 1) * sizeof(int));
    /* A banded matrix with a row-dependent number of nonzeros (1..9). */
    int nnz = 0;
    rowptr[0] = 0;
    for (int r = 0; r < n; r++) {
        int len = 1 + (r * 7) % 9;
        nnz += len;
        rowptr[r + 1] = nnz;
    }
    int *col = malloc(nnz * sizeof(int));
    double *val = malloc(nnz * sizeof(double));
    for (int r = 0; r < n; r++) {
        int len = rowptr[r + 1] - rowptr[r];
        for (int q = 0; q < len; q++) {
            int e = rowptr[r] + q;
            col[e] = (r + q * 37) % n;
            val[e] = 1.0 / (1.0 + (double)((r + q) % 13));
        }
    }
    double *x = malloc(n * sizeof(double));
    double *y = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) x[i] = 0.5 + (double)(i % 17) * 0.125;

    for (int rep = 0; rep < 3; rep++) {
        #pragma acc parallel loop gang copyin(rowptr[0:n+1], col[0:nnz], val[0:nnz], x[0:n]) copyout(y[0:n])
        for (int r = 0; r < n; r++) {
            double sum = 0.0;
            int start = rowptr[r];
            int end = rowptr[r + 1];
            #pragma acc loop vector reduction(+:sum)
            for (int e = start; e < end; e++) {
                sum += val[e] * x[col[e]];
            }
            y[r] = sum;
        }
        /* Feed the result back (scaled) so that the repetitions differ. */
        for (int i = 0; i < n; i++) x[i] = 0.25 * y[i] + 0.1;
    }
    double s = 0.0, mx = 0.0;
    for (int i = 0; i < n; i++) {
        s += y[i];
        if (y[i] > mx) mx = y[i];
    }
    printf("nnz %d\n", nnz);
    printf("sum %.12e\n", s);
    printf("max %.12e\n", mx);
    printf("y %.12e %.12e %.12e %.12e\n", y[0], y[1], y[n / 2], y[n - 1]);
    free(rowptr); free(col); free(val); free(x); free(y);
    return 0;
}
