/* An old-style definition whose declaration list names a parameter the identifier list does
 * not have (gcc: "declaration for parameter 'm' but no such parameter"). */
#include <stdio.h>
double scale(x, n)
double x;
int m;
{
    return x * n;
}
int main(void) {
    double a[16];
#pragma acc parallel loop copyout(a)
    for (int i = 0; i < 16; i++) a[i] = scale(1.5, i);
    printf("%f\n", a[15]);
    return 0;
}
