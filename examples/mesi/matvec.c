/* The plain C twin of matvec.cu. */
#include <stdio.h>
#include "timer.h"

#ifndef N
#define N 1024
#endif

int a[N][N], b[N][N], c[N][N];

static void product_row(int *a, int *b, int *c)
{
    for (int id = 0; id < N; id++) {
        c[id] = 0;
        for (int k = 0; k < N; k++)
            c[id] += a[k] * b[id + (k * N)];
    }
}

void init_array(int d[N][N], int seed)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            d[i][j] = (i * 7 + j * 13 + seed) % 17 - 8;
}

int main(void)
{
    init_array(a, 1);
    init_array(b, 5);
    double t0 = wall_seconds();
    for (int i = 0; i < N; i++)
        product_row(&a[i][0], &b[0][0], &c[i][0]);
    long trace = 0, sum = 0;
    for (int i = 0; i < N; i++) {
        trace += c[i][i];
        for (int j = 0; j < N; j++)
            sum += (long)c[i][j] * ((i + j) % 5);
    }
    double t1 = wall_seconds();
    printf("matvec N=%d trace=%ld weighted=%ld c[1][2]=%d\n", N, trace, sum, c[1][2]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
