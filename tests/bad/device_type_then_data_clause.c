// bad input: data clauses cannot follow device_type (only async, wait and the sizes can)
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop device_type(nvidia) copy(a)
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("%g\n", a[99]);
    return 0;
}
