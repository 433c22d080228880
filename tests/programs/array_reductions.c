// yosegi-test: rtol=0
// Reductions on arrays and array sections (OpenACC 2.7): whole fixed-size arrays, sections of
// allocated arrays and single elements, with every operator. The arrays' values at the
// construct take part, as in the sequential program. Floating-point sums and products use
// values whose results are exact in any order.
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#define N 4000

int main(void) {
    int hist[10];
    double c[8];
    double prod[4];
    float maxs[5], mins[5];
    unsigned band[6], bor[6], bxor[6];
    char land[5], lor[5];
    long long big[3] = {1, 2, 3};
    int errors[4] = {0, 0, 0, 0};
    int *a = malloc(N * sizeof(int));
    double *acc = malloc(16 * sizeof(double));

    for (int i = 0; i < N; i++) a[i] = (i * 7919) % 1000;
    for (int k = 0; k < 10; k++) hist[k] = 100;
    for (int k = 0; k < 8; k++) c[k] = 0.5;
    for (int k = 0; k < 4; k++) prod[k] = 3.0;
    for (int k = 0; k < 5; k++) {
        maxs[k] = -1.0f;
        mins[k] = 500.0f;
        land[k] = 1;
        lor[k] = 0;
    }
    for (int k = 0; k < 6; k++) {
        band[k] = 0xffffffffu;
        bor[k] = 0x100u;
        bxor[k] = 0x5u;
    }
    for (int k = 0; k < 16; k++) acc[k] = k;

    #pragma acc data copyin(a[0:N]) copy(acc[0:16])
    {
        #pragma acc parallel loop reduction(+:hist)
        for (int i = 0; i < N; i++) {
            hist[a[i] % 10]++;
        }
        #pragma acc parallel loop reduction(+:c[0:8])
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < 8; k++) {
                c[k] += 0.25 * (a[i] % 4) + k;
            }
        }
        #pragma acc parallel loop reduction(*:prod)
        for (int i = 0; i < 40; i++) {
            prod[i % 4] *= (i % 2) ? 2.0 : 0.5 * 3.0;
        }
        #pragma acc parallel loop reduction(max:maxs) reduction(min:mins)
        for (int i = 0; i < N; i++) {
            maxs[i % 5] = fmaxf(maxs[i % 5], (float)a[i]);
            mins[i % 5] = fmin((double)a[i] + 0.5, mins[i % 5]);
        }
        #pragma acc parallel loop reduction(&:band) reduction(|:bor) reduction(^:bxor)
        for (int i = 0; i < N; i++) {
            band[i % 6] = band[i % 6] & ~(1u << (a[i] % 31));
            bor[i % 6] |= 1u << (a[i] % 17);
            bxor[i % 6] = (unsigned)a[i] ^ bxor[i % 6];
        }
        #pragma acc parallel loop reduction(&&:land) reduction(||:lor)
        for (int i = 0; i < N; i++) {
            land[i % 5] = land[i % 5] && (a[i] != 0 || i % 5 != 3);
            lor[i % 5] = lor[i % 5] || a[i] == 999;
        }
        #pragma acc parallel loop reduction(+:big[0:3])
        for (int i = 0; i < N; i++) {
            big[i % 3] += (long long)a[i] * 1000000000LL;
            big[(i + 1) % 3] -= 1;
        }
        for (int k = 0; k < 4; k++) {
            #pragma acc parallel loop reduction(+:errors[k])
            for (int i = 0; i < N; i++) {
                if (a[i] % 4 == k) errors[k] += 1;
            }
        }
        #pragma acc parallel loop reduction(+:acc[4:8])
        for (int i = 0; i < N; i++) {
            acc[4 + i % 8] += 1.0;
        }
    }

    for (int k = 0; k < 10; k++) printf("hist[%d] = %d\n", k, hist[k]);
    for (int k = 0; k < 8; k++) printf("c[%d] = %.17g\n", k, c[k]);
    for (int k = 0; k < 4; k++) printf("prod[%d] = %.17g\n", k, prod[k]);
    for (int k = 0; k < 5; k++) printf("maxs[%d] = %g mins[%d] = %g land %d lor %d\n", k, maxs[k], k, mins[k], land[k], lor[k]);
    for (int k = 0; k < 6; k++) printf("band %08x bor %08x bxor %08x\n", band[k], bor[k], bxor[k]);
    for (int k = 0; k < 3; k++) printf("big[%d] = %lld\n", k, big[k]);
    for (int k = 0; k < 4; k++) printf("errors[%d] = %d\n", k, errors[k]);
    for (int k = 0; k < 16; k++) printf("acc[%d] = %g\n", k, acc[k]);
    free(a);
    free(acc);
    return 0;
}
