// bad input: a clause argument list without its closing parenthesis
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop copyout(a[0:100]
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("%f\n", a[5]);
    return 0;
}
