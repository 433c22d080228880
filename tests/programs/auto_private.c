// yosegi-test: rtol=1e-9
// Scalars assigned before they are read in each iteration are private without a clause: a
// NAS-style nest (index temporaries assigned at the top of each level, inner loops counted by
// host variables), a value assigned in both branches of an if, and read-only scalars
// (firstprivate by default) in parallel and kernels.
#include <stdio.h>

#define N 24

static double r[N][N][N], s[N][N][N], u[N][N];

static void rprj(int m) {
    int j3, j2, j1, i3, i2, i1, d1, d2, d3;
    double x2, y2;
    d1 = 1;
    d2 = (m % 2) ? 2 : 1;
    d3 = 1;
    #pragma acc parallel loop gang
    for (j3 = 1; j3 < m / 2; j3++) {
        i3 = 2 * j3 - d3;
        #pragma acc loop worker
        for (j2 = 1; j2 < m / 2; j2++) {
            i2 = 2 * j2 - d2;
            #pragma acc loop vector
            for (j1 = 1; j1 < m / 2; j1++) {
                i1 = 2 * j1 - d1;
                y2 = r[i3][i2][i1 + 1] + r[i3 + 1][i2][i1 + 1];
                x2 = r[i3 + 1][i2 + 1][i1] + r[i3][i2 + 1][i1 + 1];
                s[j3][j2][j1] = 0.5 * r[i3 + 1][i2 + 1][i1 + 1] + 0.25 * x2 + 0.125 * y2;
            }
        }
    }
}

int main(void) {
    double scale = 1.5, offset = -0.25, t, w;
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++)
                r[i][j][k] = (double)((i * 7 + j * 3 + k) % 11) / 3.0;
    rprj(N);
    double sum = 0.0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++)
                sum += s[i][j][k];
    printf("rprj %.10f\n", sum);

    // Assigned in both branches before the read; `scale` and `offset` are only read.
    #pragma acc parallel loop collapse(2)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            if ((i + j) % 3 == 0) {
                t = r[i][j][0] * scale;
            } else {
                t = r[i][j][1] + offset;
            }
            w = t * t;
            u[i][j] = w - t;
        }
    sum = 0.0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            sum += u[i][j];
    printf("branches %.10f\n", sum);

    // In kernels: the same temporaries, with an inner sequential loop counted by `k`.
    #pragma acc kernels
    for (i = 0; i < N; i++) {
        t = 0.0;
        for (k = 0; k < N; k++) {
            w = r[i][k][k] * scale;
            t = t + w;
        }
        u[i][0] = t;
    }
    printf("kernels %.10f %.10f\n", u[3][0], u[N - 1][0]);
    // `t` and `k` are assigned again before the host reads them.
    t = 2.0;
    k = 3;
    printf("after %.1f %d\n", t, k);
    return 0;
}
