// yosegi-test: rtol=1e-5
/* Column writes, the written counterpart of rowsum64.c: thread i reads row i of A and writes
 * rows i of B and C, so at each j a warp's 32 lanes touch 32 rows (a sector per lane). Staged,
 * all three go through tiles the whole block copies with consecutive addresses: A is copied in,
 * C (only written, every element) copied back, B (read and written) copied in and back. Rows
 * of 32 floats, so that the three tiles of a 64-thread block fit its shared memory. */
#include <stdio.h>

#define N 1000

static float A[N][32];
static float B[N][32];
static float C[N][32];

void rowscale(void) {
    #pragma acc parallel loop gang vector vector_length(64) copyin(A) copy(B) copyout(C)
    for (int i = 0; i < N; i++) {
        float run = 0.0f;
        for (int j = 0; j < 32; j++) {
            run = 0.5f * run + A[i][j];
            B[i][j] = B[i][j] + run;
            C[i][j] = run * (float)j;
        }
    }
}

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 32; j++) {
            A[i][j] = (float)((i + 3 * j) % 29) * 0.25f;
            B[i][j] = (float)((7 * i + j) % 13) * 0.5f;
            C[i][j] = -1.0f;
        }
    rowscale();
    double total = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 32; j++) total += (B[i][j] + 0.25 * C[i][j]) * (double)((i + j) % 5);
    printf("rowscale32: total %.6f B[0][31] %.6f C[999][5] %.6f\n", total, B[0][31], C[999][5]);
    return 0;
}
