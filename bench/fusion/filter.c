/*
 * A multi-pass filter in the shape of SPEC95 hydro2d's (10 loops, 3-D 128 x 128 x 128): nine
 * smoothing passes alternately along i and j, each reading the previous pass's result at its
 * neighbours (each over the range the previous one wrote, less its radius), then the output
 * from the input and the last pass. The passes' results are scratch
 * arrays of the call (the host only allocates and frees them; the compute construct's own
 * `create` holds them): fused, the ten loops are one kernel and the scratch arrays stay in
 * shared memory.
 *
 *   yosegi run bench/fusion/filter.c -- N STEPS      (default 128 50)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

static void filter(int nz, int ny, int nx, double (*in)[ny][nx], double (*out)[ny][nx]) {
    double (*t1)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t2)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t3)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t4)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t5)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t6)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t7)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t8)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*t9)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    #pragma acc kernels present(in[0:nz][0:ny][0:nx], out[0:nz][0:ny][0:nx]) create(t1[0:nz][0:ny][0:nx], t2[0:nz][0:ny][0:nx], t3[0:nz][0:ny][0:nx], t4[0:nz][0:ny][0:nx], t5[0:nz][0:ny][0:nx], t6[0:nz][0:ny][0:nx], t7[0:nz][0:ny][0:nx], t8[0:nz][0:ny][0:nx], t9[0:nz][0:ny][0:nx])
    {
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 0; j < ny; j++)
                for (int i = 1; i < nx - 1; i++)
                    t1[k][j][i] = 0.25 * in[k][j][i - 1] + 0.5 * in[k][j][i] + 0.25 * in[k][j][i + 1];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 1; j < ny - 1; j++)
                for (int i = 1; i < nx - 1; i++)
                    t2[k][j][i] = 0.25 * t1[k][j - 1][i] + 0.5 * t1[k][j][i] + 0.25 * t1[k][j + 1][i];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 1; j < ny - 1; j++)
                for (int i = 2; i < nx - 2; i++)
                    t3[k][j][i] = 0.25 * t2[k][j][i - 1] + 0.5 * t2[k][j][i] + 0.25 * t2[k][j][i + 1];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 2; j < ny - 2; j++)
                for (int i = 2; i < nx - 2; i++)
                    t4[k][j][i] = 0.25 * t3[k][j - 1][i] + 0.5 * t3[k][j][i] + 0.25 * t3[k][j + 1][i];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 2; j < ny - 2; j++)
                for (int i = 3; i < nx - 3; i++)
                    t5[k][j][i] = 0.25 * t4[k][j][i - 1] + 0.5 * t4[k][j][i] + 0.25 * t4[k][j][i + 1];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 3; j < ny - 3; j++)
                for (int i = 3; i < nx - 3; i++)
                    t6[k][j][i] = 0.25 * t5[k][j - 1][i] + 0.5 * t5[k][j][i] + 0.25 * t5[k][j + 1][i];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 3; j < ny - 3; j++)
                for (int i = 4; i < nx - 4; i++)
                    t7[k][j][i] = 0.25 * t6[k][j][i - 1] + 0.5 * t6[k][j][i] + 0.25 * t6[k][j][i + 1];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 4; j < ny - 4; j++)
                for (int i = 4; i < nx - 4; i++)
                    t8[k][j][i] = 0.25 * t7[k][j - 1][i] + 0.5 * t7[k][j][i] + 0.25 * t7[k][j + 1][i];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 4; j < ny - 4; j++)
                for (int i = 5; i < nx - 5; i++)
                    t9[k][j][i] = 0.25 * t8[k][j][i - 1] + 0.5 * t8[k][j][i] + 0.25 * t8[k][j][i + 1];
        #pragma acc loop independent collapse(3)
        for (int k = 1; k < nz - 1; k++)
            for (int j = 4; j < ny - 4; j++)
                for (int i = 5; i < nx - 5; i++)
                    out[k][j][i] = in[k][j][i] - t9[k][j][i] + 0.01 * (in[k - 1][j][i] + in[k + 1][j][i]);
    }
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    free(t5);
    free(t6);
    free(t7);
    free(t8);
    free(t9);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 128;
    int steps = argc > 2 ? atoi(argv[2]) : 50;
    int nz = n, ny = n, nx = n;
    double (*in)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    double (*out)[ny][nx] = malloc(sizeof(double[nz][ny][nx]));
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                in[k][j][i] = ((k * 7 + j * 13 + i * 3) % 31) * 0.125;
                out[k][j][i] = 0.0;
            }
    double t0 = 0.0, elapsed = 0.0;
    #pragma acc data copy(in[0:nz][0:ny][0:nx], out[0:nz][0:ny][0:nx])
    {
    /* Step 0 is a warm-up (kernels loaded, data on the device): the time covers the others. */
    for (int step = 0; step <= steps; step++) {
        if (step == 1) {
            #pragma acc wait
            t0 = now();
        }
        filter(nz, ny, nx, in, out);
        #pragma acc parallel loop collapse(3) present(in[0:nz][0:ny][0:nx], out[0:nz][0:ny][0:nx])
        for (int k = 0; k < nz; k++)
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) in[k][j][i] += 0.001 * out[k][j][i];
    }
    #pragma acc wait
    elapsed = now() - t0;
    }
    double s = 0.0, w = 0.0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                s += out[k][j][i];
                w += in[k][j][i] * (1 + (i + j + k) % 5);
            }
    printf("filter %d^3, %d steps\n", n, steps);
    printf("checksums %.10e %.10e\n", s, w);
    printf("time: %.6f s\n", elapsed);
    return 0;
}
