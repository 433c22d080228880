// bad input: a user function called in a kernel without `routine seq`
#include <stdio.h>
static double twice(double v) { return 2.0 * v; }

int main(void) {
    double a[100];
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) a[i] = twice((double)i);
    printf("%f\n", a[5]);
    return 0;
}
