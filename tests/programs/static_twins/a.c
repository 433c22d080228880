// Same-named `static` functions in two files (b.c has its own of every name here): each
// file's compute constructs call its own, as C does; a.c's kernels also call b.c's external
// functions, which call b.c's statics, not these.
#include "twins.h"

static double scale(double x) { return 2.0 * x; }
// b.c's `weight` takes a double; b.c's code inlined into a.c's kernel must not call this one.
static float weight(int k) { return 0.5f * k; }
// Called only through another routine.
static double bump(double x) { return scale(x) + weight(3); }
// An array parameter: inlined at each call.
static double row_total(const double *r, int n) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += scale(r[j]);
    return s;
}
// A function that launches a kernel, with the name of b.c's `void` one.
static double apply(double *x, int n) {
    double sum = 0.0;
    #pragma acc parallel loop copy(x[0:n]) reduction(+:sum)
    for (int i = 0; i < n; i++) {
        x[i] = scale(x[i]);
        sum += x[i];
    }
    return sum;
}

double a_step(const double *x, double *out) {
    #pragma acc parallel loop copyin(x[0:N], grid) copyout(out[0:N])
    for (int i = 0; i < N; i++)
        out[i] = scale(x[i]) + bump(x[i]) + row_total(grid[i], M) + b_mix(x[i]) + b_row(grid[i], M);
    double y[N];
    for (int i = 0; i < N; i++) y[i] = x[i];
    return apply(y, N) + scale(1.0);
}
