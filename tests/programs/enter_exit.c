// yosegi-test: rtol=1e-9
// Unstructured data lifetimes: enter data in one function, kernels in another, exit data in a third.
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    double *v;
    int n;
} Field;

static Field field_create(int n) {
    Field f;
    f.n = n;
    f.v = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) f.v[i] = (double)(i % 10) - 4.5;
    double *v = f.v;
    #pragma acc enter data copyin(v[0:n])
    return f;
}

static void field_scale_shift(double *v, int n, double s, double d) {
    #pragma acc parallel loop present(v[0:n])
    for (int i = 0; i < n; i++) v[i] = v[i] * s + d;
}

static double field_sum(const double *v, int n) {
    double s = 0.0;
    #pragma acc parallel loop present(v[0:n]) reduction(+:s)
    for (int i = 0; i < n; i++) s += v[i] * v[i];
    return s;
}

static void field_destroy(Field *f) {
    double *v = f->v;
    int n = f->n;
    #pragma acc exit data copyout(v[0:n])
    printf("last %.15e first %.15e\n", v[n - 1], v[0]);
    free(f->v);
    f->v = NULL;
}

int main(void) {
    Field f = field_create(7000);
    for (int k = 0; k < 5; k++) {
        field_scale_shift(f.v, f.n, 0.9, 0.01 * k);
        printf("k %d norm2 %.12e\n", k, field_sum(f.v, f.n));
    }
    field_destroy(&f);
    return 0;
}
