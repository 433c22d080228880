// Loops marked independent whose iterations use each other's results, as PolyBench-ACC's
// cholesky, trmm, durbin and dynprog do: Yosegi finds a witness (two iterations touching one
// element) and runs the loop that carries the dependence in order, with a warning, giving
// gcc's answer. Loops next to them with no such witness stay parallel.
#include <stdio.h>
#define N 96
static double A[N][N], B[N][N], G[N][N], L[N][N], b[N], p[N], beta[N], tail[N];

int main(void) {
    int i, j, k;
    double x, last = 0.0, acc = 0.0;
    for (i = 0; i < N; i++) {
        b[i] = 1.0 + (i % 7) * 0.125;
        beta[i] = 0.5 + (i % 3) * 0.25;
        for (j = 0; j < N; j++) {
            A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1.0 + i + j);
            B[i][j] = ((i * 5 + j * 3) % 13) * 0.0625;
            G[i][j] = (i + j) % 4;
            L[i][j] = (i * j) % 9 * 0.125;
        }
    }
    #pragma acc data copy(A, B, G, L, b, p, beta, tail)
    {
        #pragma acc parallel
        {
            // cholesky: iteration i reads the column entries earlier iterations wrote.
            #pragma acc loop
            for (i = 0; i < N; i++) {
                x = A[i][i];
                for (j = 0; j <= i - 1; j++) x = x - A[i][j] * A[i][j];
                p[i] = 1.0 / x;
                for (j = i + 1; j < N; j++) {
                    x = A[i][j];
                    for (k = 0; k <= i - 1; k++) x = x - A[j][k] * A[i][k];
                    A[j][i] = x * p[i];
                }
            }
            // trmm: row i reads rows j < ... that their own iterations update.
            #pragma acc loop
            for (i = 1; i < N; i++)
                for (j = 0; j < N; j++)
                    for (k = 0; k < i; k++) B[i][j] += 0.01 * L[i][k] * B[j][k];
            // durbin's first-order recurrence.
            #pragma acc loop
            for (k = 1; k < N; k++) beta[k] = beta[k - 1] * 0.75 + b[k] * 0.25;
            // A dependence along the inner dim only: the loop over i stays parallel.
            #pragma acc loop collapse(2)
            for (i = 0; i < N; i++)
                for (j = 2; j < N; j += 2) G[i][j] = G[i][j - 2] * 0.5 + 1.0;
            // Independent: each iteration reads elements no iteration writes.
            #pragma acc loop
            for (i = 0; i < N / 2; i++) tail[i] = b[i + N / 2] * 2.0;
        }
        // A scalar carried from one iteration to the next (dynprog's `out_l += ...`), and one
        // whose last value the host reads after the loop.
        #pragma acc parallel loop
        for (i = 0; i < N; i++) {
            acc += b[i] * (i + 1);
            b[i] = acc * 0.001;
        }
        #pragma acc parallel loop
        for (i = 0; i < N; i++) {
            last = beta[i] * 3.0;
            beta[i] = last - 1.0;
        }
    }
    double sa = 0, sb = 0, sg = 0, sx = 0;
    for (i = 0; i < N; i++) {
        sx += p[i] + b[i] * (i + 1) + beta[i] + tail[i];
        for (j = 0; j < N; j++) {
            sa += A[i][j] * (j + 1);
            sb += B[i][j] * (i + 1);
            sg += G[i][j] * (j % 5 + 1);
        }
    }
    printf("%.9e %.9e %.9e %.9e %.9e %.9e\n", sa, sb, sg, sx, acc, last);
    return 0;
}
