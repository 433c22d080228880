// yosegi-test: rtol=0
// `bool` (from <stdbool.h>) and `_Bool` in host code and in kernels: arrays of bool, bool
// locals, params and function results, conversions to bool (0 or 1, as C says: `(_Bool)0.5`
// is 1), bool arithmetic, and reductions with && and || over bool variables.
#include <stdbool.h>
#include <stdio.h>

#define N 200

static bool flags[N];
static _Bool odd[N];
static int counts[N];
static double vals[N];

bool is_small(double x) { return x < 10.0; }

#pragma acc routine seq
bool divisible(int x, int d) { return x % d == 0; }

#pragma acc routine seq
_Bool nonzero(double x) { return x; }

static int count_true(const bool *b, int n) {
    int c = 0;
    for (int i = 0; i < n; i++) c += b[i];
    return c;
}

int main(void) {
    bool use_neg = true;
    _Bool never = false;
    for (int i = 0; i < N; i++) vals[i] = (i - 50) * 0.125;

    #pragma acc parallel loop copyin(vals) copyout(flags, odd, counts)
    for (int i = 0; i < N; i++) {
        bool half = (_Bool)0.5;            /* 1: a non-zero double converts to true */
        bool b = vals[i];                  /* 0 only at vals[i] == 0.0 */
        _Bool bit = i & 4;                 /* 1, not 4 */
        bool neg = use_neg && vals[i] < 0;
        b += 2;                            /* still 1 */
        bit = !bit;
        flags[i] = neg || divisible(i, 7);
        odd[i] = i % 2;                    /* stored as 0 or 1 */
        counts[i] = half + b + bit + neg + odd[i] + never + nonzero(vals[i]) + (bool)(i * 0.001);
    }

    bool all_small = true, any_div = false;
    int n_flags = 0;
    #pragma acc parallel loop copyin(vals, flags) reduction(&&:all_small) reduction(||:any_div) reduction(+:n_flags)
    for (int i = 0; i < N; i++) {
        all_small = all_small && vals[i] < 20.0;
        any_div = any_div || (flags[i] && divisible(i, 13));
        n_flags += flags[i];
    }

    bool all_big = true, any_neg = false;
    #pragma acc parallel loop copyin(vals) reduction(&&:all_big) reduction(||:any_neg)
    for (int i = 0; i < N; i++) {
        all_big = all_big && vals[i] > 0;
        any_neg = any_neg || vals[i] < -10.0;
    }

    /* A bool that a serial region writes back; its neighbours must stay untouched. */
    struct { bool a, b, c; char tail; } s = { false, false, false, 'x' };
    bool seen = false;
    #pragma acc serial copyin(vals)
    {
        for (int i = 0; i < N; i++)
            if (vals[i] == 0.0) seen = 1;
    }
    s.b = seen;

    #pragma acc kernels copyin(vals) copy(flags)
    {
        for (int i = 0; i < N; i++)
            flags[i] = flags[i] != (vals[i] > 5.0);
    }

    int h = 0;
    for (int i = 0; i < N; i++) h = h * 3 + counts[i] + 5 * flags[i] + 7 * odd[i];
    printf("counts %d %d %d %d %d\n", counts[0], counts[7], counts[50], counts[51], counts[199]);
    printf("flags %d odd %d hash %d\n", count_true(flags, N), count_true(odd, N), h);
    printf("all_small %d any_div %d n_flags %d all_big %d any_neg %d\n", all_small, any_div, n_flags, all_big, any_neg);
    printf("seen %d s %d %d %d %c sizeof %zu %d\n", seen, s.a, s.b, s.c, s.tail, sizeof(bool), is_small(3.5));
    return 0;
}
