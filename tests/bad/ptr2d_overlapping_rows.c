// bad input: the rows of `a` overlap (each starts one element before the end of the last)
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 4, m = 3;
    double *block = (double *)calloc(n * m, sizeof(double));
    double **a = (double **)malloc(n * sizeof(double *));
    for (int i = 0; i < n; i++) a[i] = block + i * (m - 1);
    #pragma acc parallel loop collapse(2)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) a[i][j] = i + j;
    printf("%g\n", block[2]);
    return 0;
}
