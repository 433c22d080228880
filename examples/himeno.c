/*
 * Himeno benchmark (19-point Jacobi solver of Poisson's equation), OpenACC version for Yosegi.
 *
 * Follows the structure of the original himenoBMTxps.c by Ryutaro Himeno (RIKEN): static
 * global arrays, initmt(), jacobi() returning gosa, MFLOPS computed with 34 floating-point
 * operations per grid point per iteration.
 *
 * Grid size (pick one with -D):  -DSIZE_TINY  17x17x33   (tests)
 *                                -DSIZE_XS    33x33x65   (default; "SSMALL")
 *                                -DSIZE_S     65x65x129  ("SMALL")
 *                                -DSIZE_M     129x129x257 ("MIDDLE")
 *                                -DSIZE_L     257x257x513 ("LARGE")
 *                                -DSIZE_XL    513x513x1025 ("EXTRA LARGE", ~15 GB of arrays)
 * Iterations: -DNN=<count> (default 100; the original times a rehearsal and runs ~60 s).
 *
 *   yosegi run examples/himeno.c
 *   yosegi run -DSIZE_M -DNN=200 examples/himeno.c
 */
#include <stdio.h>
#include <sys/time.h>

/* Or any grid: -DMIMAX=513 -DMJMAX=257 -DMKMAX=513 (weak scaling: twice L along i). */
#if defined(MIMAX)
#elif defined(SIZE_TINY)
#define MIMAX 17
#define MJMAX 17
#define MKMAX 33
#elif defined(SIZE_S)
#define MIMAX 65
#define MJMAX 65
#define MKMAX 129
#elif defined(SIZE_M)
#define MIMAX 129
#define MJMAX 129
#define MKMAX 257
#elif defined(SIZE_XL)
#define MIMAX 513
#define MJMAX 513
#define MKMAX 1025
#elif defined(SIZE_L)
#define MIMAX 257
#define MJMAX 257
#define MKMAX 513
#else
#define MIMAX 33
#define MJMAX 33
#define MKMAX 65
#endif

#ifndef NN
#define NN 100
#endif

static float p[MIMAX][MJMAX][MKMAX];
static float a[4][MIMAX][MJMAX][MKMAX];
static float b[3][MIMAX][MJMAX][MKMAX];
static float c[3][MIMAX][MJMAX][MKMAX];
static float bnd[MIMAX][MJMAX][MKMAX];
static float wrk1[MIMAX][MJMAX][MKMAX];
static float wrk2[MIMAX][MJMAX][MKMAX];

static int imax, jmax, kmax;
static float omega;

static double second(void) {
    struct timeval tm;
    gettimeofday(&tm, NULL);
    return (double)tm.tv_sec + (double)tm.tv_usec * 1.0e-6;
}

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
    #pragma acc data present_or_copy(p) present_or_copyin(a, b, c, bnd, wrk1) present_or_create(wrk2)
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
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < imax - 1; i++)
            for (int j = 1; j < jmax - 1; j++) {
                #pragma acc loop vector
                for (int k = 1; k < kmax - 1; k++) p[i][j][k] = wrk2[i][j][k];
            }
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
    printf("imax = %d jmax = %d kmax =%d\n", imax, jmax, kmax);

    /* Same flop count as the benchmark: 34 per interior point per iteration. */
    double nflop = (double)(kmax - 2) * (double)(jmax - 2) * (double)(imax - 2) * 34.0;
    int nn = NN;

    float gosa;
    double cpu0, cpu1, cpu;
    #pragma acc data copy(p) copyin(a, b, c, bnd, wrk1) create(wrk2)
    {
        /* Rehearsal: the first iterations include the transfers and warm-up. */
        cpu0 = second();
        gosa = jacobi(3);
        cpu1 = second();
        cpu = cpu1 - cpu0;
        printf(" Rehearsal: 3 iterations in %f s, gosa %e\n", cpu, gosa);

        printf(" Measure the performance in %d times.\n", nn);
        cpu0 = second();
        gosa = jacobi(nn);
        cpu1 = second();
        cpu = cpu1 - cpu0;
    }
    double mflops = cpu > 0.0 ? nflop / cpu * 1.0e-6 * (double)nn : 0.0;

    printf(" Loop executed for %d times\n", nn);
    printf(" Gosa : %e \n", gosa);
    printf(" MFLOPS measured : %f\tcpu : %f\n", mflops, cpu);
    printf(" Score based on Pentium III 600MHz : %f\n", mflops / 82.84);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: cflags=-DSIZE_TINY -DNN=4
// yosegi-test: rtol=1e-4
// yosegi-test: ignore-lines=MFLOPS Score Rehearsal
