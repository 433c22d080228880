// bad input: an update directive with no host/device clause
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc data copy(a)
    {
#pragma acc parallel loop
        for (int i = 0; i < 100; i++) a[i] = i;
#pragma acc update
    }
    printf("%f\n", a[5]);
    return 0;
}
