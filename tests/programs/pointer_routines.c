// Routines that kernels call with addresses and pointers: a generator that updates its state
// through a pointer, outputs through pointers, local arrays filled by a callee, pointers
// returned from a search, returns from inside nested loops, pointer parameters moved inside.
#include <stdio.h>
#include <stdint.h>

#define N 200
#define K 16

#pragma acc routine seq
static double next_random(uint64_t *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

#pragma acc routine seq
static int pick(uint64_t *state, int n) { return (int)(next_random(state) * n); }

#pragma acc routine seq
static void accumulate(double *v, double e, int m) {
    v[m] += e;
    v[4] += 1.0;
}

#pragma acc routine seq
static void min_max(const double *v, int n, double *lo, double *hi) {
    *lo = v[0];
    *hi = v[0];
    for (const double *p = v + 1; p != v + n; ++p) {
        if (*p < *lo) *lo = *p;
        if (*p > *hi) *hi = *p;
    }
}

/* The first element of a sorted table not below x, or NULL past the end. */
#pragma acc routine seq
static const double *lower_bound(const double *table, int n, double x) {
    const double *lo = table, *hi = table + n;
    while (lo < hi) {
        const double *mid = lo + (hi - lo) / 2;
        if (*mid < x) lo = mid + 1;
        else hi = mid;
    }
    return lo == table + n ? NULL : lo;
}

/* The first (row, column) of a square block holding v, found by returning from two loops. */
#pragma acc routine seq
static int find_in_block(const int *block, int n, int v, int *row) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (block[i * n + j] == v) {
                *row = i;
                return j;
            }
    *row = -1;
    return -1;
}

#pragma acc routine seq
static void swap(double *x, double *y) {
    double t = *x;
    *x = *y;
    *y = t;
}

int main(void) {
    double out[N], table[K];
    int block[K], where[N];
    for (int k = 0; k < K; k++) table[k] = k * k * 0.5;
    for (int k = 0; k < K; k++) block[k] = (k * 7) % 16;

    #pragma acc parallel loop copyin(table, block) copyout(out, where)
    for (int i = 0; i < N; i++) {
        uint64_t seed = (uint64_t)i * 2654435761u + 1;
        double v[5] = {0};
        for (int k = 0; k < 10; k++) {
            double e = next_random(&seed);
            int m = pick(&seed, 4);
            accumulate(v, e, m);
        }
        double lo, hi;
        min_max(v, 4, &lo, &hi);
        double a = v[0], b = v[1];
        if (a > b) swap(&a, &b);
        const double *at = lower_bound(table, K, (double)(i % 150));
        double found = at ? *at + (at - table) : -1.0;
        int row;
        int col = find_in_block(block, 4, i % 20, &row);
        where[i] = row * 10 + col;
        out[i] = v[0] + 2 * v[1] + 3 * v[2] + 4 * v[3] + v[4] + hi - lo + b - a + found;
    }

    double s = 0;
    long w = 0;
    for (int i = 0; i < N; i++) {
        s += out[i];
        w += where[i] * (i + 1);
    }
    printf("%.10f %ld\n", s, w);
    return 0;
}
