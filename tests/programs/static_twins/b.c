// The other file of static_twins (see a.c): the same static names with other bodies.
#include "twins.h"

static double scale(double x) { return 3.0 * x + 1.0; }
static double weight(double x) { return x / 4.0; }
static double bump(double x) { return scale(x) - 0.5; }
static double row_total(const double *r, int n) {
    double s = 1.0;
    for (int j = 0; j < n; j++) s += scale(r[j]) * r[j];
    return s;
}
static void apply(double *x, int n) {
    #pragma acc parallel loop copy(x[0:n])
    for (int i = 0; i < n; i++) x[i] = scale(x[i]) * 0.5;
}

// External, called from a.c's kernels: these call b.c's `scale` and `weight`.
double b_mix(double x) { return scale(x) - 1.0; }
double b_row(const double *r, int n) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += weight(r[j]);
    return s;
}

void b_step(const double *x, double *out) {
    #pragma acc parallel loop copyin(x[0:N], grid) copyout(out[0:N])
    for (int i = 0; i < N; i++) out[i] = scale(x[i]) + bump(x[i]) + row_total(grid[i], M) + b_mix(x[i]);
    apply(out, N);
}
