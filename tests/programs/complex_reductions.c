// yosegi-test: rtol=1e-9
// Reductions on complex scalars: `+` and `*` on float, double and long double _Complex, over
// one block of iterations (folded in iteration order: the sequential sums) and over many
// blocks, a complex product whose parts combine together, two loops of one construct reducing
// into one variable, and a `kernels` loop whose accumulation is recognised without a clause.
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100
#define BIG 5000

static void show(const char *what, double complex z) {
    printf("%s = %.12g %+.12gi\n", what, creal(z), cimag(z));
}

int main(void) {
    float complex *fa = malloc(N * sizeof(float complex));
    double complex *da = malloc(BIG * sizeof(double complex));
    long double complex *la = malloc(N * sizeof(long double complex));
    for (int i = 0; i < N; i++) {
        fa[i] = (float)((i * 37) % 101) / 10.0f + (float)((i * 53) % 97) / 10.0f * I;
        la[i] = (long double)i / 8.0L - (long double)(i % 5) * I;
    }
    for (int i = 0; i < BIG; i++) {
        da[i] = 1.0 + 0.0001 * (i % 17) - 0.0002 * (i % 13) * I;
    }

    /* One block: float sums exactly as the sequential loop computes them. */
    float complex fsum = 10 + 10 * I;
    #pragma acc parallel loop reduction(+:fsum) copyin(fa[0:N])
    for (int x = 0; x < N; ++x) {
        fsum += fa[x] + fa[N - 1 - x];
    }
    printf("fsum = %.9g %+.9gi\n", crealf(fsum), cimagf(fsum));

    long double complex lsum = 1.0L;
    #pragma acc parallel loop reduction(+:lsum) copyin(la[0:N])
    for (int x = 0; x < N; ++x) {
        lsum += la[x];
    }
    show("lsum", (double complex)lsum);

    /* Many blocks: sums and a product of numbers near 1 (the parts combine together). */
    double complex dsum = 0, dprod = 1.0 + 0.5 * I;
    #pragma acc parallel loop reduction(+:dsum) reduction(*:dprod) copyin(da[0:BIG])
    for (int x = 0; x < BIG; ++x) {
        dsum += da[x] * da[x];
        dprod *= da[x];
    }
    show("dsum", dsum);
    show("dprod", dprod);

    /* A float complex product over one block. */
    float complex fprod = 1.0f;
    #pragma acc parallel loop reduction(*:fprod)
    for (int x = 0; x < 50; ++x) {
        fprod *= 1.0f + 0.01f * I * (float)(x % 3);
    }
    printf("fprod = %.9g %+.9gi\n", crealf(fprod), cimagf(fprod));

    /* Two loops of one construct reduce into one variable. */
    double complex twice = 0;
    #pragma acc parallel copyin(da[0:BIG])
    {
        #pragma acc loop reduction(+:twice)
        for (int x = 0; x < BIG; ++x) twice += da[x];
        #pragma acc loop reduction(+:twice)
        for (int x = 0; x < BIG; ++x) twice -= 2.0 * I * da[x];
    }
    show("twice", twice);

    /* A kernels loop: the accumulation is recognised as a reduction. */
    double complex ksum = I;
    #pragma acc kernels copyin(da[0:BIG])
    for (int x = 0; x < BIG; ++x) {
        ksum += da[x] / (1.0 + x);
    }
    show("ksum", ksum);

    free(fa);
    free(da);
    free(la);
    return 0;
}
