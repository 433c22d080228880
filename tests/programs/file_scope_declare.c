// File-scope `declare create`/`copyin` make the variables present for the whole run (a
// `present` clause finds them), a standalone directive at file scope is ignored as gcc ignores
// it, and a scalar read under default(none) without a clause is firstprivate.
#include <stdio.h>

#define N 64
double table[N];
double scale = 2.5;
int n = N;
int limit = N;
#pragma acc declare create(table) copyin(scale, n)
#pragma acc update device(scale)

static void fill(void) {
    #pragma acc parallel loop present(table, scale)
    for (int i = 0; i < N; i++) table[i] = scale * i;
}

int main(void) {
    fill();
    double sum = 0;
    #pragma acc parallel loop default(none) present(table) reduction(+:sum)
    for (int i = 0; i < limit; i++) sum += table[i] * (n > 0);
    #pragma acc update self(table[0:N])
    printf("%.3f %.3f %.3f\n", sum, table[1], table[N - 1]);
    return 0;
}
