/* Host OpenMP beside OpenACC, as programs written for nvc or gcc -fopenmp have it: the inputs
 * filled under `#pragma omp parallel for`, a timer from omp_get_wtime, the machine queried
 * with omp_get_num_procs and omp_get_max_threads, and between two compute regions a host
 * OpenMP loop that reads and writes an array the device wrote (its hook, once before the
 * construct, makes the host copy current and marks it written). A parallel block whose pointer
 * is its own gets one hook before it (`host_access_all`); a construct whose loop launches a
 * region runs on one thread (a warning says so). What it prints does not depend on the number
 * of threads: integer sums and values each iteration computes alone. */
// yosegi-test: cflags=-fopenmp
// yosegi-test: rtol=0
#include <stdio.h>
#include <omp.h>

#define N 4096

static double a[N], b[N];
static long c[N];

int main(void)
{
    double started = omp_get_wtime();
    int procs = omp_get_num_procs(), threads = omp_get_max_threads();

    #pragma omp parallel for
    for (int i = 0; i < N; i++) {
        a[i] = (i % 97) * 0.5;
        c[i] = i % 13;
    }

    #pragma acc parallel loop copyin(a) copyout(b)
    for (int i = 0; i < N; i++)
        b[i] = 2.0 * a[i] + 1.0;

    /* The device wrote b: the host reads and writes it under OpenMP. */
    #pragma omp parallel for schedule(static, 64)
    for (int i = 0; i < N; i++)
        b[i] = b[i] * 4.0 + c[i];

    long team = 0;
    #pragma omp parallel
    {
        double *p = a;
        #pragma omp for reduction(+:team)
        for (int i = 0; i < N; i++) {
            p[i] += 1.0;
            team += 1;
        }
    }

    double total = 0.0;
    #pragma acc parallel loop copyin(a, b) reduction(+:total)
    for (int i = 0; i < N; i++)
        total += b[i] - a[i];

    /* Each half's region runs in turn, on one thread. */
    #pragma omp parallel for
    for (int half = 0; half < 2; half++) {
        #pragma acc parallel loop copy(c)
        for (int i = half * (N / 2); i < (half + 1) * (N / 2); i++)
            c[i] = c[i] * 3 + half;
    }

    long sum = 0;
    #pragma omp parallel for reduction(+:sum)
    for (int i = 0; i < N; i++)
        sum += c[i] + (long)b[i];

    double elapsed = omp_get_wtime() - started;
    printf("total %.1f\n", total);
    printf("sum %ld team %ld\n", sum, team);
    printf("b %.1f %.1f a %.1f\n", b[0], b[N - 1], a[N - 1]);
    printf("procs %s threads %s clock %s\n", procs >= 1 ? "ok" : "none", threads >= 1 ? "ok" : "none", elapsed >= 0.0 ? "ok" : "backwards");
    return 0;
}
