// yosegi-test: stdin=stdin_sum.in
// yosegi-test: rtol=1e-9
// Reads a count and that many numbers with scanf, then computes statistics on the device.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 0;
    if (scanf("%d", &n) != 1 || n <= 0) {
        fprintf(stderr, "expected a positive count\n");
        return 1;
    }
    double *v = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        if (scanf("%lf", &v[i]) != 1) {
            fprintf(stderr, "expected %d numbers\n", n);
            return 1;
        }
    }
    double sum = 0.0, mx = -1.0e300, mn = 1.0e300;
    #pragma acc parallel loop copyin(v[0:n]) reduction(+:sum) reduction(max:mx) reduction(min:mn)
    for (int i = 0; i < n; i++) {
        sum += v[i];
        mx = v[i] > mx ? v[i] : mx;
        mn = v[i] < mn ? v[i] : mn;
    }
    double mean = sum / n;
    double var = 0.0;
    #pragma acc parallel loop copyin(v[0:n]) reduction(+:var)
    for (int i = 0; i < n; i++) var += (v[i] - mean) * (v[i] - mean);
    printf("count %d\n", n);
    printf("sum %.12e mean %.12e\n", sum, mean);
    printf("max %.12e min %.12e\n", mx, mn);
    printf("variance %.12e\n", var / n);
    free(v);
    return 0;
}
