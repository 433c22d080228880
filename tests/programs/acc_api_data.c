// yosegi-test: rtol=1e-12
// The OpenACC runtime API moving data together with data clauses: acc_copyin then `present`,
// acc_create then acc_update_device/self, acc_deviceptr through a `deviceptr` clause and back
// with acc_hostptr, acc_malloc memory filled and read with acc_memcpy_*, acc_map_data, and
// acc_memcpy_device between two arrays' device copies. Compiled without Yosegi, openacc.h's
// host-only routines make the same program run on the host alone: both print the same.
#include <stdio.h>
#include <stdlib.h>
#include <openacc.h>

#define N 1000

static double table[N];

static double sum(const double *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i] * (1.0 + (i % 7));
    return s;
}

static void check(const char *what, int ok) { printf("%s: %s\n", what, ok ? "ok" : "WRONG"); }

int main(void) {
    int n = N;
    double *a = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        a[i] = 0.5 * i - 3.0;
        b[i] = 0.0;
        table[i] = 1.0 / (1.0 + i);
    }

    /* acc_copyin, then compute constructs that find the data present. */
    acc_copyin(a, n * sizeof(double));
    acc_copyin(table, sizeof table);
    #pragma acc parallel loop present(a[0:n], table) copyout(b[0:n])
    for (int i = 0; i < n; i++) b[i] = 2.0 * a[i] + table[i];
    #pragma acc parallel loop present(a[0:n])
    for (int i = 0; i < n; i++) a[i] = a[i] * a[i];
    acc_copyout(a, n * sizeof(double));
    acc_delete(table, sizeof table);
    printf("copyin/present: a %.12e b %.12e\n", sum(a, n), sum(b, n));

    /* acc_create, the host fills the array, acc_update_device sends it. */
    double *c = malloc(n * sizeof(double));
    acc_create(c, n * sizeof(double));
    for (int i = 0; i < n; i++) c[i] = (i % 13) - 6.0;
    acc_update_device(c, n * sizeof(double));
    #pragma acc parallel loop present(c[0:n])
    for (int i = 0; i < n; i++) c[i] = 3.0 * c[i] + 1.0;
    acc_update_self(c + 10, 100 * sizeof(double));
    printf("create/update: part %.12e\n", sum(c + 10, 100));
    acc_update_self(c, n * sizeof(double));
    printf("create/update: all %.12e\n", sum(c, n));
    acc_delete(c, n * sizeof(double));

    /* acc_deviceptr into a `deviceptr` clause; acc_hostptr maps back. */
    double *x = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) x[i] = i % 5;
    acc_copyin(x, n * sizeof(double));
    double *dx = acc_deviceptr(x);
    check("acc_hostptr(acc_deviceptr(x)) == x", acc_hostptr(dx) == x);
    check("acc_deviceptr(x + 10) == dx + 10", acc_deviceptr(x + 10) == dx + 10);
    #pragma acc parallel loop deviceptr(dx)
    for (int i = 0; i < n; i++) dx[i] = dx[i] * 10.0 + i;
    acc_copyout(x, n * sizeof(double));
    printf("deviceptr: x %.12e\n", sum(x, n));

    /* acc_malloc memory: filled, computed on, read back. */
    double *host_in = malloc(n * sizeof(double));
    double *host_out = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        host_in[i] = 1.0 + 0.25 * (i % 9);
        host_out[i] = -1.0;
    }
    double *d = acc_malloc(2 * n * sizeof(double));
    check("acc_malloc", d != NULL);
    acc_memcpy_to_device(d, host_in, n * sizeof(double));
    #pragma acc parallel loop deviceptr(d)
    for (int i = 0; i < n; i++) d[n + i] = d[i] * d[i];
    acc_memcpy_device(d, d + n, n * sizeof(double));
    acc_memcpy_from_device(host_out, d + 1, (n - 1) * sizeof(double));
    printf("acc_malloc/memcpy: %.12e last %.6f\n", sum(host_out, n), host_out[n - 1]);
    acc_free(d);

    /* acc_map_data: acc_malloc memory becomes the device copy of a host array. */
    double *m = malloc(n * sizeof(double));
    double *dm = acc_malloc(n * sizeof(double));
    acc_map_data(m, dm, n * sizeof(double));
    check("mapped data is present", acc_is_present(m, n * sizeof(double)));
    /* On the host alone the data is its own device copy. */
    int on_device = acc_get_device_type() != acc_device_host;
    check("acc_deviceptr of mapped data", acc_deviceptr(m) == (on_device ? dm : (double *)m));
    for (int i = 0; i < n; i++) m[i] = i * 0.125;
    acc_update_device(m, n * sizeof(double));
    #pragma acc parallel loop present(m[0:n])
    for (int i = 0; i < n; i++) m[i] = m[i] + i;
    #pragma acc update self(m[0:n])
    printf("map_data: %.12e\n", sum(m, n));
    acc_unmap_data(m);
    acc_free(dm);

    /* acc_memcpy_device between the device copies of two arrays. */
    double *p = malloc(n * sizeof(double));
    double *q = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        p[i] = 0.0;
        q[i] = 7.0 - i % 3;
    }
    #pragma acc data copy(p[0:n]) copyin(q[0:n])
    {
        acc_memcpy_device(acc_deviceptr(p), (double *)acc_deviceptr(q) + 5, (n - 5) * sizeof(double));
        #pragma acc parallel loop present(p[0:n])
        for (int i = 0; i < n; i++) p[i] += 0.5;
    }
    printf("memcpy_device: %.12e first %.3f\n", sum(p, n), p[0]);

    free(a);
    free(b);
    free(c);
    free(x);
    free(host_in);
    free(host_out);
    free(m);
    free(p);
    free(q);
    return 0;
}
