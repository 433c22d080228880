// The library's OpenACC code: a 1-D smoothing sweep, time steps in one data region.
#include "smooth.h"
void smooth(double *f, int steps) {
    static double g[N];
    #pragma acc data copy(f[0:N]) create(g)
    for (int s = 0; s < steps; s++) {
        #pragma acc parallel loop
        for (int i = 1; i < N - 1; i++) g[i] = 0.25 * f[i - 1] + 0.5 * f[i] + 0.25 * f[i + 1];
        #pragma acc parallel loop
        for (int i = 1; i < N - 1; i++) f[i] = g[i];
    }
}
