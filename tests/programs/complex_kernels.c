// yosegi-test: rtol=1e-5
// C99 complex numbers in kernels: arrays of float, double and long double _Complex in data
// clauses, arithmetic between complex and real values (+ - * / both ways, unary -, `~`),
// `I` and imaginary constants, the <complex.h> functions kernels evaluate, == and !=, truth
// values, complex locals, casts, __real__/__imag__ (read and assigned), host complex scalars
// read as firstprivate values and written back from a serial region.
#include <complex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

static double complex table[N];

static void show(const char *what, double complex z) {
    printf("%s = %.9g %+.9gi\n", what, creal(z), cimag(z));
}

int main(void) {
    double complex *a = malloc(N * sizeof(double complex));
    double complex *b = malloc(N * sizeof(double complex));
    float complex *f = malloc(N * sizeof(float complex));
    long double complex *l = malloc(N * sizeof(long double complex));
    double *mag = malloc(N * sizeof(double));
    int *same = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        a[i] = (i % 9) * 0.25 + ((i * 7) % 11 - 5) * 0.5 * I;
        b[i] = 0;
        f[i] = (float)i * 0.5f - 3.0f * I;
        l[i] = 1.0L + i * 0.125L * I;
        table[i] = CMPLX(0.5 * i, -1.0);
    }
    double complex w = 0.75 - 1.25 * I;
    double scale = 2.0;

    #pragma acc parallel loop copyin(a[0:N], l[0:N]) copyout(b[0:N], mag[0:N], same[0:N]) copy(f[0:N])
    for (int i = 0; i < N; i++) {
        double complex z = a[i];
        double complex p = z * w + scale;          /* complex * complex, + real */
        double complex q = (z - 1.0) / (w + 2.0 * I); /* complex / complex (Smith) */
        double complex r = 3.0 / (z + 1.0);           /* real / complex */
        double complex s = -z + ~w - I * scale;       /* unary -, GNU conjugate, real * I */
        b[i] = p + q + r + s / 4.0 + (double complex)l[i];
        f[i] = f[i] * (2.0f + 1.0f * I) - crealf(f[i]);
        mag[i] = cabs(z) + carg(w) + creal(conj(z)) * cimag(z);
        same[i] = (z == a[i]) + 2 * (z != w) + 4 * (z ? 1 : 0) + 8 * !z;
    }

    /* <complex.h> functions, in a loop over a small block. */
    double complex e[8];
    #pragma acc parallel loop copyout(e)
    for (int i = 0; i < 8; i++) {
        double complex z = 0.25 * (i + 1) - 0.5 * I * (i % 3);
        switch (i % 4) {
        case 0: e[i] = cexp(z) + clog(z); break;
        case 1: e[i] = csqrt(z) - csqrt(-z); break;
        case 2: e[i] = cpow(z, 0.5 + 0.25 * I); break;
        default: e[i] = cproj(z) + csqrt(0.0 * z); break;
        }
    }

    /* __real__ and __imag__ as lvalues, complex locals updated in place, a host array of
     * complex numbers, and assignments used as values. */
    double complex acc = 0;
    #pragma acc serial copy(table)
    {
        double complex t = 1.0;
        for (int k = 0; k < N; k++) {
            t *= 1.0 + 0.01 * I;
            __real__ table[k] = __imag__ table[k] + k;
            __imag__ table[k] = __real__ t;
            acc += (table[k] = table[k] / (1.0 + 0.5 * I));
        }
        acc /= t;
    }

    /* A real variable updated by a complex value keeps the real part of the complex result. */
    double real_only = 1.0;
    int kernel_sizes = 0;
    #pragma acc serial copyin(l[0:N], f[0:N])
    {
        real_only /= (2.0 + 2.0 * I);
        real_only += w;
        kernel_sizes = (int)(sizeof(l[0]) + 100 * sizeof(f[1]) + 10000 * sizeof(f[2] * 2.0));
    }

    /* An assignment used as a value, with a side effect in its subscript (run once). */
    double complex chain[8] = {0}, last = 0;
    int k = 0;
    #pragma acc serial copy(chain, k, last)
    for (int i = 0; i < 4; i++) {
        last = (chain[k++] = (i + 1.0) * I) * 2.0;
        chain[k++] += last;
    }

    /* Conversions to bool count both parts; a non-zero number over zero is infinite. */
    double complex zs[4] = {0, 1.0 * I, 2.0, 0}, over[4];
    int truth[4];
    #pragma acc parallel loop copyin(zs) copyout(over, truth)
    for (int i = 0; i < 4; i++) {
        bool t = zs[i];
        truth[i] = t + 2 * (bool)zs[i] + 4 * (_Bool)(zs[i] * 2.0);
        over[i] = (1.0 + 2.0 * I) / zs[i];
    }

    /* Assignments whose value reads the place's other part: swaps, for a local and an element. */
    double complex swapped[N];
    #pragma acc parallel loop copy(b[0:N]) copyout(swapped[0:N])
    for (int i = 0; i < N; i++) {
        double complex s = b[i];
        s = cimag(s) + creal(s) * I;
        swapped[i] = s;
        b[i] = __imag__ b[i] + I * __real__ b[i];
    }

    /* Through a pointer: `*(p + i)` read and assigned. */
    double complex *pa = a;
    #pragma acc parallel loop copy(pa[0:N])
    for (int i = 0; i < N; i++) {
        *(pa + i) = *(i + pa) * I + cimag(*(pa + i));
    }

    show("b[0]", b[0]);
    show("b[37]", b[37]);
    show("b[63]", b[63]);
    printf("f[5] = %.6g %+.6gi\n", crealf(f[5]), cimagf(f[5]));
    printf("mag[3] = %.9g same[3] = %d same[10] = %d\n", mag[3], same[3], same[10]);
    for (int i = 0; i < 8; i++) show("e", e[i]);
    show("table[10]", table[10]);
    show("acc", acc);
    show("a[7]", a[7]);
    show("swapped[9]", swapped[9]);
    show("b[9] swapped", b[9]);
    printf("real_only = %.9g\n", real_only);
    printf("k = %d kernel sizes %d\n", k, kernel_sizes);
    for (int i = 0; i < 4; i++) {
        printf("truth %d ", truth[i]);
        show("over", over[i]);
    }
    show("chain[6]", chain[6]);
    show("chain[7]", chain[7]);
    show("last", last);
    printf("sizes %d %d %d\n", (int)sizeof(float complex), (int)sizeof(double complex), (int)sizeof(long double complex));
    free(a);
    free(b);
    free(f);
    free(l);
    free(mag);
    free(same);
    return 0;
}
