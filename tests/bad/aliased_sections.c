#include <stdio.h>
int main(void) {
    static double a[10];
    int n = 10;
    double *p = a, *q = a + 1;
    for (int i = 0; i < n; i++) a[i] = i;
    #pragma acc parallel loop copy(p[0:n], q[0:n-1])
    for (int i = 0; i < n - 1; i++)
        q[i] = p[i] + 100;
    printf("%g\n", a[2]);
    return 0;
}
