// yosegi-test: rtol=1e-9
// Reductions in fused chains: a 2-D update followed, in the same region, by loops that reduce
// over it (a residual norm, a largest change, a count), which run in the fused kernel; and a
// reduction whose loop writes what the next loop reads at a neighbour, which stays unfused.
#include <math.h>
#include <stdio.h>

#define NY 150
#define NX 231

static double u[NY][NX], un[NY][NX], g[NY][NX], h[NY][NX];

int main(void) {
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            u[j][i] = sin(0.05 * i) * cos(0.07 * j) + ((i * 7 + j * 3) % 11) * 0.01;
            un[j][i] = g[j][i] = h[j][i] = 0.0;
        }
    double res = 0.0, dmax = 0.0, total = 0.0, gsum = 0.0;
    long big = 0;
    for (int step = 0; step < 3; step++) {
        #pragma acc parallel copy(u, un, g, h)
        {
            #pragma acc loop collapse(2)
            for (int j = 1; j < NY - 1; j++)
                for (int i = 1; i < NX - 1; i++)
                    un[j][i] = 0.25 * (u[j - 1][i] + u[j + 1][i] + u[j][i - 1] + u[j][i + 1]);
            #pragma acc loop collapse(2) reduction(+:res) reduction(max:dmax) reduction(+:big)
            for (int j = 2; j < NY - 2; j++)
                for (int i = 2; i < NX - 2; i++) {
                    double d = un[j][i] - 0.5 * (un[j][i - 1] + un[j][i + 1]);
                    res += d * d;
                    dmax = fmax(dmax, fabs(un[j][i] - u[j][i]));
                    if (un[j][i] > 0.5) big++;
                }
            // A reduction in a loop whose result the next loop reads one row away: that loop
            // would need redundant iterations, so the chain stops before the next one.
            #pragma acc loop collapse(2) reduction(+:total)
            for (int j = 0; j < NY; j++)
                for (int i = 0; i < NX; i++) {
                    g[j][i] = 2.0 * un[j][i];
                    total += g[j][i];
                }
            #pragma acc loop collapse(2) reduction(+:gsum)
            for (int j = 1; j < NY; j++)
                for (int i = 0; i < NX; i++) {
                    h[j][i] = g[j - 1][i] - g[j][i];
                    gsum += h[j][i] * h[j][i];
                }
        }
        #pragma acc parallel loop collapse(2) copy(u, un)
        for (int j = 1; j < NY - 1; j++)
            for (int i = 1; i < NX - 1; i++) u[j][i] = un[j][i];
    }
    printf("res %.12e dmax %.12e big %ld\n", res, dmax, big);
    printf("total %.12e gsum %.12e\n", total, gsum);
    printf("u %.12e %.12e\n", u[NY / 2][NX / 3], h[NY - 1][NX - 1]);
    return 0;
}
