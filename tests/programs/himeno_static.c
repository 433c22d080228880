// yosegi-test: rtol=2e-3
// Himeno benchmark kernel (19-point 3-D Poisson stencil) with static global arrays, float gosa reduction(+).
// The tolerance is loose because gosa is a float sum of 55800 terms, as in the benchmark: summed
// in order (gcc) it is off by about 4e-4 relative; a tree reduction is closer to the exact value.
#include <stdio.h>

#define MIMAX 33
#define MJMAX 33
#define MKMAX 65

static float p[MIMAX][MJMAX][MKMAX];
static float a[4][MIMAX][MJMAX][MKMAX];
static float b[3][MIMAX][MJMAX][MKMAX];
static float c[3][MIMAX][MJMAX][MKMAX];
static float bnd[MIMAX][MJMAX][MKMAX];
static float wrk1[MIMAX][MJMAX][MKMAX];
static float wrk2[MIMAX][MJMAX][MKMAX];

static int imax, jmax, kmax;
static float omega;

static void initmt(void) {
    for (int i = 0; i < MIMAX; i++)
        for (int j = 0; j < MJMAX; j++)
            for (int k = 0; k < MKMAX; k++) {
                a[0][i][j][k] = 0.0f;
                a[1][i][j][k] = 0.0f;
                a[2][i][j][k] = 0.0f;
                a[3][i][j][k] = 0.0f;
                b[0][i][j][k] = 0.0f;
                b[1][i][j][k] = 0.0f;
                b[2][i][j][k] = 0.0f;
                c[0][i][j][k] = 0.0f;
                c[1][i][j][k] = 0.0f;
                c[2][i][j][k] = 0.0f;
                p[i][j][k] = 0.0f;
                wrk1[i][j][k] = 0.0f;
                wrk2[i][j][k] = 0.0f;
                bnd[i][j][k] = 0.0f;
            }
    for (int i = 0; i < imax; i++)
        for (int j = 0; j < jmax; j++)
            for (int k = 0; k < kmax; k++) {
                a[0][i][j][k] = 1.0f;
                a[1][i][j][k] = 1.0f;
                a[2][i][j][k] = 1.0f;
                a[3][i][j][k] = 1.0f / 6.0f;
                b[0][i][j][k] = 0.0f;
                b[1][i][j][k] = 0.0f;
                b[2][i][j][k] = 0.0f;
                c[0][i][j][k] = 1.0f;
                c[1][i][j][k] = 1.0f;
                c[2][i][j][k] = 1.0f;
                p[i][j][k] = (float)(i * i) / (float)((imax - 1) * (imax - 1));
                wrk1[i][j][k] = 0.0f;
                wrk2[i][j][k] = 0.0f;
                bnd[i][j][k] = 1.0f;
            }
}

static float jacobi(int nn) {
    float gosa = 0.0f;
    #pragma acc data copy(p) copyin(a, b, c, bnd, wrk1) create(wrk2)
    for (int n = 0; n < nn; n++) {
        gosa = 0.0f;
        #pragma acc parallel loop collapse(2) reduction(+:gosa)
        for (int i = 1; i < imax - 1; i++)
            for (int j = 1; j < jmax - 1; j++) {
                #pragma acc loop vector reduction(+:gosa)
                for (int k = 1; k < kmax - 1; k++) {
                    float s0 = a[0][i][j][k] * p[i + 1][j][k]
                             + a[1][i][j][k] * p[i][j + 1][k]
                             + a[2][i][j][k] * p[i][j][k + 1]
                             + b[0][i][j][k] * (p[i + 1][j + 1][k] - p[i + 1][j - 1][k]
                                              - p[i - 1][j + 1][k] + p[i - 1][j - 1][k])
                             + b[1][i][j][k] * (p[i][j + 1][k + 1] - p[i][j - 1][k + 1]
                                              - p[i][j + 1][k - 1] + p[i][j - 1][k - 1])
                             + b[2][i][j][k] * (p[i + 1][j][k + 1] - p[i - 1][j][k + 1]
                                              - p[i + 1][j][k - 1] + p[i - 1][j][k - 1])
                             + c[0][i][j][k] * p[i - 1][j][k]
                             + c[1][i][j][k] * p[i][j - 1][k]
                             + c[2][i][j][k] * p[i][j][k - 1]
                             + wrk1[i][j][k];
                    float ss = (s0 * a[3][i][j][k] - p[i][j][k]) * bnd[i][j][k];
                    gosa = gosa + ss * ss;
                    wrk2[i][j][k] = p[i][j][k] + omega * ss;
                }
            }
        #pragma acc parallel loop collapse(3)
        for (int i = 1; i < imax - 1; i++)
            for (int j = 1; j < jmax - 1; j++)
                for (int k = 1; k < kmax - 1; k++)
                    p[i][j][k] = wrk2[i][j][k];
        printf("iteration %d gosa %.6e\n", n, gosa);
    }
    return gosa;
}

int main(void) {
    imax = MIMAX - 1;
    jmax = MJMAX - 1;
    kmax = MKMAX - 1;
    omega = 0.8f;
    initmt();
    printf("mimax = %d mjmax = %d mkmax = %d\n", MIMAX, MJMAX, MKMAX);
    printf("imax = %d jmax = %d kmax = %d\n", imax, jmax, kmax);
    float gosa = jacobi(4);
    double psum = 0.0;
    for (int i = 0; i < MIMAX; i++)
        for (int j = 0; j < MJMAX; j++)
            for (int k = 0; k < MKMAX; k++) psum += p[i][j][k];
    printf("gosa %.6e\n", gosa);
    printf("psum %.9e\n", psum);
    printf("p %.7e %.7e %.7e\n", p[1][1][1], p[imax / 2][jmax / 2][kmax / 2], p[imax - 2][jmax - 2][kmax - 2]);
    return 0;
}
