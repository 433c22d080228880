// yosegi-test: rtol=1e-9
// A kernels region holding one parallel loop and one loop with a carried dependence (a prefix sum).
#include <stdio.h>

#define N 5000

static double a[N], b[N], c[N];

int main(void) {
    for (int i = 0; i < N; i++) {
        b[i] = (double)(i % 11) * 0.5;
        c[i] = 1.0 / (1.0 + (double)i);
    }
    #pragma acc kernels copyin(b, c) copyout(a)
    {
        for (int i = 0; i < N; i++) a[i] = b[i] * 2.0 + c[i];
        for (int i = 1; i < N; i++) a[i] = a[i - 1] + 0.5 * a[i];
    }
    #pragma acc kernels
    for (int i = 0; i < N; i++) b[i] = a[i] - b[i];
    double s = 0.0;
    for (int i = 0; i < N; i++) s += b[i];
    printf("a %.15e %.15e %.15e\n", a[0], a[N / 2], a[N - 1]);
    printf("b %.15e %.15e\n", b[1], b[N - 2]);
    printf("sum %.12e\n", s);
    return 0;
}
