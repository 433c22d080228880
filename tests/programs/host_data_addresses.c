// yosegi-test: rtol=1e-12
// `host_data use_device`: the host code inside sees device addresses, which it keeps as
// integers; kernels turn them back into pointers (`*((double *) p[i])`, `((double *) q)[k]`)
// and read and write the data there. Built without OpenACC the same code works on host
// addresses.
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#define N 64

int main(void) {
    double *a = (double *)malloc(N * sizeof(double));
    static double b[N];
    size_t *where = (size_t *)malloc(N * sizeof(size_t));
    uintptr_t base_b = 0;
    for (int i = 0; i < N; i++) {
        a[i] = (i * 7) % 13;
        b[i] = i * 0.5;
    }
    #pragma acc enter data copyin(a[0:N], b)
    #pragma acc host_data use_device(a, b)
    {
        // Every third element of `a`, by address; the others 0.
        for (int i = 0; i < N; i++) where[i] = i % 3 == 0 ? (size_t)(a + i) : 0;
        base_b = (uintptr_t)b;
        // A compute construct inside sees the device address too, and uses it as the array.
        #pragma acc parallel loop deviceptr(a)
        for (int i = 0; i < N; i++) a[i] += 0.25;
    }
    double total = 0;
    #pragma acc parallel loop copyin(where[0:N]) reduction(+:total)
    for (int i = 0; i < N; i++) {
        if (where[i] != 0) {
            *((double *)where[i]) += 100;
            total += *((double *)where[i]);
        }
        ((double *)base_b)[i] = ((double *)base_b)[i] * 2 + 1;
    }
    printf("total %.3f\n", total);
    // The same addresses in a `kernels` loop, which stays sequential (a store at a computed
    // address may reach any element): `a` is still on the device, at the same place.
    #pragma acc kernels present(a[0:N]) copyin(where[0:N])
    for (int i = 1; i < N; i++) {
        if (where[i] != 0) *((double *)where[i]) += a[i - 1];
    }
    #pragma acc exit data copyout(a[0:N], b)
    double s = 0;
    for (int i = 0; i < N; i++) s += a[i] * (i + 1) + b[i];
    printf("checksum %.3f\n", s);
    free(a);
    free(where);
    return 0;
}
