// Loops and subscripts whose constants lie near the ends of the integer types, in programs
// that are valid C: a step so large that the loop runs once, loop variables counting near
// LLONG_MAX and from LLONG_MIN, subscripts that pass through extreme values and come back
// ((i + K) - K), and subscripts that wrap on purpose (a conversion to int of i + 2^32, unsigned
// arithmetic past UINT_MAX). The analyses must plan with the values C computes, or not at all:
// a trip count that overflowed ran no iteration, and the wrapping subscripts' writes never
// reached the host.
#include <stdio.h>

#define N 64

static double a[N], b[N], c[N];

int main(void) {
    for (int i = 0; i < N; i++) {
        a[i] = 0;
        b[i] = 0.5 * i;
        c[i] = 0;
    }
#pragma acc parallel loop copy(a)
    for (long long i = 0; i < N; i += 0x7fffffffffffffffLL) a[i] = 1;
#pragma acc parallel loop copy(a)
    for (long long i = 5; i < N; i += 0x4000000000000000LL) a[i] += 3;
#pragma acc parallel loop copy(a)
    for (long long i = 0x7ffffffffffffff0LL; i < 0x7ffffffffffffffeLL; i++) a[i - 0x7ffffffffffffff0LL] += 2;
#pragma acc parallel loop copy(a)
    for (long long i = -0x7fffffffffffffffLL - 1; i < -0x7fffffffffffffffLL + 20; i++) a[i - (-0x7fffffffffffffffLL - 1)] += 4;
#pragma acc parallel loop copy(a)
    for (long long i = 30; i < 60; i++) a[(i + 0x7fffffffffffff00LL) - 0x7fffffffffffff00LL] += 8;
#pragma acc parallel loop copy(a)
    for (int i = 40; i < 50; i++) a[(int)(i + 4294967296LL)] += 16;
#pragma acc parallel loop copy(a)
    for (unsigned i = 50; i < 60; i++) a[i + 4294967295u] += 32;
#pragma acc parallel loop copy(a)
    for (long long i = 0x7ffffffffffffff0LL; i > 0x7ffffffffffffff0LL - 40; i -= 3) a[0x7ffffffffffffff0LL - i + 1] += 64;
    // A chain of two loops (fused with --fusion on) reading at offsets written in extreme forms.
    double tmp[4];
#pragma acc parallel copyin(b) copy(c)
    {
#pragma acc loop
        for (long long i = 1; i < N - 1; i++) c[i] = b[(i - 0x7fffffffffffffffLL) + 0x7fffffffffffffffLL] * 2.0;
#pragma acc loop private(tmp)
        for (long long i = 2; i < N - 2; i += 0x3fffffffffffffffLL) {
            for (int k = 0; k < 4; k++) tmp[k] = c[i + k - 1];
            c[i] += tmp[0] + tmp[3];
        }
    }
    double s = 0, t = 0;
    for (int i = 0; i < N; i++) {
        s += a[i] * (i + 1);
        t += c[i] * (i + 1);
    }
    printf("%.1f %.1f\n", s, t);
    return 0;
}
