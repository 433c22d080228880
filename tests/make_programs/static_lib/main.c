// Calls the OpenACC loops of a static library linked with -L/-l (see the Makefile).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "smooth.h"
int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 3;
    static double f[N];
    for (int i = 0; i < N; i++) f[i] = (i % 17 == 0) ? 1.0 : sin(i * 0.05);
    smooth(f, steps);
    double t = 0;
    for (int i = 0; i < N; i++) t += f[i] * (1 + i % 5);
    printf("%.9f\n", t);
    return 0;
}
