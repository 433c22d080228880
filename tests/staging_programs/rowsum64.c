// yosegi-test: rtol=1e-5
/* The bank-conflict example of section 001: A[N][64] floats, thread i sums row i. Staged, a warp
 * reads a column of the tile: with rows of 64 words every lane hits the same bank (degree 32);
 * padded to 65 words per row the column spreads over all 32 banks (degree 1). */
#include <stdio.h>

#define N 1024

static float A[N][64];
static float rowsum[N];

void rowsums(void) {
    #pragma acc parallel loop gang vector vector_length(64) copyin(A) copyout(rowsum)
    for (int i = 0; i < N; i++) {
        float s = 0.0f;
        for (int j = 0; j < 64; j++) s += A[i][j];
        rowsum[i] = s;
    }
}

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 64; j++) A[i][j] = (float)((i + 3 * j) % 29) * 0.25f;
    rowsums();
    double total = 0.0;
    for (int i = 0; i < N; i++) total += rowsum[i] * (double)(i % 5);
    printf("rowsum64: total %.6f rowsum[0] %.6f rowsum[1000] %.6f\n", total, rowsum[0], rowsum[1000]);
    return 0;
}
