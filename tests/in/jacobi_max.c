// 2-D Jacobi sweep with a max reduction and a collapse(2) copy-back.
#include <math.h>
#include <stdio.h>
#define N 64
double a[N][N], b[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[i][j] = (i == 0) ? 1.0 : 0.0;
    double err = 1.0;
    int iter = 0;
    while (err > 1e-3 && iter < 100) {
        err = 0.0;
#pragma acc parallel loop reduction(max:err)
        for (int i = 1; i < N - 1; i++) {
#pragma acc loop
            for (int j = 1; j < N - 1; j++) {
                b[i][j] = 0.25 * (a[i-1][j] + a[i+1][j] + a[i][j-1] + a[i][j+1]);
                err = fmax(err, fabs(b[i][j] - a[i][j]));
            }
        }
#pragma acc parallel loop collapse(2)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                a[i][j] = b[i][j];
        iter++;
    }
    printf("%d %g\n", iter, err);
    return 0;
}
