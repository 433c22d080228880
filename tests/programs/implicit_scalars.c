// Host scalars that loops the program marks parallel use without clauses: loop variables read
// after the loop (nest variables and inner loop variables, some shadowed by inner
// declarations), flags every writing iteration sets to one value, a value set by one
// iteration only, and reductions written without a clause. Each must run in parallel and
// leave what the sequential program leaves.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#define N 200
#define M 6

int found_global;
double a[N * M], b[N], c[N];

int main(void) {
    int i, j, k;
    for (i = 0; i < N * M; i++) a[i] = (i * 7) % 23 - 11.0;

    /* the nest variable and an inner loop variable, both read after the loop */
    #pragma acc parallel loop copyin(a) copyout(b)
    for (i = 0; i < N; i++) {
        double s = 0;
        for (j = 0; j < M; j++) s += a[i * M + j];
        b[i] = s;
    }
    printf("after the first loop: i=%d j=%d\n", i, j);

    /* an inner declaration shadowing the host's `k`, and the host's `k` unchanged */
    k = -5;
    #pragma acc parallel loop copyin(a) copyout(c)
    for (i = 1; i <= N - 1; i += 2) {
        double t = 0;
        for (int k = 0; k < M; k++) t += a[i * M + k] * k;
        c[i] = t;
    }
    printf("after the second loop: i=%d k=%d\n", i, k);

    /* flags: a bool set to true, an int set to 0 (and one never set), a global set to 1 */
    bool any_negative = false;
    int all_small = 1, never = 42;
    found_global = 0;
    #pragma acc parallel loop copyin(b)
    for (i = 0; i < N; i++) {
        if (b[i] < 0) any_negative = true;
        if (fabs(b[i]) > 30.0) all_small = 0;
        if (b[i] > 1e9) never = 7;
        if (b[i] == b[0]) found_global = 1;
    }
    printf("flags: %d %d %d %d\n", any_negative, all_small, never, found_global);

    /* a value one iteration sets */
    double first = -1.0;
    #pragma acc parallel loop copyin(b)
    for (i = 0; i < N; i++) {
        if (i == 3) first = sqrt(2.0) * 3.0;
    }
    printf("first: %.6f\n", first);

    /* reductions without a clause in a parallel loop: a sum, a max by fmax, a min by a test */
    double sum = 0.0, biggest = -1e30, smallest = 1e30;
    #pragma acc parallel loop copyin(b)
    for (i = 0; i < N; i++) {
        sum += b[i];
        biggest = fmax(biggest, b[i]);
        if (b[i] < smallest) smallest = b[i];
    }
    printf("reductions: %.6f %.6f %.6f\n", sum, biggest, smallest);

    /* `kernels loop independent` over a 2-D nest with an implicit max, as the laplace codes write it */
    double err = 0.0;
    #pragma acc kernels loop independent copyin(a) copyout(b)
    for (j = 1; j < N - 1; j++)
        for (i = 0; i < M; i++) {
            double d = 0.5 * (a[(j - 1) * M + i] + a[(j + 1) * M + i]) - a[j * M + i];
            err = fmax(err, fabs(d));
        }
    printf("err: %.6f i=%d j=%d\n", err, i, j);

    /* a flag the host resets before each launch (Rodinia BFS's `stop`): each launch must see
       the host's reset, and the host each launch's store */
    int visited[N];
    for (i = 0; i < N; i++) visited[i] = (i == 7);
    int rounds = 0, changed;
    do {
        changed = 0;
        #pragma acc parallel loop copy(visited)
        for (i = 0; i < N - 1; i++)
            if (visited[i] == 1 && visited[i + 1] == 0) { visited[i + 1] = 2; changed = 1; }
        for (i = 0; i < N; i++)
            if (visited[i] == 2) visited[i] = 1;
        rounds++;
    } while (changed && rounds < 1000);
    printf("rounds: %d\n", rounds);

    /* `tile` associates (and so makes parallel) as many loops as it has sizes */
    #pragma acc parallel loop tile(8, 2) copyin(a) copyout(c)
    for (j = 0; j < N; j++)
        for (k = 0; k < 2; k++)
            if (k == 1) c[j] = a[j * M] + a[j * M + 1];
    printf("tile: %.6f j=%d\n", c[N - 1], j);

    double cs = 0;
    for (i = 1; i < N; i += 2) cs += c[i];
    printf("c: %.6f\n", cs);
    return 0;
}
