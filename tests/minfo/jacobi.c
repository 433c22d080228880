/* A Jacobi stencil for the -Minfo snapshot: two sweeps a step inside a data region. */
#include <math.h>
#include <stdio.h>

#define N 256
#define M 128
static double a[N][M], b[N][M];

int main(void) {
    int n = N, m = M;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) a[j][i] = i == 0 ? 1.0 : 0.0;
    double err = 1.0;
    int iter = 0;
    #pragma acc data copy(a) create(b)
    while (err > 1e-6 && iter < 100) {
        err = 0.0;
        #pragma acc parallel loop collapse(2) reduction(max:err)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < m - 1; i++) {
                b[j][i] = 0.25 * (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]);
                err = fmax(err, fabs(b[j][i] - a[j][i]));
            }
        #pragma acc parallel loop collapse(2)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < m - 1; i++) a[j][i] = b[j][i];
        iter++;
    }
    printf("%d %f\n", iter, err);
    return 0;
}
