// bad input: reduction is not a clause of the data construct
#include <stdio.h>
int main(void) {
    double a[100], s = 0.0;
#pragma acc data copy(a) reduction(+:s)
    {
#pragma acc parallel loop
        for (int i = 0; i < 100; i++) a[i] = i;
    }
    printf("%f %f\n", a[5], s);
    return 0;
}
