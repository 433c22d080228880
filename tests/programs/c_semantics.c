// yosegi-test: rtol=0
// C arithmetic corner cases computed in kernels: signed division and modulo of negatives, shifts,
// unsigned wraparound and comparison, integer promotions, conversions and truncation.
#include <stdio.h>

#define N 64

static int idiv[N], imod[N], ishr[N];
static unsigned int uwrap[N], ucmp[N];
static long long lmul[N];
static int promo[N], trunc_[N];
static double conv[N];

int main(void) {
    #pragma acc parallel loop copyout(idiv, imod, ishr, uwrap, ucmp, lmul, promo, trunc_, conv)
    for (int i = 0; i < N; i++) {
        int v = i * 37 - 1000;               /* negative and positive values */
        int d = (i % 7) - 3;                 /* -3 .. 3 */
        if (d == 0) d = 5;
        idiv[i] = v / d;                     /* truncates toward zero */
        imod[i] = v % d;                     /* sign follows the dividend */
        ishr[i] = (v >> 3) + (i << 20);      /* arithmetic shift of negatives (gcc) */
        unsigned int u = (unsigned int)v;
        uwrap[i] = u * 2654435761U + 0xdeadbeefU;
        ucmp[i] = (u > 100U) + 2 * ((unsigned int)i - 10U < 20U);
        lmul[i] = (long long)v * 3037000499LL;
        unsigned char c = (unsigned char)(i * 29);
        signed char sc = (signed char)(i * 29);
        short s = (short)(v * 97);
        promo[i] = c + sc + s / 3 + (c << 4);
        double x = (double)v / 7.0;
        trunc_[i] = (int)x + (int)(-x * 1.5);
        conv[i] = (double)(float)x + (double)(i / 2) / 3 + (double)(unsigned int)(i - 32);
    }
    for (int i = 0; i < N; i += 9)
        printf("%d: %d %d %d %u %u %lld %d %d %.17g\n", i, idiv[i], imod[i], ishr[i], uwrap[i], ucmp[i],
               lmul[i], promo[i], trunc_[i], conv[i]);
    unsigned long long h = 0;
    for (int i = 0; i < N; i++)
        h = h * 31u + (unsigned long long)idiv[i] + imod[i] + ishr[i] + (long long)uwrap[i] + ucmp[i] + (lmul[i] % 1000003) + promo[i] + trunc_[i];
    printf("hash %llu\n", h);
    return 0;
}
