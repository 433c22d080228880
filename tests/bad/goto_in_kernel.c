// bad input: goto inside a kernel
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) {
        a[i] = i;
        if (i % 2) goto skip;
        a[i] += 1.0;
    skip:
        a[i] *= 2.0;
    }
    printf("%f\n", a[5]);
    return 0;
}
