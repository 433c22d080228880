// yosegi-test: rtol=0
// `switch` in kernels beyond "every case ends with break": cases that fall through into the
// next one (into `default` too), `break` in the middle of a case, an empty case, statements
// before the first label, `continue` from inside a switch (of an inner loop and of the parallel
// iteration), nested switches, and switches in device functions (with `return` in a case, in
// one compiled as a function and in one inlined because it takes an array).
#include <stdio.h>

#define N 120

static int sel[N], out1[N], out2[N], out3[N], out4[N];
static double val[N], res[N];

#pragma acc routine seq
static int classify(int k) {
    switch (k % 6) {
    case 0:
        return 100;
    case 1:
        k += 10;
    case 2:
        k *= 2;
        break;
    default:
        if (k > 50) return -k;
    case 5:
        k -= 1;
    }
    return k;
}

#pragma acc routine seq
static int tally(int *hits, int k) {
    switch (k & 3) {
    case 0:
        hits[k] += 1;
        return 1;
    case 1:
        hits[k] += 2;
    case 2:
        hits[k] += 4;
        break;
    }
    return 0;
}

static int host_switch(int k) {
    int r = 0;
    switch (k % 5) {
    case 1:
        r += 3;
    case 2:
        r *= 7;
        if (k > 20) break;
        r += k;
    default:
        r -= 1;
    }
    return r;
}

int main(void) {
    for (int i = 0; i < N; i++) {
        sel[i] = (i * 7) % 11;
        val[i] = 0.5 * i + 1.0;
    }
    static int hits[N];

    #pragma acc parallel loop copyin(sel) copy(val) copyout(out1, out2, res)
    for (int i = 0; i < N; i++) {
        int a = 0, b = 0;
        switch (sel[i]) {
        case 0:
            a = 1;
            break;
        case 1:
            a = 2;
            break;
        case 2:
            val[i] = val[i] / 2;        /* falls into default, as in the V&V test */
        default:
            res[i] = sel[i] + val[i];
        }
        switch (i % 7) {
            b = 99;                     /* never runs */
        case 0:
            b += 1;
        case 1:
            b += 10;
            if (i > 60) break;          /* break in the middle of a case */
            b += 100;
        case 2:;                        /* an empty case falls through too */
        case 3:
            b += 1000;
            break;
        default:
            b = -1;
        case 6:
            b -= 5;
        }
        out1[i] = a * 100000 + b;
        int c = 0;
        for (int k = 0; k < 6; k++) {
            switch ((i + k) % 4) {
            case 0:
                continue;               /* the next k */
            case 1:
                c += k;
            case 2:
                switch (k & 1) {        /* a nested switch that falls through */
                case 0:
                    c += 1000;
                case 1:
                    c += 10;
                }
                break;
            default:
                c -= 3;
            }
            c *= 2;
        }
        out2[i] = c + classify(i);
    }

    #pragma acc parallel loop copyin(sel) copyout(out3) copy(hits)
    for (int i = 0; i < N; i++) {
        out3[i] = -7;
        switch (sel[i] % 3) {
        case 0:
            if (i % 2) continue;        /* ends this iteration */
        case 1:
            out3[i] = tally(hits, i) * 10 + i;
            break;
        default:
            out3[i] = 0;
        }
        out3[i] += 1;
    }

    #pragma acc serial copyin(sel) copyout(out4)
    {
        for (int i = 0; i < N; i++) {
            int r = i;
            switch (sel[i]) {
            case 3:
            case 4:
                r *= 3;
            case 5:
                r += 1;
                break;
            case 6:
                r = 0;
            }
            out4[i] = r;
        }
    }

    long long h = 0;
    double s = 0.0;
    for (int i = 0; i < N; i++) {
        h = h * 31 + out1[i] + 7 * out2[i] + 11 * out3[i] + 13 * out4[i] + 17 * hits[i] + host_switch(i);
        s += res[i] + val[i];
    }
    printf("out1 %d %d %d %d %d\n", out1[0], out1[3], out1[6], out1[63], out1[119]);
    printf("out2 %d %d %d out3 %d %d %d\n", out2[0], out2[5], out2[77], out3[0], out3[1], out3[2]);
    printf("hash %lld sum %.6f\n", h, s);
    return 0;
}
