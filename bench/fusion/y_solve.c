/*
 * The shape of NPB BT's y_solve that the fusion research measured (2-D, 4096 x 4096): a first
 * loop computes flux Jacobian terms (fjac, njac) from the solution at every point, a second
 * builds the three diagonals of the system along j from them at j-1, j and j+1. fjac and njac
 * are scratch arrays of the step (the host only allocates and frees them, and the compute
 * construct's own `create` holds them): fused, they stay in shared memory.
 *
 *   yosegi run bench/fusion/y_solve.c -- N STEPS      (default 4096 20)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

static void y_solve(int n, double (*u0)[n], double (*u1)[n], double (*u2)[n], double (*u3)[n],
                    double (*la)[n], double (*lb)[n], double (*lc)[n]) {
    const double c1 = 1.4, c2 = 0.4, c3c4 = 0.1, dt1 = 0.0015, dt2 = 0.0008, dy1 = 0.75;
    double (*fjac)[n] = malloc(sizeof(double[n][n]));
    double (*njac)[n] = malloc(sizeof(double[n][n]));
    #pragma acc kernels present(u0[0:n][0:n], u1[0:n][0:n], u2[0:n][0:n], u3[0:n][0:n], la[0:n][0:n], lb[0:n][0:n], lc[0:n][0:n]) \
                        create(fjac[0:n][0:n], njac[0:n][0:n])
    {
        #pragma acc loop independent collapse(2)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double tmp1 = 1.0 / u0[j][i];
                double tmp2 = tmp1 * tmp1;
                fjac[j][i] = -(u1[j][i] * u2[j][i]) * tmp2 + c2 * (u3[j][i] - 0.5 * (u1[j][i] * u1[j][i] + u2[j][i] * u2[j][i]) * tmp1) * tmp1 * c1;
                njac[j][i] = c3c4 * tmp2 * (u1[j][i] + u2[j][i]) - c3c4 * tmp1 * u3[j][i];
            }
        #pragma acc loop independent collapse(2)
        for (int j = 1; j < n - 1; j++)
            for (int i = 0; i < n; i++) {
                la[j][i] = -dt2 * fjac[j - 1][i] - dt1 * njac[j - 1][i] - dt1 * dy1;
                lb[j][i] = 1.0 + dt1 * 2.0 * njac[j][i] + dt1 * 2.0 * dy1;
                lc[j][i] = dt2 * fjac[j + 1][i] - dt1 * njac[j + 1][i] - dt1 * dy1;
            }
    }
    free(fjac);
    free(njac);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    double (*u0)[n] = malloc(sizeof(double[n][n]));
    double (*u1)[n] = malloc(sizeof(double[n][n]));
    double (*u2)[n] = malloc(sizeof(double[n][n]));
    double (*u3)[n] = malloc(sizeof(double[n][n]));
    double (*la)[n] = malloc(sizeof(double[n][n]));
    double (*lb)[n] = malloc(sizeof(double[n][n]));
    double (*lc)[n] = malloc(sizeof(double[n][n]));
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            u0[j][i] = 1.0 + ((j * 7 + i * 3) % 17) * 0.01;
            u1[j][i] = 0.1 + ((j * 5 + i * 11) % 13) * 0.01;
            u2[j][i] = 0.2 + ((j * 3 + i * 5) % 19) * 0.01;
            u3[j][i] = 2.0 + ((j * 11 + i * 7) % 23) * 0.01;
            la[j][i] = lb[j][i] = lc[j][i] = 0.0;
        }
    double t0 = 0.0, elapsed = 0.0;
    #pragma acc data copyin(u0[0:n][0:n], u1[0:n][0:n], u2[0:n][0:n], u3[0:n][0:n]) copy(la[0:n][0:n], lb[0:n][0:n], lc[0:n][0:n])
    {
    /* Step 0 is a warm-up (kernels loaded, data on the device): the time covers the others. */
    for (int step = 0; step <= steps; step++) {
        if (step == 1) {
            #pragma acc wait
            t0 = now();
        }
        y_solve(n, u0, u1, u2, u3, la, lb, lc);
        #pragma acc parallel loop collapse(2) present(u3[0:n][0:n], lb[0:n][0:n])
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) u3[j][i] += 1.0e-6 * lb[j][i];
    }
    #pragma acc wait
    elapsed = now() - t0;
    }
    double sa = 0.0, sb = 0.0, sc = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            sa += la[j][i];
            sb += lb[j][i] * (1 + (i + j) % 3);
            sc += lc[j][i];
        }
    printf("y_solve shape %d x %d, %d steps\n", n, n, steps);
    printf("checksums %.10e %.10e %.10e\n", sa, sb, sc);
    printf("time: %.6f s\n", elapsed);
    return 0;
}
