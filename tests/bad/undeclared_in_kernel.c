// bad input: an identifier used in a kernel and declared nowhere
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) a[i] = i * scale;
    printf("%f\n", a[5]);
    return 0;
}
