// static_twins: two files with same-named `static` functions that compute constructs call.
#include <stdio.h>
#include "twins.h"

double grid[N][M];

int main(void) {
    double x[N], oa[N], ob[N];
    for (int i = 0; i < N; i++) {
        x[i] = 0.25 * i - 3.0;
        for (int j = 0; j < M; j++) grid[i][j] = 0.125 * (i % 5) + 0.3 * j;
    }
    double sa = a_step(x, oa);
    b_step(x, ob);
    double ta = 0.0, tb = 0.0;
    for (int i = 0; i < N; i++) {
        ta += oa[i] * (i % 3 + 1);
        tb += ob[i] * (i % 4 + 1);
    }
    printf("a %.12e %.12e %.12e\n", sa, ta, oa[7]);
    printf("b %.12e %.12e\n", tb, ob[11]);
    return 0;
}
