#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int n; double *v; } Vec;

static double table[64];

static void scale(Vec *x, double k) {
    #pragma acc parallel loop
    for (int i = 0; i < x->n; i++)
        x->v[i] *= k;
}

int main(void) {
    Vec x;
    x.n = 64;
    x.v = malloc(x.n * sizeof(double));
    for (int i = 0; i < x.n; i++)
        x.v[i] = i;
    double sum = 0.0;
    for (int step = 0; step < 3; step++) {
        scale(&x, 2.0);
        x.v[step] = -1.0;            /* host write between launches */
        sum += x.v[x.n - 1];         /* host read after a launch */
        #pragma acc parallel loop
        for (int i = 0; i < 64; i++)
            table[i] = x.v[i] + step;
        memcpy(x.v, table, sizeof table);
    }
    for (int i = 0; i < x.n; i++)
        sum += x.v[i] + table[i];
    printf("sum %.3f first %.3f last %.3f\n", sum, x.v[0], table[63]);
    free(x.v);
    return 0;
}
