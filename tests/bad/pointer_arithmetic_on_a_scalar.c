// bad input: pointer arithmetic on the address of one variable
#include <stdio.h>
int main(void) {
    double c[10];
#pragma acc parallel loop copyout(c)
    for (int i = 0; i < 10; i++) {
        double x = i, y = 2 * i;
        double *p = &x;
        c[i] = *(p + 1) + y;
    }
    printf("%f\n", c[3]);
    return 0;
}
