// bad input: a clause name that does not exist
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop copyz(a)
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("%f\n", a[5]);
    return 0;
}
