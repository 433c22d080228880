// yosegi-test: rtol=1e-12
// Step loops that swap two pointers after the region (the usual form of a stencil that
// alternates two arrays), for fusion across steps: the runtime runs one step, after which the
// host swaps, or an even number, after which it skips the swap. A 1-D diffusion with an odd
// step count, a 2-D one whose temporary is declared before the loop, and a loop whose swap
// names an array the region does not (not a step loop: it must still run as written).
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4001;
    int steps = argc > 2 ? atoi(argv[2]) : 23;
    double *u = malloc(sizeof(double) * n), *un = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) u[i] = un[i] = (i > n / 3 && i < 2 * n / 3) ? 1.0 : 0.0;
    double *u0 = u;
    #pragma acc data copy(u[0:n]) copy(un[0:n])
    for (int s = 0; s < steps; s++) {
        #pragma acc parallel loop present(u[0:n], un[0:n])
        for (int i = 1; i < n - 1; i++) un[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        double *tmp = u;
        u = un;
        un = tmp;
    }
    double heat = 0.0;
    for (int i = 0; i < n; i++) heat += u[i] * (1 + i % 3) + 0.5 * un[i];
    printf("1-D: swapped %s, %.12e %.12e\n", u == u0 ? "even" : "odd", heat, u[n / 2]);

    int m = 97;
    double (*a)[m] = malloc(sizeof(double[m][m])), (*b)[m] = malloc(sizeof(double[m][m]));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) a[i][j] = b[i][j] = ((i * 5 + j * 3) % 11) * 0.5;
    double (*t)[m];
    int k;
    #pragma acc data copy(a[0:m][0:m], b[0:m][0:m])
    for (k = 1; k <= 14; k++) {
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < m - 1; i++)
            for (int j = 1; j < m - 1; j++) b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
        t = a;
        a = b;
        b = t;
    }
    double e = 0.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) e += a[i][j] * (1 + (i + j) % 4) - b[i][j];
    printf("2-D: k=%d %.12e %.12e\n", k, e, a[m / 2][m / 3]);

    /* The swap names `spare`, which the region does not: not a step loop. */
    double *spare = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) spare[i] = 0.0;
    for (int s = 0; s < 5; s++) {
        #pragma acc parallel loop copyin(u[0:n]) copy(un[0:n])
        for (int i = 1; i < n - 1; i++) un[i] = 0.5 * (u[i - 1] + u[i + 1]);
        double *tmp = un;
        un = spare;
        spare = tmp;
    }
    double f = 0.0;
    for (int i = 0; i < n; i++) f += spare[i] * (1 + i % 5) + un[i];
    printf("not a step loop: %.12e\n", f);
    free(a);
    free(b);
    return 0;
}
