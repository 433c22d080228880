// bad input: copyout is not a clause of enter data
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 100;
    double *a = malloc(n * sizeof(double));
#pragma acc enter data copyout(a[0:n])
#pragma acc parallel loop present(a[0:n])
    for (int i = 0; i < n; i++) a[i] = i;
#pragma acc exit data copyout(a[0:n])
    printf("%f\n", a[5]);
    free(a);
    return 0;
}
