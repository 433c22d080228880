// Loops marked independent whose iterations write the same element (as PolyBench-ACC's mvt,
// gemver and lu do): the racing loop, and those inside it, run in order, giving gcc's answer.
// A loop over `j` whose every iteration updates x[i]; a triangular inner loop over a
// function-scope variable; an outer loop whose every iteration writes a[0].
#include <stdio.h>
#define N 64
static double A[N][N], x[N], y[N], a[N], s[1], sym[N][N];

int main(void) {
    int i, j, j2;
    for (i = 0; i < N; i++) {
        y[i] = (i % 5) * 0.25;
        x[i] = i * 0.5;
        for (j = 0; j < N; j++) A[i][j] = ((i * 7 + j * 3) % 11) / 4.0;
    }
    #pragma acc data copy(x, a, s, sym) copyin(A, y)
    {
        #pragma acc parallel
        {
            #pragma acc loop
            for (i = 0; i < N; i++)
                #pragma acc loop
                for (j = 0; j < N; j++)
                    x[i] = x[i] + A[i][j] * y[j];
            #pragma acc loop
            for (i = 0; i < N; i++)
                #pragma acc loop
                for (j2 = i; j2 < N; j2++) {
                    sym[i][j2] = A[i][j2] + A[j2][i];
                    sym[j2][i] = sym[i][j2];
                }
        }
        #pragma acc parallel loop
        for (i = 0; i < N; i++) {
            a[0] = i;
            s[0] += x[i];
        }
    }
    double t = 0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) t += sym[i][j] * (i + 1) - x[j];
    printf("%.6f %.1f %.6f\n", t, a[0], s[0]);
    return 0;
}
