// Two translation units with OpenACC in one of them, a global shared between them, a static
// function in each, and -lm: built by its Makefile with `yosegi cc`.
#include <stdio.h>
#include <stdlib.h>
#include "shared.h"
double field[N];
static double weight(double x) { return 2.0 * x; }
int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 3;
    init(field);
    for (int s = 0; s < steps; s++) relax(field);
    double t = 0;
    for (int i = 0; i < N; i++) t += weight(field[i]) * (i % 7);
    printf("%.6f %d\n", t, calls);
    return 0;
}
