// Local arrays of structs in kernels (as RSBench's `RSComplex sigTfactors[4]`): filled by a
// routine through a pointer, indexed, initialised, copied; complex arithmetic on a struct
// type passed and returned by value; routines defined after the construct that call each other.
#include <math.h>
#include <stdio.h>

typedef struct { double r, i; } cplx;
typedef struct { cplx z; int hits[2]; } cell;

cplx c_mul(cplx a, cplx b);
cplx c_add(cplx a, cplx b);
void factors(double e, cplx *out, int n);
double cell_weight(const cell *c, int n);

#define N 120
#define L 4

int main(void) {
    double out[N];
    #pragma acc parallel loop copyout(out)
    for (int i = 0; i < N; i++) {
        cplx f[L];
        factors(i * 0.01, f, L);
        cplx acc = {0.0, 0.0};
        for (int l = 0; l < L; l++) acc = c_add(acc, c_mul(f[l], f[(l + 1) % L]));
        cell cells[3] = {{{1.0, 2.0}, {1, 2}}, {{0.5, -1.0}, {3, 4}}};
        cells[2] = cells[0];
        cells[2].hits[1] += i % 3;
        cells[1].z.r += f[0].i;
        out[i] = acc.r - acc.i + cell_weight(cells, 3);
    }
    double s = 0;
    for (int i = 0; i < N; i++) s += out[i] * (i % 7 + 1);
    printf("%.9f\n", s);
    return 0;
}

static double fast_exp(double x) {
    x = 1.0 + x * 0.000244140625;
    for (int k = 0; k < 12; k++) x *= x;
    return x;
}

cplx c_mul(cplx a, cplx b) {
    cplx r = {a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r};
    return r;
}

cplx c_add(cplx a, cplx b) {
    a.r += b.r;
    a.i += b.i;
    return a;
}

void factors(double e, cplx *out, int n) {
    for (int l = 0; l < n; l++) {
        double phi = e * (l + 1);
        out[l].r = cos(phi) * fast_exp(-phi);
        out[l].i = -sin(phi);
    }
}

double cell_weight(const cell *c, int n) {
    double w = 0;
    for (const cell *p = c; p < c + n; p++) w += p->z.r * p->hits[0] + p->z.i * p->hits[1];
    return w;
}
