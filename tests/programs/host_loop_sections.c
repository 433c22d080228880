/* Host loops that write or read parts of arrays the device holds, between kernels: the hook
 * before such a loop covers only the elements the loop can touch (`for (i = lo; i < hi; i++)`
 * over `a[i + c]`), so every form here must still see, and leave, the right values: offsets,
 * `<=` bounds, steps of 2, an early break, a loop that runs zero times, a bound the loop
 * cannot change, and forms that keep the whole-array hook (a bound written through a pointer,
 * a loop variable changed in the body, a call). */
#include <stdio.h>

#define N 256

double a[N], b[N];

static void touch(double *p, int k)
{
    p[k] += 0.5;
}

static void sweep(int step)
{
    #pragma acc parallel loop
    for (int i = 1; i < N - 1; i++)
        b[i] = 0.5 * (a[i - 1] + a[i + 1]) + step;
    #pragma acc parallel loop
    for (int i = 0; i < N; i++)
        a[i] = b[i] * 0.75 + 1.0;
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        a[i] = i % 17;
        b[i] = 0.0;
    }
    double seen = 0.0;
    int hi = 40, lo = 20;
    int *bound = &hi;
    for (int step = 0; step < 8; step++) {
        sweep(step);
        for (int i = lo; i < hi; i++)              /* a block, with offsets */
            a[i + 1] = a[i - 1] * 0.5 + b[i + 2];
        for (int i = 100; i <= 110; i += 2)         /* <= and a step of 2 */
            seen += a[i] + b[i - 3];
        for (int i = 200; i < N; i++) {            /* an early break */
            if (a[i] > 1e9)
                break;
            a[i] -= 0.25;
        }
        for (int i = 50; i < 10; i++)              /* runs zero times */
            a[i] = -1.0;
        for (int i = 60; i < *bound + 30; i++)     /* a bound read through a pointer */
            b[i] += 1.0;
        for (int i = 120; i < 130; i++) {          /* the variable changed in the body */
            a[i] += 2.0;
            if (i == 125)
                i += 1;
        }
        for (int i = 140; i < 150; i++)            /* a call in the body */
            touch(a, i);
        *bound = hi + 1;                           /* a store through a pointer */
        for (int i = 0; i < 5; i++)
            seen += a[i * 50];
    }
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += a[i] * (i % 5 + 1) + b[i];
    printf("seen %.6f sum %.6f hi %d\n", seen, sum, hi);
    return 0;
}
