// yosegi-test: rtol=1e-9
// Every reduction operator: + * max min on double, float and int; & | ^ && || on int.
#include <stdio.h>

#define N 10000

static double xd[N];
static float xf[N];
static int xi[N];

int main(void) {
    for (int i = 0; i < N; i++) {
        xd[i] = 1.0 + (double)((i * 7919) % 1000) / 997.0;
        xf[i] = 0.5f + (float)((i * 104729) % 1024) / 1024.0f;
        xi[i] = (i * 2654435761u) % 100003u;
    }
    double dsum = 0.0, dprod = 1.0, dmax = -1.0e300, dmin = 1.0e300;
    float fsum = 0.0f, fmaxv = -1.0e30f, fminv = 1.0e30f, fprod = 1.0f;
    int isum = 0, iprod = 1, imaxv = -2147483647, iminv = 2147483647;
    int iand = ~0, ior = 0, ixor = 0, land = 1, lor = 0, land2 = 1, lor2 = 0;

    #pragma acc parallel loop reduction(+:dsum) reduction(max:dmax) reduction(min:dmin)
    for (int i = 0; i < N; i++) {
        dsum += xd[i] * xd[i];
        dmax = xd[i] > dmax ? xd[i] : dmax;
        dmin = xd[i] < dmin ? xd[i] : dmin;
    }
    /* Product of values near 1 so that it neither overflows nor underflows. */
    #pragma acc parallel loop reduction(*:dprod)
    for (int i = 0; i < N; i++) dprod *= 1.0 + (xd[i] - 1.5) * 1.0e-3;

    #pragma acc parallel loop reduction(+:fsum) reduction(max:fmaxv) reduction(min:fminv)
    for (int i = 0; i < N; i++) {
        fsum += xf[i];
        if (xf[i] > fmaxv) fmaxv = xf[i];
        if (xf[i] < fminv) fminv = xf[i];
    }
    /* Powers of two multiply exactly in any order. */
    #pragma acc parallel loop reduction(*:fprod)
    for (int i = 0; i < 40; i++) fprod *= (i % 3 == 0) ? 2.0f : ((i % 3 == 1) ? 0.5f : 1.0f);

    #pragma acc parallel loop reduction(+:isum) reduction(max:imaxv) reduction(min:iminv)
    for (int i = 0; i < N; i++) {
        isum += xi[i] % 1000;
        imaxv = xi[i] > imaxv ? xi[i] : imaxv;
        iminv = xi[i] < iminv ? xi[i] : iminv;
    }
    #pragma acc parallel loop reduction(*:iprod)
    for (int i = 0; i < 20; i++) iprod *= (i % 4 == 0) ? 3 : 1;

    #pragma acc parallel loop reduction(&:iand) reduction(|:ior) reduction(^:ixor)
    for (int i = 0; i < N; i++) {
        iand &= xi[i] | 0x10;
        ior |= xi[i] & 0x3ff;
        ixor ^= xi[i];
    }
    #pragma acc parallel loop reduction(&&:land) reduction(||:lor)
    for (int i = 0; i < N; i++) {
        land = land && (xi[i] >= 0);
        lor = lor || (xi[i] == 12345);
    }
    #pragma acc parallel loop reduction(&&:land2) reduction(||:lor2)
    for (int i = 0; i < N; i++) {
        land2 = land2 && (xi[i] % 2 == 0);
        lor2 = lor2 || (xi[i] > 99000);
    }
    printf("double sum %.12e prod %.12e max %.17g min %.17g\n", dsum, dprod, dmax, dmin);
    printf("float sum %.9g prod %.9g max %.9g min %.9g\n", (double)fsum, (double)fprod, (double)fmaxv, (double)fminv);
    printf("int sum %d prod %d max %d min %d\n", isum, iprod, imaxv, iminv);
    printf("bits and %d or %d xor %d\n", iand, ior, ixor);
    printf("logical %d %d %d %d\n", land, lor, land2, lor2);
    // `-` (GCC's and OpenMP's reading, with a warning): the partial results are added.
    double dminus = 1000.0;
    int iminus = 77;
    #pragma acc parallel loop reduction(-:dminus, iminus)
    for (int i = 0; i < N; i++) {
        dminus -= xd[i];
        iminus -= xi[i] % 13;
    }
    printf("minus %.12e %d\n", dminus, iminus);
    return 0;
}
