// yosegi-test: rtol=0
// A nest whose outer parallel loop runs along the columns (`b[j][i]` with `i` outer): blocks of
// `i` would each write a strided range spanning every row, so on several devices the launch is
// split along `j` (whole rows per device) instead; the stencil along `j` reads a halo row.
#include <stdio.h>

#define N 48
#define M 40

double a[M][N], b[M][N];

int main(void) {
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) a[j][i] = (i * 5 + j * 3) % 13;
    #pragma acc data copyin(a) copyout(b)
    {
        #pragma acc parallel loop collapse(2)
        for (int i = 0; i < N; i++)
            for (int j = 1; j < M - 1; j++)
                b[j][i] = a[j - 1][i] + 2 * a[j][i] + a[j + 1][i];
        #pragma acc parallel loop collapse(2)
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < M; j += M - 1) b[j][i] = -1;
        }
    }
    double sum = 0;
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) sum += b[j][i] * (1 + (i + j) % 4);
    printf("%.1f %.1f %.1f\n", sum, b[1][0], b[M / 2][N / 2]);
    return 0;
}
