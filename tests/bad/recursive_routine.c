// bad input: a routine the kernel inlines calls itself (found by the fuzzer: with many such
// calls, inlining them level after level up to the depth limit took hours and all memory)
#include <stddef.h>

#pragma acc routine seq
static const double *lower_bound(const double *table, int n, double x) {
    const double *lo = table, *hi = table + n;
    if (n > 1 && x > 0.0) lo = lower_bound(table, n / 2, x);
    if (n > 1 && x > 1.0) lo = lower_bound(table, n / 2, x - 1.0);
    if (n > 1 && x > 2.0) lo = lower_bound(table, n / 2, x - 2.0);
    if (n > 1 && x > 3.0) lo = lower_bound(table, n / 2, x - 3.0);
    if (n > 1 && x > 4.0) lo = lower_bound(table, n / 2, x - 4.0);
    if (n > 1 && x > 5.0) lo = lower_bound(table, n / 2, x - 5.0);
    if (n > 1 && x > 6.0) lo = lower_bound(table, n / 2, x - 6.0);
    if (n > 1 && x > 7.0) lo = lower_bound(table, n / 2, x - 7.0);
    return lo == hi ? NULL : lo;
}

int main(void) {
    double table[16], out[100];
    for (int k = 0; k < 16; k++) table[k] = k;
#pragma acc parallel loop copyin(table) copyout(out)
    for (int i = 0; i < 100; i++) {
        const double *at = lower_bound(table, 16, i % 20);
        out[i] = at ? *at : -1.0;
    }
    return 0;
}
