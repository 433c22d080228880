// yosegi-test: rtol=1e-9
// Dense matrix product C = A * B with a collapse(2) parallel loop and a sequential inner product.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const int n = 96, m = 80, p = 112;
    double *A = malloc(n * m * sizeof(double));
    double *B = malloc(m * p * sizeof(double));
    double *C = malloc(n * p * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m; k++) A[i * m + k] = (double)((i + 2 * k) % 9) - 4.0;
    for (int k = 0; k < m; k++)
        for (int j = 0; j < p; j++) B[k * p + j] = 0.5 + (double)((3 * k + j) % 5) * 0.25;

    #pragma acc parallel loop collapse(2) copyin(A[0:n*m], B[0:m*p]) copyout(C[0:n*p])
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p; j++) {
            double s = 0.0;
            #pragma acc loop seq
            for (int k = 0; k < m; k++) s += A[i * m + k] * B[k * p + j];
            C[i * p + j] = s;
        }
    double tr = 0.0, tot = 0.0;
    for (int i = 0; i < n; i++) {
        tr += C[i * p + i];
        for (int j = 0; j < p; j++) tot += C[i * p + j] * (double)(1 + (i + j) % 4);
    }
    printf("trace %.12e\n", tr);
    printf("weighted %.12e\n", tot);
    printf("C %.12e %.12e %.12e\n", C[0], C[5 * p + 7], C[(n - 1) * p + p - 1]);
    free(A); free(B); free(C);
    return 0;
}
