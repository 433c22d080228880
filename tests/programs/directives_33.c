// yosegi-test: rtol=1e-9
// OpenACC 3.3 directives and clauses: init/shutdown/set, device_type scoping, attach/detach,
// no_create, self(cond), create(zero:) on an array the kernel overwrites, readonly, gang/worker/
// vector arguments, data async/wait, loop auto over a dependence, acc_on_device in a kernel.
#include <stdio.h>
#include <stdlib.h>
#include <openacc.h>

typedef struct { double *a; double *b; int n; } pair_t;

int main(void) {
    int n = 1000;
    int dev = acc_get_device_num(acc_device_nvidia);
    #pragma acc init
    #pragma acc init device_type(nvidia) device_num(dev)
    #pragma acc set device_num(dev) device_type(nvidia)
    #pragma acc set default_async(1) if(n > 0)
    #pragma acc set device_type(host)

    double *x = malloc(n * sizeof(double));
    double *y = malloc(n * sizeof(double));
    double *z = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) { x[i] = i * 0.5; y[i] = 1.0; z[i] = 7.0; }

    // Clauses after device_type(host) do not apply here; those after nvidia do.
    #pragma acc parallel loop copyin(readonly: x[0:n]) copy(y[0:n]) device_type(host) num_gangs(1) device_type(nvidia) vector_length(64)
    for (int i = 0; i < n; i++) y[i] += x[i];

    #pragma acc parallel loop gang(static: 4) copyin(x[0:n]) create(zero: z[0:n]) copyout(z[0:n]) dtype(*) async(2)
    for (int i = 0; i < n; i++) z[i] = 2.0 * x[i];
    #pragma acc wait

    #pragma acc data copy(y[0:n]) async(1) wait(1)
    {
        #pragma acc parallel loop gang(num: 8) worker(num: 2) vector(length: 32) no_create(x[0:n]) self(n < 0)
        for (int i = 0; i < n; i++) y[i] = y[i] * 2.0 + x[i];
    }
    #pragma acc wait(1)

    pair_t p;
    p.n = n;
    p.a = malloc(n * sizeof(double));
    p.b = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) { p.a[i] = i; p.b[i] = 2.0 * i; }
    #pragma acc enter data copyin(p.a[0:n], p.b[0:n])
    #pragma acc enter data copyin(p) attach(p.a, p.b)
    #pragma acc parallel loop default(present)
    for (int i = 0; i < n; i++) p.a[i] = p.a[i] + p.b[i];
    #pragma acc exit data detach(p.a, p.b)
    #pragma acc exit data copyout(p.a[0:n], p.b[0:n])
    #pragma acc exit data delete(p)

    // A running sum: `auto` leaves the decision to the compiler, which keeps it sequential.
    #pragma acc parallel loop auto copy(z[0:n])
    for (int i = 1; i < n; i++) z[i] = z[i - 1] + z[i];

    // On the device acc_on_device(acc_device_nvidia) is 1 and acc_on_device(acc_device_host)
    // 0; compiled without OpenACC the other way round: the sum is 1 both ways.
    int on = 0;
    #pragma acc serial copy(on)
    {
        on = acc_on_device(acc_device_host) + acc_on_device(acc_device_nvidia);
    }

    // `self` with no condition: the construct runs on the host.
    int host_count = 0;
    #pragma acc parallel loop self reduction(+:host_count)
    for (int i = 0; i < n; i++) host_count += 1;

    #pragma acc shutdown device_type(nvidia)
    #pragma acc shutdown if(n < 0)

    double sy = 0, sz = 0, sa = 0;
    for (int i = 0; i < n; i++) { sy += y[i]; sz += z[i]; sa += p.a[i]; }
    printf("y %.6f\nz %.6f last %.6f\na %.6f\non %d\nhost_count %d\n", sy, sz, z[n - 1], sa, on, host_count);
    free(x); free(y); free(z); free(p.a); free(p.b);
    return 0;
}
