// A host scalar assigned by one part of a compute construct and read by a later part: the
// statement between two loops of a `parallel` or `kernels` region, a reduction whose result the
// next loop uses, and a loop bound computed inside the region. Each later part sees the value
// the sequential program has at that point.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 1000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    for (int i = 0; i < n; i++) { a[i] = (i % 17) * 0.25; b[i] = 1.0 + (i % 5); c[i] = 0.0; }

    double multiplier = 1.0;
    #pragma acc data copyin(a[0:n], b[0:n]) copy(c[0:n])
    {
        #pragma acc parallel
        {
            #pragma acc loop vector
            for (int i = 0; i < n; i++) c[i] = (a[i] + b[i]) * multiplier;
            multiplier += 1.0;
            #pragma acc loop vector
            for (int i = 0; i < n; i++) c[i] += (a[i] + b[i]) * multiplier;
            multiplier *= 3.0;
            #pragma acc loop
            for (int i = 0; i < n; i++) c[i] -= multiplier;
        }
    }
    double check = 0.0;
    for (int i = 0; i < n; i++) check += c[i] * (i % 7 + 1);
    printf("parallel handoff: multiplier %g checksum %.10g\n", multiplier, check);

    int step = 2;
    #pragma acc kernels copy(c[0:n])
    {
        #pragma acc loop independent
        for (int i = 0; i < n; i++) c[i] = c[i] * step;
        step = step + 5;
        #pragma acc loop independent
        for (int i = 0; i < n; i++) c[i] = c[i] + step;
    }
    check = 0.0;
    for (int i = 0; i < n; i++) check += c[i];
    printf("kernels handoff: step %d checksum %.10g\n", step, check);

    double total = 0.0;
    float scale = 0.5f;
    #pragma acc parallel copy(c[0:n]) copyin(a[0:n])
    {
        #pragma acc loop reduction(+:total)
        for (int i = 0; i < n; i++) total += a[i];
        #pragma acc loop
        for (int i = 0; i < n; i++) c[i] = a[i] / total * scale;
    }
    check = 0.0;
    for (int i = 0; i < n; i++) check += c[i];
    printf("reduction handoff: total %.10g checksum %.10g\n", total, check);

    int half = 0;
    #pragma acc parallel copy(c[0:n])
    {
        half = n / 2;
        #pragma acc loop
        for (int i = 0; i < half; i++) c[i] = -1.0;
    }
    int negative = 0;
    for (int i = 0; i < n; i++) negative += c[i] == -1.0;
    printf("bound handoff: half %d negatives %d\n", half, negative);
    free(a); free(b); free(c);
    return 0;
}
