// yosegi-test: rtol=0
// Every OpenACC atomic form (read, write, update, capture, structured capture) on int,
// unsigned, long, long long, float and double, on array elements and host scalars. Each update
// is applied by every iteration with the same operand (or commutes), and captured values are
// summed, so the output does not depend on the order the device runs the iterations in.
#include <stdio.h>

#define N 1024

int main(void) {
    static int ia[8];
    static unsigned ua[8];
    static long la[8];
    static long long lla[8];
    static float fa[8];
    static double da[8];
    static long long cap[16][N];
    static int rev[N];
    static unsigned urev[N];
    static int mix[3] = {0, 5000, 1 << 30};
    static float fmix[1] = {1.0f};
    int hits = 0, flag = 0, seen = 0;
    double dsum = 0.0;

    for (int k = 0; k < 8; k++) {
        ia[k] = 1000;
        ua[k] = 0xffu;
        la[k] = 1L << 40;
        lla[k] = 7;
        fa[k] = 1.0f;
        da[k] = 3.0;
    }
    ia[4] = 1 << 30;
    ua[4] = 1u;
    la[4] = 1L << 62;
    da[4] = 1 << 20;
    for (int i = 0; i < N; i++) {
        rev[i] = i % 3;
        urev[i] = (unsigned)i % 8u;
    }

    #pragma acc data copy(ia, ua, la, lla, fa, da, cap, rev, urev, mix, fmix)
    {
        #pragma acc parallel loop
        for (int i = 0; i < N; i++) {
            /* update: every operator and spelling */
            #pragma acc atomic
            ia[0] += i;
            #pragma acc atomic update
            ia[1] -= i % 7;
            #pragma acc atomic update
            ia[2]++;
            #pragma acc atomic update
            --ia[3];
            if (i < 20) {
                #pragma acc atomic update
                ia[4] /= 2;
                #pragma acc atomic update
                la[4] >>= 1;
                #pragma acc atomic update
                ua[4] = ua[4] << 1;
                #pragma acc atomic update
                fa[1] = fa[1] * 2.0f;
                #pragma acc atomic update
                da[4] = da[4] / 2.0;
            }
            #pragma acc atomic update
            ia[5] = ia[5] & ~(1 << (i % 10));
            #pragma acc atomic update
            ia[6] = (1 << (i % 12)) | ia[6];
            #pragma acc atomic update
            ia[7] ^= i;
            #pragma acc atomic update
            ua[0] = ua[0] * 3u;
            #pragma acc atomic update
            ua[1] = 3u * ua[1];
            #pragma acc atomic update
            la[0] = la[0] + (long)i * 1000000L;
            /* x = expr - x in any order: an involution applied N (even) times */
            #pragma acc atomic update
            lla[0] = (long long)(i % 2 + 1 - i % 2) * 9 - lla[0];
            #pragma acc atomic update
            lla[1] |= (long long)1 << (i % 50);
            #pragma acc atomic update
            fa[0] += 0.5f;
            #pragma acc atomic update
            da[0] = da[0] - 0.25;
            #pragma acc atomic update
            da[1] = fmax(da[1], (double)(i % 100));
            #pragma acc atomic update
            da[2] = fmin((double)(i % 77) - 5.0, da[2]);
            /* the host scalar itself, through its address */
            #pragma acc atomic update
            hits++;
            #pragma acc atomic write
            flag = 1;
            /* mixed types: the update computes in the wider type, as C does */
            #pragma acc atomic update
            mix[0] += 1.5;
            #pragma acc atomic update
            mix[1] -= 1.5;
            #pragma acc atomic update
            mix[2] = mix[2] * 0.5;
            #pragma acc atomic update
            fmix[0] = fmix[0] + 1e-9;
            #pragma acc atomic update
            da[3] += i % 5;
            /* reversed operands on each iteration's own element */
            #pragma acc atomic update
            rev[i] = (i % 5) << rev[i];
            #pragma acc atomic update
            urev[i] = 4096u >> urev[i];
            #pragma acc atomic update
            urev[i] = 100000u / urev[i];

            /* capture, single statements: every iteration applies the same update, so the
               values captured are a permutation of one sequence */
            #pragma acc atomic capture
            cap[0][i] = lla[2]++;
            #pragma acc atomic capture
            cap[1][i] = ++lla[3];
            #pragma acc atomic capture
            cap[2][i] = lla[4]--;
            #pragma acc atomic capture
            cap[3][i] = --lla[5];
            #pragma acc atomic capture
            cap[4][i] = lla[6] += 3;
            #pragma acc atomic capture
            cap[5][i] = lla[7] = 10 - lla[7];
            #pragma acc atomic capture
            cap[6][i] = la[1] = la[1] / 3;
            #pragma acc atomic capture
            cap[7][i] = ua[2] = 0x5au ^ ua[2];
            #pragma acc atomic capture
            cap[8][i] = fa[2] = 8.0f / fa[2];
            /* structured capture blocks */
            #pragma acc atomic capture
            {
                cap[9][i] = ua[3];
                ua[3] += 2u;
            }
            #pragma acc atomic capture
            {
                la[2] = la[2] - 5;
                cap[10][i] = la[2];
            }
            #pragma acc atomic capture
            {
                cap[11][i] = da[5];
                da[5] = 1.0 + da[5];
            }
            #pragma acc atomic capture
            {
                ua[5] = ua[5] + 1u;
                cap[12][i] = ua[5];
            }
            #pragma acc atomic capture
            {
                cap[13][i] = la[3];
                la[3] = i;
            }
            #pragma acc atomic capture
            {
                fa[3]++;
                cap[14][i] = fa[3];
            }
            #pragma acc atomic capture
            {
                cap[15][i] = la[5];
                --la[5];
            }
            /* read */
            int r;
            #pragma acc atomic read
            r = flag;
            if (r == 1) {
                #pragma acc atomic
                seen += 1;
            }
            /* a thread's own variable: an ordinary update */
            double mine = 2.0, got;
            #pragma acc atomic capture
            {
                mine *= 3.0;
                got = mine;
            }
            #pragma acc atomic update
            dsum += got + mine;
        }
    }

    for (int k = 0; k < 8; k++) printf("ia[%d] = %d\n", k, ia[k]);
    for (int k = 0; k < 8; k++) printf("ua[%d] = %u\n", k, ua[k]);
    /* la[3] holds the last iteration's swap: only the swap's total below is determined */
    for (int k = 0; k < 8; k++) if (k != 3) printf("la[%d] = %ld\n", k, la[k]);
    for (int k = 0; k < 8; k++) printf("lla[%d] = %lld\n", k, lla[k]);
    for (int k = 0; k < 8; k++) printf("fa[%d] = %.9g\n", k, fa[k]);
    for (int k = 0; k < 8; k++) printf("da[%d] = %.17g\n", k, da[k]);
    for (int c = 0; c < 16; c++) {
        if (c == 13) continue;
        long long s = 0, lo = cap[c][0], hi = cap[c][0];
        for (int i = 0; i < N; i++) {
            s += cap[c][i];
            if (cap[c][i] < lo) lo = cap[c][i];
            if (cap[c][i] > hi) hi = cap[c][i];
        }
        printf("capture %d: sum %lld min %lld max %lld\n", c, s, lo, hi);
    }
    long long rs = 0;
    for (int i = 0; i < N; i++) rs += rev[i] * (long long)(i + 1) + urev[i];
    printf("reversed %lld\n", rs);
    /* the swap: what was captured plus what is left is what was there plus what was written */
    long long swapped = la[3];
    for (int i = 0; i < N; i++) swapped += cap[13][i];
    printf("swap total %lld\n", swapped);
    printf("mix %d %d %d %.9g\n", mix[0], mix[1], mix[2], fmix[0]);
    printf("hits %d flag %d seen %d dsum %.17g\n", hits, flag, seen, dsum);
    return 0;
}
