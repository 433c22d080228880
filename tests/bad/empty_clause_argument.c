// bad input: num_gangs with an empty argument
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop num_gangs()
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("%f\n", a[5]);
    return 0;
}
