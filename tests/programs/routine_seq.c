// yosegi-test: rtol=1e-9
// A `routine seq` device function (with a loop of its own) called from a parallel loop.
#include <stdio.h>

#define N 4000

#pragma acc routine seq
static double poly_eval(const double *coef, int degree, double x) {
    double r = coef[degree];
    for (int d = degree - 1; d >= 0; d--) r = r * x + coef[d];
    return r;
}

#pragma acc routine seq
static int collatz_steps(int v) {
    int steps = 0;
    while (v != 1 && steps < 1000) {
        v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
        steps++;
    }
    return steps;
}

static double xs[N], ys[N];
static int cs[N];
static double coef[6] = {1.0, -0.5, 0.25, -0.125, 0.0625, -0.03125};

int main(void) {
    for (int i = 0; i < N; i++) xs[i] = -1.0 + 2.0 * (double)i / (N - 1);
    #pragma acc parallel loop copyin(xs, coef) copyout(ys, cs)
    for (int i = 0; i < N; i++) {
        ys[i] = poly_eval(coef, 5, xs[i]);
        cs[i] = collatz_steps(i + 1);
    }
    double s = 0.0;
    long cs_total = 0;
    int cs_max = 0;
    for (int i = 0; i < N; i++) {
        s += ys[i];
        cs_total += cs[i];
        if (cs[i] > cs_max) cs_max = cs[i];
    }
    printf("poly sum %.12e y0 %.15e ymid %.15e\n", s, ys[0], ys[N / 2]);
    printf("collatz total %ld max %d c27 %d\n", cs_total, cs_max, cs[26]);
    return 0;
}
