/*
 * Livermore Loop 18 (2-D explicit hydrodynamics fragment) at GPU sizes, as plain OpenACC: three
 * loops per step in one `kernels` region. The first writes za and zb, which the second reads at
 * (k, j-1) and (k+1, j); the third updates zr and zz, which the first two read, so a legal
 * fusion runs the first two as one kernel and the third on its own.
 *
 *   yosegi run bench/fusion/ll18.c -- KN JN STEPS      (default 4096 4096 20)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

int main(int argc, char **argv) {
    int kn = argc > 1 ? atoi(argv[1]) : 4096;
    int jn = argc > 2 ? atoi(argv[2]) : 4096;
    int steps = argc > 3 ? atoi(argv[3]) : 20;
    const double s = 0.0041, t = 0.0037;
    double (*za)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zb)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zp)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zq)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zr)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zm)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zu)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zv)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    double (*zz)[jn + 1] = malloc(sizeof(double[kn + 1][jn + 1]));
    for (int k = 0; k <= kn; k++)
        for (int j = 0; j <= jn; j++) {
            za[k][j] = zb[k][j] = 0.0;
            zp[k][j] = 1.0 + ((k * 7 + j * 3) % 17) * 0.01;
            zq[k][j] = 1.0 + ((k * 5 + j * 11) % 13) * 0.01;
            zr[k][j] = 1.0 + ((k * 3 + j * 5) % 19) * 0.01;
            zm[k][j] = 1.0 + ((k * 11 + j * 7) % 23) * 0.01;
            zu[k][j] = ((k + j) % 7) * 0.001;
            zv[k][j] = ((k * 2 + j) % 5) * 0.001;
            zz[k][j] = 1.0 + ((k + 2 * j) % 29) * 0.01;
        }
    double t0 = 0.0, elapsed = 0.0;
    #pragma acc data copyin(zp[0:kn+1][0:jn+1], zq[0:kn+1][0:jn+1], zm[0:kn+1][0:jn+1]) \
                     copy(zr[0:kn+1][0:jn+1], zz[0:kn+1][0:jn+1], zu[0:kn+1][0:jn+1], zv[0:kn+1][0:jn+1]) \
                     create(za[0:kn+1][0:jn+1], zb[0:kn+1][0:jn+1])
    {
    /* Step 0 is a warm-up (kernels loaded, data on the device): the time covers the others. */
    for (int step = 0; step <= steps; step++) {
        if (step == 1) {
            #pragma acc wait
            t0 = now();
        }
        #pragma acc kernels
        {
            #pragma acc loop independent collapse(2)
            for (int k = 1; k < kn; k++)
                for (int j = 1; j < jn; j++) {
                    za[k][j] = (zp[k + 1][j - 1] + zq[k + 1][j - 1] - zp[k][j - 1] - zq[k][j - 1]) * (zr[k][j] + zr[k][j - 1]) / (zm[k][j - 1] + zm[k + 1][j - 1]);
                    zb[k][j] = (zp[k][j - 1] + zq[k][j - 1] - zp[k][j] - zq[k][j]) * (zr[k][j] + zr[k - 1][j]) / (zm[k][j] + zm[k][j - 1]);
                }
            #pragma acc loop independent collapse(2)
            for (int k = 1; k < kn; k++)
                for (int j = 1; j < jn; j++) {
                    zu[k][j] += s * (za[k][j] * (zz[k][j] - zz[k][j + 1]) - za[k][j - 1] * (zz[k][j] - zz[k][j - 1]) - zb[k][j] * (zz[k][j] - zz[k - 1][j]) + zb[k + 1][j] * (zz[k][j] - zz[k + 1][j]));
                    zv[k][j] += s * (za[k][j] * (zr[k][j] - zr[k][j + 1]) - za[k][j - 1] * (zr[k][j] - zr[k][j - 1]) - zb[k][j] * (zr[k][j] - zr[k - 1][j]) + zb[k + 1][j] * (zr[k][j] - zr[k + 1][j]));
                }
            #pragma acc loop independent collapse(2)
            for (int k = 1; k < kn; k++)
                for (int j = 1; j < jn; j++) {
                    zr[k][j] = zr[k][j] + t * zu[k][j];
                    zz[k][j] = zz[k][j] + t * zv[k][j];
                }
        }
    }
    #pragma acc wait
    elapsed = now() - t0;
    }
    double sr = 0.0, sz = 0.0, su = 0.0;
    for (int k = 0; k <= kn; k++)
        for (int j = 0; j <= jn; j++) {
            sr += zr[k][j];
            sz += zz[k][j] * (1 + (k + j) % 3);
            su += zu[k][j] + zv[k][j];
        }
    printf("LL18 %d x %d, %d steps\n", kn, jn, steps);
    printf("checksums %.10e %.10e %.10e\n", sr, sz, su);
    printf("time: %.6f s\n", elapsed);
    return 0;
}
