// yosegi-test: rtol=1e-12
// Two-dimensional sections of pointers to pointers (deep copy): every data clause on a table
// of rows, row sub-sections (a[x:1][0:m]), nested regions holding the same rows, enter/exit
// data and update of rows, writes through a[i][j] in kernels, rows of different lengths and
// rows that share one allocation, and a table of device pointers under `deviceptr`.
#include <stdio.h>
#include <stdlib.h>
#include <openacc.h>

#define N 7
#define M 9

static double **rows_new(int n, int m, double scale) {
    double **t = (double **)malloc(n * sizeof(double *));
    for (int i = 0; i < n; i++) {
        t[i] = (double *)malloc(m * sizeof(double));
        for (int j = 0; j < m; j++) t[i][j] = scale * (i + 1) + 0.25 * j;
    }
    return t;
}

static void rows_free(double **t, int n) {
    for (int i = 0; i < n; i++) free(t[i]);
    free(t);
}

static double checksum(double **t, int n, int m) {
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) s += t[i][j] * (1 + i + 3 * j);
    return s;
}

/// copyin, copyout, copy and create on tables; present on the kernel.
static void clauses(void) {
    double **a = rows_new(N, M, 1.0);
    double **b = rows_new(N, M, 0.0);
    double **c = rows_new(N, M, 2.0);
    double **scratch = rows_new(N, M, 0.0);
    double **keep = (double **)malloc(N * sizeof(double *));
    for (int i = 0; i < N; i++) keep[i] = b[i];
    #pragma acc data copyin(a[0:N][0:M]) copyout(b[0:N][0:M]) copy(c[0:N][0:M]) create(scratch[0:N][0:M])
    {
        #pragma acc parallel loop collapse(2) present(a[0:N][0:M], scratch[0:N][0:M])
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) scratch[i][j] = a[i][j] * a[i][j];
        #pragma acc parallel loop present(b[0:N][0:M], c[0:N][0:M], scratch[0:N][0:M])
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) {
                b[i][j] = scratch[i][j] - c[i][j];
                c[i][j] += 1.5;
            }
    }
    int same = 1;
    for (int i = 0; i < N; i++) same &= keep[i] == b[i];
    printf("clauses: b %.6f c %.6f scratch-rows-kept %d host-pointers-kept %d\n", checksum(b, N, M), checksum(c, N, M),
           scratch[3] != NULL, same);
    rows_free(a, N);
    rows_free(b, N);
    rows_free(c, N);
    rows_free(scratch, N);
    free(keep);
}

/// A row sub-section per iteration of a host loop, inside a region that holds the whole table:
/// the rows stay present after each inner region, and their data stays current.
static void nested_rows(void) {
    double **a = rows_new(N, M, 1.0);
    double **d = rows_new(N, M, 0.0);
    #pragma acc data copy(a[0:N][0:M])
    {
        for (int x = 0; x < N; x++) {
            #pragma acc data copy(a[x:1][0:M]) copyout(d[x:1][0:M])
            {
                #pragma acc parallel loop present(a[x:1][0:M], d[x:1][0:M])
                for (int y = 0; y < M; y++) {
                    a[x][y] = a[x][y] * 2 + x;
                    d[x][y] = a[x][y] - y;
                }
            }
            // The row is still held by the outer region.
            #pragma acc parallel loop present(a[x:1][0:M])
            for (int y = 0; y < M; y++) a[x][y] += 0.5;
            printf("row %d present %d d %.3f\n", x, acc_is_present(a[x], M * sizeof(double)), d[x][M - 1]);
        }
    }
    printf("nested: a %.6f d %.6f\n", checksum(a, N, M), checksum(d, N, M));
    rows_free(a, N);
    rows_free(d, N);
}

/// Unstructured lifetimes: enter data create, update device/host of single rows, exit data.
static void unstructured(void) {
    double **a = rows_new(N, M, 3.0);
    double **e = rows_new(N, M, 0.0);
    #pragma acc enter data create(a[0:N][0:M], e[0:N][0:M])
    for (int x = 0; x < N; x++) {
        #pragma acc update device(a[x:1][0:M])
        #pragma acc parallel present(a[x:1][0:M], e[x:1][0:M])
        {
            #pragma acc loop
            for (int y = 0; y < M; y++) e[x][y] = a[x][y] + x * y;
        }
        #pragma acc update host(e[x:1][0:M])
    }
    printf("unstructured: e %.6f\n", checksum(e, N, M));
    #pragma acc exit data copyout(e[0:N][0:M]) delete(a[0:N][0:M])
    printf("after exit: e %.6f\n", checksum(e, N, M));
    rows_free(a, N);
    rows_free(e, N);
}

/// Rows of different lengths (a triangle), a partial column section, and no data clause at
/// all: the launch finds the rows through the host's table.
static void ragged(void) {
    double **t = (double **)malloc(N * sizeof(double *));
    for (int i = 0; i < N; i++) {
        t[i] = (double *)malloc((i + 1) * sizeof(double));
        for (int j = 0; j <= i; j++) t[i][j] = i - j;
    }
    #pragma acc parallel loop
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) t[i][j] = t[i][j] * t[i][j] + 1;
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) s += t[i][j] * (j + 1);
    printf("ragged: %.6f\n", s);
    // Only elements 2..5 of every row.
    double **w = rows_new(N, M, 1.0);
    #pragma acc data copy(w[0:N][2:4])
    {
        #pragma acc parallel loop collapse(2)
        for (int i = 0; i < N; i++)
            for (int j = 2; j < 6; j++) w[i][j] = -w[i][j];
    }
    printf("partial: %.6f\n", checksum(w, N, M));
    for (int i = 0; i < N; i++) free(t[i]);
    free(t);
    rows_free(w, N);
}

/// Rows that point into one allocation, an array of row pointers, and a reduction over rows.
static void shared_block(void) {
    double *block = (double *)malloc(N * M * sizeof(double));
    double **r = (double **)malloc(N * sizeof(double *));
    for (int i = 0; i < N; i++) r[i] = block + i * M;
    for (int k = 0; k < N * M; k++) block[k] = k % 5;
    double *fixed[3];
    double f0[4] = {1, 2, 3, 4}, f1[4] = {5, 6, 7, 8}, f2[4] = {9, 10, 11, 12};
    fixed[0] = f0;
    fixed[1] = f1;
    fixed[2] = f2;
    double total = 0;
    #pragma acc data copy(r[0:N][0:M]) copyin(fixed[0:3][0:4])
    {
        #pragma acc parallel loop collapse(2) reduction(+:total)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) {
                r[i][j] = r[i][j] * 10 + fixed[i % 3][j % 4];
                total += r[i][j];
            }
    }
    double s = 0;
    for (int k = 0; k < N * M; k++) s += block[k] * (k + 1);
    printf("shared block: %.6f total %.6f\n", s, total);
    free(block);
    free(r);
}

/// A table the program builds in device memory itself (`acc_malloc`, filled with device
/// addresses), used through `deviceptr`: the kernel follows the program's own pointers.
static void device_table(void) {
    double **table = (double **)acc_malloc(N * sizeof(double *));
    double *rows[N];
    for (int i = 0; i < N; i++) {
        double init[M];
        for (int j = 0; j < M; j++) init[j] = i * M + j;
        rows[i] = (double *)acc_malloc(M * sizeof(double));
        acc_memcpy_to_device(rows[i], init, M * sizeof(double));
    }
    acc_memcpy_to_device(table, rows, N * sizeof(double *));
    double out[N][M];
    #pragma acc parallel loop collapse(2) deviceptr(table) copyout(out)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) out[i][j] = table[i][j] * (i + 1);
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) s += out[i][j] * (j + 1);
    printf("device table: %.6f\n", s);
    for (int i = 0; i < N; i++) acc_free(rows[i]);
    acc_free(table);
}

int main(void) {
    clauses();
    nested_rows();
    unstructured();
    ragged();
    shared_block();
    device_table();
    return 0;
}
