// yosegi-test: rtol=0
// Assignments, increments and the comma operator inside expressions, in kernels and in host
// code: chained assignments across element types, `s += c[i] = e` in a reduction loop, the
// values of `x++`/`--x`, assignments in `if`/`while`/`do`/`for` conditions and steps, and in the
// operands that `&&`, `||` and `?:` evaluate only sometimes (an inlined device function that
// writes an array included).
#include <stdbool.h>
#include <stdio.h>

#define N 96
#define M 8

static int ia[N], ib[N], ic[N], id[N], ie[N];
static double da[N], db[N], dc[N * M], dd[N * M];
static int counter[N], bumps[N], picks[N];

#pragma acc routine seq
static int bump(int *c, int i) { c[i] += 1; return c[i]; }

static int host_chain(void) {
    int x, y, h = 0;
    double d;
    for (int i = 0; i < 5; i++) {
        x = (y = i * 3) + 1;
        d = x = 2.75 * y;
        int pick = (i & 1) ? (y = 7) : (x = 9);
        h += x + y + (int)(d * 4) + pick;
    }
    return h;
}

int main(void) {
    for (int i = 0; i < N; i++) {
        da[i] = 0.5 * i - 7.25;
        counter[i] = i % 5;
        for (int k = 0; k < M; k++) dd[i * M + k] = (i + 1) * 0.25 + k;
    }

    #pragma acc parallel loop copy(ia, ib, ic, id, ie, db, counter) copyin(da)
    for (int i = 0; i < N; i++) {
        int x, y, z = -1, p = 0, q = 0, tmp;
        bool flag;
        ia[i] = ib[i] = i * 3;                      /* int = int = int */
        db[i] = ic[i] = da[i];                      /* truncated through int, then double */
        x = (y = i % 7) + 1;
        int old = counter[i]++;                     /* the old value */
        int now = --counter[i] + 10;                /* back to the old value, plus 10 */
        int w = (i & 1) ? (p = i) : (q = -i);       /* only one arm assigns */
        int r = (tmp = i * 2, tmp + 1);
        int hit = (i % 3 == 0) && (z = i) > 5;      /* z assigned only when i % 3 == 0 */
        int miss = (i % 4 == 0) || (y = 100) < 0;   /* y assigned only when i % 4 != 0 */
        int bits = (flag = i & 2) + 1;              /* flag is 0 or 1 */
        if ((tmp = ia[i] - 50) > 0) tmp = -tmp;
        id[i] = x * 1000 + y * 10 + old + now + w + r + hit + miss + bits + z + p + q + tmp;
        int halvings = 0, k = i + 1;
        while ((k = k / 2) > 0) halvings++;
        int steps = 0, m = i % 6 + 1;
        do {
            if (m == 3) continue;                   /* goes to the condition */
            steps += m;
        } while (--m > 0);
        int pow2 = 0, acc = 1;
        for (int j = 0; (acc *= 2) < i + 2; j++, pow2 = j) {}
        ie[i] = halvings * 10000 + steps * 100 + pow2;
    }

    #pragma acc parallel loop copy(bumps) copyout(picks)
    for (int i = 0; i < N; i++) {
        int g = (i % 2 == 0) && bump(bumps, i) > 0;
        int h = (i % 3 == 0) ? bump(bumps, i) : -1;
        int u = (i % 5 == 0) || bump(bumps, i) > 1;
        picks[i] = g * 100 + h * 10 + u;
    }

    double avg = 0.0;
    #pragma acc parallel loop reduction(+:avg) copyin(dd) copyout(dc)
    for (int i = 0; i < N; i++) {
        double row = 0.0;
        #pragma acc loop seq
        for (int k = 0; k < M; k++)
            row += dc[i * M + k] = dd[i * M + k] * 2.0;
        avg += row;
    }

    int count = 0, last = 0;
    #pragma acc serial copyin(ia)
    {
        for (int i = 0; i < N; i++)
            if ((last = ia[i] % 11) == 3) count++;
    }

    long long hsum = 0;
    for (int i = 0; i < N; i++) hsum = hsum * 7 + ia[i] + ib[i] + ic[i] + id[i] + ie[i] + counter[i] + (long long)(db[i] * 4)
                                + bumps[i] * 3 + picks[i];
    double dsum = 0.0;
    for (int i = 0; i < N * M; i++) dsum += dc[i];
    printf("id %d %d %d %d ie %d %d %d\n", id[0], id[5], id[12], id[95], ie[1], ie[30], ie[95]);
    printf("avg %.6f dsum %.6f count %d last %d\n", avg, dsum, count, last);
    printf("hash %lld host %d\n", hsum, host_chain());
    return 0;
}
