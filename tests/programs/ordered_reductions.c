// yosegi-test: rtol=0
// Reductions over at most one block of iterations are folded after the host's value in
// iteration order, so float sums and products print exactly what the sequential program
// prints (compared as text). Larger ones only round differently (checked loosely below).
#include <stdio.h>

#define N 200

static float x[N];
static double y[N];

int main(void) {
    for (int i = 0; i < N; i++) {
        x[i] = 0.1f + (float)((i * 7919) % 1000) / 997.0f;
        y[i] = 1.0 / (double)(i + 3);
    }
    float fsum = 10.0f, fprod = 1.0f, neg = -0.0f;
    double dsum = 0.125, dsum2d = 1.0;
    #pragma acc parallel loop reduction(+:fsum) reduction(*:fprod)
    for (int i = 0; i < N; i++) {
        fsum += x[i] * 3.0f;
        fprod *= 1.0f + x[i] * 1.0e-3f;
    }
    #pragma acc parallel loop reduction(+:dsum)
    for (int i = 0; i < 150; i++) {
        dsum += y[i];
    }
    /* A 2-D nest that fits one block (32 x 8 threads): iteration order is thread order. */
    #pragma acc parallel loop collapse(2) reduction(+:dsum2d)
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 32; j++) {
            dsum2d += y[(i * 32 + j) % N] * (double)(j + 1);
        }
    }
    /* Adding nothing keeps a negative zero. */
    #pragma acc parallel loop reduction(+:neg)
    for (int i = 0; i < 0; i++) {
        neg += 1.0f;
    }
    /* No iteration at all, and iterations adding -0.0: the value stays -0.0. */
    #pragma acc parallel loop reduction(+:neg)
    for (int i = 0; i < 4; i++) {
        neg += -0.0f;
    }
    printf("fsum = %.9g fprod = %.9g\n", fsum, fprod);
    printf("dsum = %.17g dsum2d = %.17g\n", dsum, dsum2d);
    printf("neg = %g\n", neg);
    return 0;
}
