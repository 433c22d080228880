// yosegi-test: rtol=1e-9
// private and firstprivate: a per-iteration scratch array and a scalar, and a firstprivate offset and scale.
#include <stdio.h>

#define N 3000
#define M 8

static double out[N];

int main(void) {
    double tmp[M];
    double t;
    double scale = 1.5;
    int offset = 7;
    #pragma acc parallel loop private(tmp, t) firstprivate(scale, offset) copyout(out)
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < M; k++) tmp[k] = (double)((i + k + offset) % 10) * scale;
        t = 0.0;
        for (int k = 0; k < M; k++) t += tmp[k] * (double)(k + 1);
        out[i] = t;
    }
    /* gang-level private scalar with firstprivate initial value */
    int base = 100;
    static int ids[N];
    #pragma acc parallel loop firstprivate(base) copyout(ids)
    for (int i = 0; i < N; i++) {
        int local = base;
        local += i % 13;
        ids[i] = local;
    }
    double s = 0.0;
    long si = 0;
    for (int i = 0; i < N; i++) {
        s += out[i];
        si += ids[i];
    }
    printf("scale %.3f offset %d base %d\n", scale, offset, base);
    printf("sum %.12e out %.15e %.15e\n", s, out[0], out[N - 1]);
    printf("ids %ld %d %d\n", si, ids[0], ids[N - 1]);
    return 0;
}
