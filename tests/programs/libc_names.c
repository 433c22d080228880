// A program that defines functions whose names the C library also has (`error` from
// <error.h>, `warn` from <err.h>, as NPB LU does with `error()`): its calls reach its own.
#include <stdio.h>

static double residual[16];

void error(void) {
    double sum = 0.0;
    for (int i = 0; i < 16; i++) sum += residual[i] * residual[i];
    printf("error(): sum of squares %.6f\n", sum);
}

int warn(const char *what) {
    printf("warn(): %s\n", what);
    return 7;
}

int main(void) {
    #pragma acc parallel loop copyout(residual)
    for (int i = 0; i < 16; i++) residual[i] = 0.5 * i;
    error();
    printf("warn returned %d\n", warn("own function"));
    return 0;
}
