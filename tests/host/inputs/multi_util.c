#include <stddef.h>
#include <stdlib.h>

static double weights[100];

void fill(double *v, int n, double k) {
    for (int i = 0; i < n; i++)
        weights[i] = 1.0 + (i % 2);
    #pragma acc parallel loop copyin(weights)
    for (int i = 0; i < n; i++)
        v[i] = k * i * weights[i];
}

double total(const double *v, int n) {
    double s = 0.0;
    #pragma acc parallel loop reduction(+:s)
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}
