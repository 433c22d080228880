// bad input: in adjacent constructs lowered as one region, each keeps its own num_gangs
#include <stdio.h>
static double a[100], b[100];
int main(void) {
    #pragma acc data copy(a, b)
    {
        #pragma acc parallel loop present(a) num_gangs(4, 2)
        for (int i = 0; i < 100; i++) a[i] = i;
        #pragma acc parallel loop gang(dim: 2) num_gangs(4) present(a, b)
        for (int i = 1; i < 99; i++) b[i] = a[i - 1];
    }
    printf("%f\n", b[5]);
    return 0;
}
