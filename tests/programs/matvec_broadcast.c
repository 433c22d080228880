// yosegi-test: args=777 300
// The seed's matrix-product kernel c[id] += a[k] * b[id + k*N] (every thread reads all of `a`)
// with N not a multiple of a block, and M (from argv) such that `a` needs several tiles.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 777;
    int m = argc > 2 ? atoi(argv[2]) : 300;
    double *a = malloc(m * sizeof(double));
    double *b = malloc((long)m * n * sizeof(double));
    double *c = malloc(n * sizeof(double));
    for (int k = 0; k < m; k++) a[k] = (double)(k % 13) / 13.0;
    for (long j = 0; j < (long)m * n; j++) b[j] = (double)(j % 19) / 19.0;
    for (int i = 0; i < n; i++) c[i] = (double)i;
    #pragma acc parallel loop copyin(a[0:m], b[0:(long)m*n]) copy(c[0:n])
    for (int id = 0; id < n; id++)
        for (int k = 0; k < m; k++) c[id] += a[k] * b[id + (long)k * n];
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += c[i] * (double)(i % 3);
    printf("sum %.15e c[0] %.15e c[n-1] %.15e\n", sum, c[0], c[n - 1]);
    free(a);
    free(b);
    free(c);
    return 0;
}
