// yosegi-test: rtol=1e-6
// Single precision: SAXPY chain and a float nonlinear update, with float literals and float math.
#include <stdio.h>
#include <math.h>

#define N 8192

static float x[N], y[N], z[N];

int main(void) {
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 100) * 0.01f;
        y[i] = 1.0f - (float)(i % 37) * 0.02f;
    }
    const float alpha = 2.5f;
    for (int rep = 0; rep < 4; rep++) {
        #pragma acc parallel loop copyin(x) copy(y)
        for (int i = 0; i < N; i++) y[i] = alpha * x[i] + y[i] * 0.5f;
    }
    #pragma acc parallel loop copyin(x, y) copyout(z)
    for (int i = 0; i < N; i++) z[i] = sqrtf(fabsf(y[i])) * (x[i] - 0.5f) / (1.0f + x[i] * x[i]);
    double s = 0.0;
    for (int i = 0; i < N; i++) s += (double)z[i];
    printf("y %.8e %.8e %.8e\n", (double)y[0], (double)y[123], (double)y[N - 1]);
    printf("z %.8e %.8e\n", (double)z[7], (double)z[4095]);
    printf("sum %.10e\n", s);
    return 0;
}
