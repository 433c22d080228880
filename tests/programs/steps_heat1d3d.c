// yosegi-test: rtol=1e-12
// Step loops for fusion across steps in 1-D and 3-D: two stencils per step that alternate
// between two arrays (each read before written, so both go to second buffers), with malloc'd
// arrays, and a 3-D heat equation whose scratch array nothing but the loop reads.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3001;
    int steps = argc > 2 ? atoi(argv[2]) : 29;
    double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) {
        u[i] = (i % 17) * 0.125;
        v[i] = (i % 5) * 0.5;
    }
    #pragma acc data copy(u[0:n], v[0:n])
    for (int t = 0; t < steps; t++) {
        #pragma acc parallel loop
        for (int i = 1; i < n - 1; i++)
            v[i] = 0.5 * v[i] + 0.25 * (u[i - 1] + u[i + 1]);
        #pragma acc parallel loop
        for (int i = 2; i < n - 2; i++)
            u[i] = 0.6 * u[i] + 0.1 * (v[i - 2] + v[i - 1] + v[i + 1] + v[i + 2]);
    }
    double s = 0;
    for (int i = 0; i < n; i++) s += u[i] * (1 + i % 3) + v[i];
    printf("1-D: %.12e %.12e %.12e\n", s, u[n / 2], v[3]);

    int m = 37;
    double (*h)[m][m] = malloc(sizeof(double[m][m][m]));
    double (*hn)[m][m] = malloc(sizeof(double[m][m][m]));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < m; k++) {
                h[i][j][k] = ((i * 3 + j * 5 + k * 7) % 11) * 0.1;
                hn[i][j][k] = 0.0;
            }
    #pragma acc data copy(h[0:m][0:m][0:m]) create(hn[0:m][0:m][0:m])
    for (int t = 0; t < 9; t++) {
        #pragma acc parallel loop collapse(3)
        for (int i = 1; i < m - 1; i++)
            for (int j = 1; j < m - 1; j++)
                for (int k = 1; k < m - 1; k++)
                    hn[i][j][k] = h[i][j][k] + 0.1 * (h[i - 1][j][k] + h[i + 1][j][k] + h[i][j - 1][k] + h[i][j + 1][k]
                                                      + h[i][j][k - 1] + h[i][j][k + 1] - 6.0 * h[i][j][k]);
        #pragma acc parallel loop collapse(3)
        for (int i = 1; i < m - 1; i++)
            for (int j = 1; j < m - 1; j++)
                for (int k = 1; k < m - 1; k++)
                    h[i][j][k] = hn[i][j][k];
    }
    double e = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < m; k++) e += h[i][j][k] * (1 + (i + 2 * j + k) % 5);
    printf("3-D: %.12e %.12e\n", e, h[m / 2][m / 2][m / 2]);
    free(h);
    free(hn);
    free(u);
    free(v);
    return 0;
}
