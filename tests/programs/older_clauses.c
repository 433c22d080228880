// Clauses and forms that code written for older compilers uses: `private` on `kernels`,
// `private` naming variables the loop body declares, reductions on 2-D array sections (as
// k-means accumulates its centres), <float.h>'s DBL_MAX in a kernel, and a routine with an
// orphaned `loop` writing a `declare create` global.
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#define N 300
#define K 4
#define D 3

double table[K][D];
#pragma acc declare create(table)

#pragma acc routine vector
static void fill_row(int k, double v) {
    #pragma acc loop vector
    for (int d = 0; d < D; d++) table[k][d] = v + d * 0.5 + k;
}

int main(void) {
    float a[N], b[N];
    int i, j;
    for (i = 0; i < N; i++) a[i] = (i % 11) * 0.5f;

    #pragma acc kernels copyin(a), copyout(b), private(i, j)
    {
        #pragma acc loop independent
        for (i = 0; i < N; i++) {
            float s = 0;
            for (j = 0; j < 4; j++) s += a[i] * j;
            b[i] = s;
        }
    }

    int idx[N];
    #pragma acc kernels copyin(a) copyout(idx)
    {
        #pragma acc loop independent, private(j, dist)
        for (int p = 0; p < N; p++) {
            float dist = 0.0f;
            for (j = 0; j < 3; j++) dist += a[p] * j;
            idx[p] = (int)dist % K;
        }
    }

    /* k-means style: per-cluster sums of points, 2-D and 1-D array sections */
    double pts[N][D];
    for (i = 0; i < N; i++)
        for (j = 0; j < D; j++) pts[i][j] = (i * 3 + j * 7) % 17;
    double centers[K][D] = {{0}};
    int counts[K] = {0};
    #pragma acc parallel loop copyin(pts, idx) reduction(+:centers[0:K][0:D], counts[0:K])
    for (i = 0; i < N; i++) {
        for (j = 0; j < D; j++) centers[idx[i]][j] += pts[i][j];
        counts[idx[i]] += 1;
    }
    float (*c)[3] = calloc(K, sizeof *c);
    #pragma acc kernels loop gang worker independent \
            private(j) \
            reduction(+:c[0:K][0:3])
    for (i = 0; i < N; i++)
        for (j = 0; j < 3; j++) c[i % K][j] += 1.0f;

    /* DBL_MAX, a long double constant cast to double in <float.h> */
    double nearest[N];
    #pragma acc parallel loop copyin(pts) copyout(nearest)
    for (i = 0; i < N; i++) {
        double best = DBL_MAX;
        for (int k = 0; k < K; k++) {
            double d = pts[i][0] - k * 4.0;
            if (d * d < best) best = d * d;
        }
        nearest[i] = best;
    }

    #pragma acc parallel loop gang
    for (int k = 0; k < K; k++) fill_row(k, 1.5 * k);
    #pragma acc update self(table)

    double s = 0, t = 0;
    for (i = 0; i < N; i++) s += b[i] + idx[i] + nearest[i];
    for (int k = 0; k < K; k++)
        for (j = 0; j < D; j++) t += centers[k][j] * (k + 1) + c[k][j] + table[k][j];
    printf("%.6f %.6f %d %d %d %d\n", s, t, counts[0], counts[1], counts[2], counts[3]);
    free(c);
    return 0;
}
