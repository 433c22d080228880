// Functions a compute construct calls without a `routine` directive: OpenACC 3.0 gives each an
// implicit `routine seq` (a static helper, a chain of calls, one taking an array, one called
// from `kernels` and `serial`).
#include <stdio.h>

static double twice(double v) { return 2.0 * v; }
double shifted(double v, int k) { return twice(v) + k; }
double row_sum(const double *row, int n) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += row[j];
    return s;
}
int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

int main(void) {
    enum { N = 100, M = 8 };
    static double a[N], m[N][M], sums[N];
    static int c[N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) m[i][j] = i * 0.5 + j;
    #pragma acc parallel loop
    for (int i = 0; i < N; i++) a[i] = shifted((double)i, i % 3);
    #pragma acc parallel loop copyin(m) copyout(sums)
    for (int i = 0; i < N; i++) sums[i] = row_sum(m[i], M);
    #pragma acc kernels
    for (int i = 0; i < N; i++) c[i] = clamp(i - 30, 0, 50);
    double total = 0.0;
    #pragma acc serial copy(total)
    for (int i = 0; i < N; i++) total += twice(a[i]);
    printf("a[5] %g a[99] %g sums[7] %g c[10] %d c[99] %d total %g\n", a[5], a[99], sums[7], c[10], c[99], total);
    return 0;
}
