// yosegi-test: rtol=1e-12
// Time-step loops whose body is one compute region, for fusion across steps (several steps in
// one kernel, opt::fusion::steps): PolyBench's Jacobi form (B from A, A copied back from B),
// a step count that no step kernel divides, a loop written with `<=` and `++t`, and a
// counter declared before the loop whose final value the program prints.
#include <stdio.h>

#define N 150
#define M 131

static double A[N][M], B[N][M], C[N][M];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            A[i][j] = ((i * 7 + j * 13) % 23) * 0.5;
            B[i][j] = 0.0;
            C[i][j] = (i + j) % 5;
        }
    int t;
    #pragma acc data copy(A, B) copyin(C)
    {
        for (t = 0; t < 37; t++) {
            #pragma acc parallel loop collapse(2)
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < M - 1; j++)
                    B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
            #pragma acc parallel loop collapse(2)
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < M - 1; j++)
                    A[i][j] = B[i][j];
        }
        /* A second loop: an in-place update that reads a coefficient array. */
        int steps = 11;
        for (int s = 1; s <= steps; ++s) {
            #pragma acc parallel loop collapse(2)
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < M - 1; j++)
                    B[i][j] = A[i][j] + 0.05 * C[i][j] * (A[i - 1][j] + A[i + 1][j] - 2.0 * A[i][j]);
            #pragma acc parallel loop collapse(2)
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < M - 1; j++)
                    A[i][j] = A[i][j] + 0.5 * (B[i][j - 1] + B[i][j + 1] - 2.0 * A[i][j]);
        }
    }
    double s = 0, w = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            s += A[i][j] * (1 + (i + j) % 7);
            w += B[i][j];
        }
    printf("t=%d sum %.12e %.12e\n", t, s, w);
    printf("samples %.12e %.12e %.12e\n", A[1][1], A[N / 2][M / 2], B[N - 2][M - 2]);
    return 0;
}
