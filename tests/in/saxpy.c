// One parallel loop over malloc'ed arrays with an explicit data region.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 1000;
    float a = 2.5f;
    float *x = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1.0f; }
#pragma acc data copyin(x[0:n]) copy(y[0:n])
    {
#pragma acc parallel loop
        for (int i = 0; i < n; i++)
            y[i] = a * x[i] + y[i];
    }
    printf("%f\n", y[n - 1]);
    free(x);
    free(y);
    return 0;
}
