// bad input: copyin is not a clause of exit data
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 100;
    double *a = malloc(n * sizeof(double));
#pragma acc enter data create(a[0:n])
#pragma acc parallel loop present(a[0:n])
    for (int i = 0; i < n; i++) a[i] = i;
#pragma acc exit data copyin(a[0:n])
    printf("%f\n", a[5]);
    free(a);
    return 0;
}
