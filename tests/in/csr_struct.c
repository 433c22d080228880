// CSR sparse matrix-vector product with an inner vector reduction, the matrix in a struct.
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int nrows;
    int *rowptr;
    int *colidx;
    double *val;
} csr_matrix;

void spmv(const csr_matrix *m, const double *restrict x, double *restrict y) {
#pragma acc parallel loop gang copyin(m->rowptr[0:m->nrows+1], x[0:m->nrows]) copyout(y[0:m->nrows])
    for (int i = 0; i < m->nrows; i++) {
        double sum = 0.0;
#pragma acc loop vector reduction(+:sum)
        for (int k = m->rowptr[i]; k < m->rowptr[i + 1]; k++)
            sum += m->val[k] * x[m->colidx[k]];
        y[i] = sum;
    }
}

int main(void) {
    csr_matrix m;
    m.nrows = 8;
    m.rowptr = malloc((m.nrows + 1) * sizeof(int));
    m.colidx = malloc(3 * m.nrows * sizeof(int));
    m.val = malloc(3 * m.nrows * sizeof(double));
    int nnz = 0;
    for (int i = 0; i < m.nrows; i++) {
        m.rowptr[i] = nnz;
        for (int d = -1; d <= 1; d++) {
            int j = i + d;
            if (j < 0 || j >= m.nrows) continue;
            m.colidx[nnz] = j;
            m.val[nnz] = d == 0 ? 2.0 : -1.0;
            nnz++;
        }
    }
    m.rowptr[m.nrows] = nnz;
    double x[8], y[8];
    for (int i = 0; i < 8; i++) x[i] = i + 1;
    spmv(&m, x, y);
    for (int i = 0; i < 8; i++) printf("%g ", y[i]);
    printf("\n");
    return 0;
}
