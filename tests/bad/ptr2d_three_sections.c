#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 4, m = 3;
    double **a = (double **)malloc(n * sizeof(double *));
    for (int i = 0; i < n; i++) a[i] = (double *)calloc(m, sizeof(double));
    #pragma acc data copyin(a[0:n][0:m][0:2])
    {
        #pragma acc parallel loop
        for (int i = 0; i < n; i++) a[i][0] = i;
    }
    printf("%g\n", a[2][0]);
    return 0;
}
