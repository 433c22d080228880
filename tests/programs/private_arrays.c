// yosegi-test: rtol=1e-9
// private and firstprivate arrays on parallel: each gang's copy of a section (the pattern of
// the OpenACC V&V tests parallel_private and parallel_firstprivate), a firstprivate section
// the loop only reads, and a firstprivate fixed-size array.
#include <stdio.h>
#include <stdlib.h>

#define ROWS 16

int main(void) {
    int n = 300;
    double *a = malloc(ROWS * n * sizeof(double));
    double *b = malloc(ROWS * n * sizeof(double));
    double *c = malloc(n * sizeof(double));
    double *d = malloc(ROWS * sizeof(double));
    double *e = malloc(ROWS * n * sizeof(double));
    double w[4] = {0.5, 1.0, 2.0, 4.0};
    for (int x = 0; x < ROWS * n; x++) {
        a[x] = (x % 13) * 0.5;
        b[x] = (x % 7) * 0.25;
    }
    for (int y = 0; y < n; y++) c[y] = y * 0.001;
    for (int x = 0; x < ROWS; x++) d[x] = 0.0;

    #pragma acc parallel num_gangs(ROWS) private(c[0:n]) copyin(a[0:ROWS*n], b[0:ROWS*n]) copy(d[0:ROWS])
    {
        #pragma acc loop gang
        for (int x = 0; x < ROWS; x++) {
            #pragma acc loop worker
            for (int y = 0; y < n; y++)
                c[y] = a[x * n + y] + b[x * n + y];
            #pragma acc loop seq
            for (int y = 0; y < n; y++)
                d[x] += c[y] * (y % 3);
        }
    }
    double sum = 0.0;
    for (int x = 0; x < ROWS; x++) sum += d[x];
    printf("private %.6f\n", sum);
    // The sequential program leaves the last iteration's values in c; the private copies
    // never reach the host (OpenACC's private), so set c again before using it.
    for (int y = 0; y < n; y++) c[y] = y * 0.001;

    // firstprivate: each gang overwrites the even elements of its copy and reads all of them
    // (the odd ones keep the host's values). Every iteration writes before it reads, so the
    // answer is the sequential one; the host's c keeps its values (OpenACC's firstprivate).
    #pragma acc parallel firstprivate(c[0:n]) copyin(a[0:ROWS*n], b[0:ROWS*n]) copyout(e[0:ROWS*n])
    {
        #pragma acc loop gang
        for (int x = 0; x < ROWS; x++) {
            #pragma acc loop worker
            for (int y = 0; y < n; y += 2)
                c[y] = a[x * n + y] - b[x * n + y];
            #pragma acc loop worker
            for (int y = 0; y < n; y++)
                e[x * n + y] = c[y] * w[y % 4];
        }
    }
    sum = 0.0;
    for (int x = 0; x < ROWS * n; x++) sum += e[x];
    printf("firstprivate %.6f c[1]=%.3f\n", sum, c[1]);

    // A fixed-size array, firstprivate: each iteration sets one element and reads all four.
    #pragma acc parallel loop firstprivate(w) copyout(d[0:ROWS])
    for (int x = 0; x < ROWS; x++) {
        w[0] = x * 0.5;
        d[x] = w[0] + w[1] + w[2] + w[3];
    }
    for (int x = 0; x < ROWS; x++) printf("%g ", d[x]);
    printf("\n");
    free(a); free(b); free(c); free(d); free(e);
    return 0;
}
