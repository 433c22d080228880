// yosegi-test: rtol=1e-12
// `long double` arrays and scalars in kernels: elements are read and written in the host's
// 16-byte format (kernels compute in double), reductions and scalars written back to
// `long double` host variables, `sizeof(long double)` in a kernel.
#include <stdio.h>
#include <stdlib.h>

#define N 1000

static long double table[N];

int main(void) {
    long double *a = malloc(N * sizeof(long double));
    long double *b = malloc(N * sizeof(long double));
    for (int i = 0; i < N; i++) {
        a[i] = 0.5L + (long double)((i * 7919) % 1000) / 1024.0L;
        table[i] = (long double)i / 8.0L;
    }

    long double scale = 1.5L;
    #pragma acc parallel loop copyin(a[0:N]) copyout(b[0:N])
    for (int i = 0; i < N; i++) {
        b[i] = a[i] * scale + table[i];
    }

    long double sum = 10.0L, prod = 1.0L, biggest = -1.0L;
    #pragma acc parallel loop reduction(+:sum) reduction(*:prod) reduction(max:biggest)
    for (int i = 0; i < N; i++) {
        sum += b[i];
        prod *= 1.0L + (a[i] - 0.75L) * 1.0e-3L;
        biggest = b[i] > biggest ? b[i] : biggest;
    }

    /* One block's worth of iterations, folded in iteration order. */
    long double small = 0.25L;
    #pragma acc parallel loop reduction(+:small)
    for (int i = 0; i < 100; i++) {
        small += a[i] / 3.0L;
    }

    long double last = 0.0L;
    int size = 0;
    #pragma acc serial
    {
        last = b[N - 1] - a[0];
        size = (int)sizeof(long double);
    }

    /* Elements written in place, and a negative zero, an infinity and a subnormal. */
    #pragma acc parallel loop
    for (int i = 0; i < N; i++) {
        table[i] = table[i] * -2.0L;
    }
    long double specials[4] = {0.0L, 1.0L, 1.0e-310L, 3.0L};
    #pragma acc parallel loop copy(specials)
    for (int i = 0; i < 4; i++) {
        specials[i] = i == 0 ? -specials[i] : (i == 1 ? specials[i] / 0.0L : specials[i] * 2.0L);
    }

    printf("b[0] = %.15Lg b[999] = %.15Lg\n", b[0], b[N - 1]);
    printf("sum = %.15Lg prod = %.15Lg max = %.15Lg\n", sum, prod, biggest);
    printf("small = %.17Lg\n", small);
    printf("last = %.15Lg size = %d\n", last, size);
    printf("table[3] = %.15Lg table[999] = %.15Lg\n", table[3], table[N - 1]);
    printf("specials = %Lg %Lg %Lg %Lg\n", specials[0], specials[1], specials[2] * 1.0e300L, specials[3]);
    free(a);
    free(b);
    return 0;
}
