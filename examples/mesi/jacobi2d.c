/* The plain C twin of jacobi2d.cu. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "timer.h"

#ifndef M
#define M 2048
#endif

double grid_a[M][M], grid_b[M][M], change[M][M];

static void sweep(double (*dst)[M], double (*src)[M], int m)
{
    for (int y = 1; y < m - 1; y++)
        for (int x = 1; x < m - 1; x++) {
            dst[y][x] = 0.25 * (src[y][x - 1] + src[y][x + 1] + src[y - 1][x] + src[y + 1][x]);
            change[y][x] = fabs(dst[y][x] - src[y][x]);
        }
}

int main(int argc, char **argv)
{
    int sweeps = argc > 1 ? atoi(argv[1]) : 200;
    for (int y = 0; y < M; y++)
        for (int x = 0; x < M; x++) {
            double edge = (y == 0) ? 1.0 : 0.0;
            grid_a[y][x] = edge;
            grid_b[y][x] = edge;
        }
    double t0 = wall_seconds();
    double worst = 0.0;
    for (int s = 0; s < sweeps; s += 2) {
        sweep(grid_b, grid_a, M);
        sweep(grid_a, grid_b, M);
        if ((s + 2) % 10 == 0) {
            worst = 0.0;
            for (int y = 1; y < M - 1; y++)
                for (int x = 1; x < M - 1; x++)
                    if (change[y][x] > worst)
                        worst = change[y][x];
        }
    }
    double sum = 0.0;
    for (int y = 0; y < M; y++)
        for (int x = 0; x < M; x++)
            sum += grid_a[y][x];
    double t1 = wall_seconds();
    printf("jacobi2d M=%d sweeps=%d sum=%.10f change=%.10e centre=%.10f\n", M, sweeps, sum, worst, grid_a[M / 2][M / 2]);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
