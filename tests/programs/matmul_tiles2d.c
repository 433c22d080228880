// yosegi-test: rtol=1e-12
// A 2-D matrix product c[j][i] += a[j][k] * b[k][i] whose k loop is too long for one tile of
// `b`'s columns (and `a`'s rows): a staged variant loads `b` strip by strip while `a` may be
// staged whole, and each reference must be rebased on its own tile. Sizes are not multiples of
// any block side.
#include <stdio.h>

#define NI 45
#define NJ 13
#define NK 300

static double a[NJ][NK];
static double b[NK][NI];
static double c[NJ][NI];

static void matmul(void) {
    #pragma acc parallel loop
    for (int j = 0; j < NJ; j++) {
        #pragma acc loop
        for (int i = 0; i < NI; i++) {
            double s = c[j][i];
            for (int k = 0; k < NK; k++) s += a[j][k] * b[k][i];
            c[j][i] = s;
        }
    }
}

int main(void) {
    for (int j = 0; j < NJ; j++)
        for (int k = 0; k < NK; k++) a[j][k] = (double)((j * 7 + k * 3) % 11) / 11.0;
    for (int k = 0; k < NK; k++)
        for (int i = 0; i < NI; i++) b[k][i] = (double)((k * 5 + i) % 13) / 13.0;
    for (int j = 0; j < NJ; j++)
        for (int i = 0; i < NI; i++) c[j][i] = (double)(i - j);
    matmul();
    double sum = 0.0, weighted = 0.0;
    for (int j = 0; j < NJ; j++)
        for (int i = 0; i < NI; i++) {
            sum += c[j][i];
            weighted += c[j][i] * (double)((i + 2 * j) % 5);
        }
    printf("sum %.15e\nweighted %.15e\nc[0][0] %.15e\nc[NJ-1][NI-1] %.15e\n", sum, weighted, c[0][0], c[NJ - 1][NI - 1]);
    return 0;
}
