// yosegi-test: rtol=1e-12
// OpenACC reference counting through the runtime API and the directives together:
// acc_is_present before and after, acc_copyin/acc_create counted with `enter data`, a `data`
// construct's structured count that `_finalize` leaves alone, acc_copyout_finalize and
// acc_delete_finalize, the present_or_ forms, the async forms with acc_wait, the queue
// routines and the device queries. On the host alone (gcc with openacc.h's host routines)
// every address is present: the program prints "ok" either way when the answers are right.
#include <stdio.h>
#include <stdlib.h>
#include <openacc.h>

#define N 512

static int on_device;

/* `expected` is the answer with a device; compiled for the host alone all data is present. */
static void presence(const char *what, void *p, size_t bytes, int expected) {
    int got = acc_is_present(p, bytes) != 0;
    int want = on_device ? expected : 1;
    printf("%-44s %s\n", what, got == want ? "ok" : "WRONG");
}

static double local_sum(void) {
    double s[64];
    for (int i = 0; i < 64; i++) s[i] = i;
    acc_copyin(s, sizeof s);
    presence("a stack array after acc_copyin", s, sizeof s, 1);
    #pragma acc parallel loop present(s)
    for (int i = 0; i < 64; i++) s[i] = s[i] * 0.5;
    acc_copyout(s, sizeof s);
    presence("a stack array after acc_copyout", s, sizeof s, 0);
    double t = 0.0;
    for (int i = 0; i < 64; i++) t += s[i];
    return t;
}

int main(void) {
    on_device = acc_get_device_type() != acc_device_host;
    int n = N;
    size_t bytes = n * sizeof(double);
    double *a = malloc(bytes);
    double *b = malloc(bytes);
    for (int i = 0; i < n; i++) {
        a[i] = i % 11;
        b[i] = 0.0;
    }

    presence("before anything", a, bytes, 0);
    acc_copyin(a, bytes);
    acc_copyin(a, bytes);
    #pragma acc enter data copyin(a[0:n])
    presence("after three enters", a, bytes, 1);
    presence("a part of it", a + 100, 8 * sizeof(double), 1);
    presence("more than was copied in", a, bytes + sizeof(double), 0);
    acc_delete(a, bytes);
    #pragma acc exit data delete(a[0:n])
    presence("after two of three exits", a, bytes, 1);
    #pragma acc parallel loop present(a[0:n]) copy(b[0:n])
    for (int i = 0; i < n; i++) b[i] = a[i] + 1.0;
    acc_delete(a, bytes);
    presence("after the last exit", a, bytes, 0);

    /* finalize: every dynamic hold goes at once. */
    acc_create(b, bytes);
    acc_pcreate(b, bytes);
    acc_present_or_copyin(b, bytes);
    acc_pcopyin(b, bytes);
    presence("after four enters", b, bytes, 1);
    acc_copyout_finalize(b, bytes);
    presence("after acc_copyout_finalize", b, bytes, 0);
    double sb = 0.0;
    for (int i = 0; i < n; i++) sb += b[i];
    printf("b sum %.6f\n", sb);

    /* A structured construct holds the data whatever the dynamic count does. */
    #pragma acc data copy(a[0:n])
    {
        acc_copyin(a, bytes);
        acc_copyin(a, bytes);
        acc_delete_finalize(a, bytes);
        presence("inside data after acc_delete_finalize", a, bytes, 1);
        #pragma acc parallel loop present(a[0:n])
        for (int i = 0; i < n; i++) a[i] = 2.0 * a[i];
    }
    presence("after the data construct", a, bytes, 0);
    double sa = 0.0;
    for (int i = 0; i < n; i++) sa += a[i];
    printf("a sum %.6f\n", sa);

    /* The async forms and the queue routines. */
    double *c = malloc(bytes);
    for (int i = 0; i < n; i++) c[i] = 1.0;
    acc_copyin_async(c, bytes, 1);
    acc_create_async(b, bytes, 2);
    acc_wait(1);
    #pragma acc parallel loop present(c[0:n], b[0:n]) async(2)
    for (int i = 0; i < n; i++) b[i] = c[i] * 4.0;
    acc_wait_async(2, 1);
    acc_update_self_async(b, bytes, 1);
    acc_wait_all();
    printf("async test %d all %d\n", acc_async_test(1) != 0, acc_async_test_all() != 0);
    int queues[3] = {acc_async_sync, 2, 1};
    printf("wait_any %d\n", acc_wait_any(3, queues));
    acc_copyout_async(b, bytes, 2);
    acc_delete_async(c, bytes, 1);
    acc_wait_all_async(3);
    acc_wait(3);
    presence("after the async exits", c, bytes, 0);
    double sc = 0.0;
    for (int i = 0; i < n; i++) sc += b[i];
    printf("async b sum %.6f\n", sc);
    printf("default async %d\n", acc_get_default_async() >= 0);

    printf("stack %.3f\n", local_sum());

    printf("devices >= 1: %s\n", acc_get_num_devices(acc_get_device_type()) >= 1 ? "ok" : "WRONG");
    printf("device num 0: %s\n", acc_get_device_num(acc_get_device_type()) == 0 ? "ok" : "WRONG");
    const char *name = acc_get_property_string(0, acc_get_device_type(), acc_property_name);
    printf("device has a name: %s\n", name != NULL && name[0] != '\0' ? "ok" : "WRONG");

    free(a);
    free(b);
    free(c);
    return 0;
}
