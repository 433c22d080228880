/* A 3-D 27-point stencil in doubles (every neighbour within 1 in each dimension), for timing the
 * staged variants of a stencil with more reuse than a 7-point one: 27 reads of `src` per point.
 *   yosegi run --stats bench/experiments/stencil27.c -- N SWEEPS */
#include <stdio.h>
#include <stdlib.h>

#define S(a, b, c) src[((long)(z + (a)) * n + (y + (b))) * n + (x + (c))]

static void sweep(int n, const double *restrict src, double *restrict dst) {
    long plane = (long)n * n;
    #pragma acc parallel loop present(src[0:plane * n], dst[0:plane * n])
    for (int z = 1; z < n - 1; z++) {
        #pragma acc loop
        for (int y = 1; y < n - 1; y++) {
            #pragma acc loop
            for (int x = 1; x < n - 1; x++) {
                double s = S(-1, -1, -1) + S(-1, -1, 0) + S(-1, -1, 1)
                         + S(-1, 0, -1) + S(-1, 0, 0) + S(-1, 0, 1)
                         + S(-1, 1, -1) + S(-1, 1, 0) + S(-1, 1, 1)
                         + S(0, -1, -1) + S(0, -1, 0) + S(0, -1, 1)
                         + S(0, 0, -1) + S(0, 0, 0) + S(0, 0, 1)
                         + S(0, 1, -1) + S(0, 1, 0) + S(0, 1, 1)
                         + S(1, -1, -1) + S(1, -1, 0) + S(1, -1, 1)
                         + S(1, 0, -1) + S(1, 0, 0) + S(1, 0, 1)
                         + S(1, 1, -1) + S(1, 1, 0) + S(1, 1, 1);
                dst[((long)z * n + y) * n + x] = s * (1.0 / 27.0);
            }
        }
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64;
    int sweeps = argc > 2 ? atoi(argv[2]) : 4;
    long total = (long)n * n * n;
    double *u = malloc(total * sizeof(double));
    double *v = malloc(total * sizeof(double));
    for (long c = 0; c < total; c++) u[c] = v[c] = (double)((c * 37) % 101) / 101.0 + 0.5;
    #pragma acc data copy(u[0:total], v[0:total])
    {
        for (int s = 0; s < sweeps; s++) {
            sweep(n, u, v);
            double *t = u;
            u = v;
            v = t;
        }
    }
    double sum = 0.0;
    for (long c = 0; c < total; c++) sum += u[c] * (double)(c % 7);
    printf("stencil27: n %d, %d sweeps, sum %.12e\n", n, sweeps, sum);
    free(u);
    free(v);
    return 0;
}
