// main.c and other.c each define `static` functions `scale` (a plain device function) and
// `window` (an array parameter: inlined); each file's kernels must call its own.
#include <stdio.h>
#include <stdlib.h>
#include "twins.h"
static double scale(double x) { return 2.0 * x; }
static double window(const double *f, int i) { return f[i - 1] + scale(f[i]) + f[i + 1]; }
int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 3;
    static double f[N], g[N];
    for (int i = 0; i < N; i++) f[i] = (i % 13) * 0.25;
    #pragma acc data copy(f) create(g)
    for (int s = 0; s < steps; s++) {
        #pragma acc parallel loop
        for (int i = 1; i < N - 1; i++) g[i] = window(f, i) / 4.0;
        #pragma acc parallel loop
        for (int i = 1; i < N - 1; i++) f[i] = g[i];
    }
    other_pass(f, steps);
    double t = 0;
    for (int i = 0; i < N; i++) t += f[i] * (i % 7);
    printf("%.9f %.9f\n", t, scale(f[N / 2]));
    return 0;
}
