// yosegi-test: rtol=1e-9
// 1-D heat diffusion: time steps inside a data region, arrays swapped by pointer.
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define STEPS 200

int main(void) {
    double *u = malloc(N * sizeof(double));
    double *v = malloc(N * sizeof(double));
    const double alpha = 0.25;
    for (int i = 0; i < N; i++) {
        u[i] = (i > N / 4 && i < N / 2) ? 100.0 : (double)(i % 7);
        v[i] = u[i];
    }
    #pragma acc data copy(u[0:N]) create(v[0:N])
    {
        for (int t = 0; t < STEPS; t++) {
            #pragma acc parallel loop present(u[0:N], v[0:N])
            for (int i = 1; i < N - 1; i++) {
                v[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
            }
            #pragma acc parallel loop present(v[0:N])
            for (int i = 0; i < 1; i++) {
                v[0] = 0.0;
                v[N - 1] = 0.0;
            }
            double *tmp = u;
            u = v;
            v = tmp;
        }
    }
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < N; i++) {
        sum += u[i];
        sq += u[i] * u[i];
    }
    printf("sum %.12e\n", sum);
    printf("norm2 %.12e\n", sq);
    printf("samples %.12e %.12e %.12e %.12e\n", u[1], u[N / 4], u[N / 4 + 3], u[3 * N / 8]);
    free(u);
    free(v);
    return 0;
}
