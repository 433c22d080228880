// yosegi-test: rtol=1e-12
// Adjacent `parallel loop` constructs that size their own launches (`num_gangs`,
// `num_workers`, `vector_length`, `gang(num:)`, `vector(n)`), as NPB-ACC writes every loop:
// they run as one compute region, each kernel with its construct's sizes, so the chain
// through `b` and `c` can be fused; a 2-D chain with gang dimensions on each construct.
#include <stdio.h>

#define N 6000
#define NY 37
#define NX 181

static double a[N], b[N], c[N], d[N];
static double u[NY][NX], v[NY][NX], w[NY][NX];

int main(void) {
    for (int i = 0; i < N; i++) {
        a[i] = ((i * 37) % 101) * 0.125 - 3.0;
        b[i] = c[i] = d[i] = 0.0;
    }
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            u[j][i] = ((j * 11 + i * 5) % 23) * 0.5;
            v[j][i] = w[j][i] = 0.0;
        }
    #pragma acc data copyin(a, u) copy(b, c, d, v, w)
    {
        for (int step = 0; step < 3; step++) {
            #pragma acc parallel loop present(a, b) num_gangs(47) vector_length(128)
            for (int i = 1; i < N - 1; i++)
                b[i] = a[i - 1] + 2.0 * a[i] + a[i + 1] + 0.5 * d[i];
            #pragma acc parallel loop gang vector(64) present(b, c) num_workers(2)
            for (int i = 2; i < N - 2; i++)
                c[i] = b[i - 1] - b[i + 1] + 0.25 * b[i];
            #pragma acc parallel loop gang(num: 12) present(c, d) vector_length(256)
            for (int i = 3; i < N - 3; i++)
                d[i] = 0.5 * (c[i - 1] + c[i + 1]) - 0.125 * d[i];
        }
        #pragma acc parallel loop collapse(2) num_gangs(8, 4) present(u, v)
        for (int j = 1; j < NY - 1; j++)
            for (int i = 1; i < NX - 1; i++)
                v[j][i] = u[j - 1][i] + u[j + 1][i] - u[j][i - 1] * 0.5 + u[j][i + 1];
        #pragma acc parallel loop gang(dim: 2) vector_length(32) num_gangs(2, 3) present(v, w)
        for (int j = 2; j < NY - 2; j++) {
            #pragma acc loop gang(dim: 1) vector
            for (int i = 2; i < NX - 2; i++)
                w[j][i] = v[j - 1][i + 1] + v[j + 1][i - 1] - 0.5 * v[j][i];
        }
    }
    double s = 0, t = 0;
    for (int i = 0; i < N; i++) s += d[i] * (1 + i % 7) + c[i] - b[i];
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) t += w[j][i] * (1 + (i + j) % 5) + v[j][i];
    printf("sums %.12e %.12e\n", s, t);
    return 0;
}
