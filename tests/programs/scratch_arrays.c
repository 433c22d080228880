// Scratch arrays that a function's `data create(...)` makes on every call, as NPB's solvers do:
// - `scratch` (a local array only kernels touch) is dropped when the region ends: never copied
//   back, since no host code names it;
// - `kept` (a local array the host reads after the region) comes back, as the sequential
//   program says, though OpenACC's `create` would leave it stale;
// - `total` (a file-scope array) stays on the device between calls as a cache, so its sums
//   carry over from call to call, and the host gets them when it reads them at the end;
// - `a` (file-scope, `copyin` on every call) is sent once: its copy too stays as a cache.
#include <stdio.h>

#define N 4096

static double a[N];
static double total[N];
static double out[N];

static void step(const double *a, int it) {
    double scratch[N];
    double kept[N];
    #pragma acc data copyin(a[0:N]) create(scratch, kept, total) copyout(out)
    {
        #pragma acc parallel loop
        for (int i = 0; i < N; i++) scratch[i] = a[i] * it;
        #pragma acc parallel loop
        for (int i = 0; i < N; i++) {
            kept[i] = scratch[i] + 1;
            out[i] = scratch[N - 1 - i];
            total[i] += scratch[i];
        }
    }
    double s = 0;
    for (int i = 0; i < N; i++) s += kept[i];
    printf("step %d kept %.1f out %.1f\n", it, s, out[7]);
}

int main(void) {
    for (int i = 0; i < N; i++) a[i] = (i % 17) * 0.5;
    for (int it = 1; it <= 4; it++) step(a, it);
    double t = 0;
    for (int i = 0; i < N; i++) t += total[i];
    printf("total %.1f\n", t);
    return 0;
}
