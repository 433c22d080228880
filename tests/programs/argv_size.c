// yosegi-test: args=1500 7
// yosegi-test: rtol=1e-9
// Problem size and step count from argv (atoi); an explicit-Euler decay of a vector.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    if (n <= 0 || steps <= 0) {
        fprintf(stderr, "usage: %s N STEPS\n", argv[0]);
        return 1;
    }
    double *x = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) x[i] = 1.0 + (double)i / n;
    for (int s = 0; s < steps; s++) {
        #pragma acc parallel loop copy(x[0:n])
        for (int i = 0; i < n; i++) x[i] = x[i] - 0.1 * x[i] * (double)(i % 3);
    }
    double sum = 0.0;
    #pragma acc parallel loop reduction(+:sum) copyin(x[0:n])
    for (int i = 0; i < n; i++) sum += x[i];
    printf("n %d steps %d\n", n, steps);
    printf("sum %.12e last %.15e\n", sum, x[n - 1]);
    free(x);
    return 0;
}
