// Printing helpers of the multi-file solver test.
#include <stdio.h>
#include "solver.h"

void print_scalar(const char *label, double value) {
    printf("%s %.10e\n", label, value);
}

void print_vector_summary(const char *label, const double *v, int n) {
    double s = 0.0, mx = v[0];
    for (int i = 0; i < n; i++) {
        s += v[i];
        if (v[i] > mx) mx = v[i];
    }
    printf("%s sum %.10e max %.10e first %.10e mid %.10e\n", label, s, mx, v[0], v[n / 2]);
}
