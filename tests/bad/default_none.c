// bad input: default(none) and a variable used with no data clause
#include <stdio.h>
int main(void) {
    double a[100], b[100];
    for (int i = 0; i < 100; i++) b[i] = 2 * i;
#pragma acc parallel loop default(none) copyout(a)
    for (int i = 0; i < 100; i++) a[i] = b[i] + 1.0;
    printf("%f\n", a[5]);
    return 0;
}
