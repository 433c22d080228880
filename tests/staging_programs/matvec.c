// yosegi-test: rtol=1e-5
/* The seed's matrix-product kernel (section 000, Fig. 19): c[id] += a[k] * b[id + k*N] with
 * `a` staged: every thread of a block reads all of `a`. */
#include <stdio.h>

#define N 2048
#define M 512

static float a[M];
static float b[M * N];
static float c[N];

void matvec(int n, int m, const float *restrict a, const float *restrict b, float *restrict c) {
    #pragma acc parallel loop copyin(a[0:m], b[0:n*m]) copy(c[0:n])
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m; k++) c[i] += a[k] * b[i + k * n];
}

int main(void) {
    for (int k = 0; k < M; k++) a[k] = (float)(k % 13) * 0.125f;
    for (int j = 0; j < M * N; j++) b[j] = (float)(j % 17) * 0.0625f;
    for (int i = 0; i < N; i++) c[i] = 1.0f;
    matvec(N, M, a, b, c);
    double sum = 0.0;
    for (int i = 0; i < N; i++) sum += c[i];
    printf("matvec: sum %.6f c[0] %.6f c[777] %.6f\n", sum, c[0], c[777]);
    return 0;
}
