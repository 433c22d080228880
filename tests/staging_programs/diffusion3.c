/* The seed's halo example (section 000): data1[id] = data2[id-1] + data2[id] + data2[id+1],
 * repeated for a few steps with the arrays swapped by pointer. */
#include <stdio.h>
#include <stdlib.h>

#define N 8192
#define STEPS 4

void diffuse(int n, const double *restrict in, double *restrict out) {
    #pragma acc parallel loop present(in[0:n], out[0:n])
    for (int i = 1; i < n - 1; i++) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0;
}

int main(void) {
    double *u = malloc(N * sizeof(double));
    double *v = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) u[i] = v[i] = (double)((i * 37) % 101) / 101.0;
    #pragma acc data copy(u[0:N]) copyin(v[0:N])
    {
        for (int s = 0; s < STEPS; s++) {
            diffuse(N, u, v);
            double *t = u;
            u = v;
            v = t;
        }
    }
    double sum = 0.0;
    for (int i = 0; i < N; i++) sum += u[i] * (double)(i % 7);
    printf("diffusion3: sum %.12e u[100] %.12e\n", sum, u[100]);
    free(u);
    free(v);
    return 0;
}
