// yosegi-test: args=1000 6
// A radius-8 1-D stencil on a size (from argv) that is no multiple of a block, several steps
// with the arrays swapped by pointer: a halo of 8 elements per side around each block's tile.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int steps = argc > 2 ? atoi(argv[2]) : 6;
    double *u = malloc(n * sizeof(double));
    double *w = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) u[i] = w[i] = (double)((i * 17) % 23) / 23.0;
    #pragma acc data copy(u[0:n]) copyin(w[0:n])
    for (int s = 0; s < steps; s++) {
        #pragma acc parallel loop present(u[0:n], w[0:n])
        for (int i = 8; i < n - 8; i++)
            w[i] = 0.2 * u[i] + 0.1 * (u[i - 1] + u[i + 1]) + 0.075 * (u[i - 2] + u[i + 2])
                 + 0.05 * (u[i - 4] + u[i + 4]) + 0.025 * (u[i - 8] + u[i + 8]) + 0.0625 * (u[i - 3] + u[i + 7]);
        double *t = u;
        u = w;
        w = t;
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += u[i] * (double)(i % 9);
    printf("sum %.15e u[n/2] %.15e\n", sum, u[n / 2]);
    free(u);
    free(w);
    return 0;
}
