#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int n = 4, m = 3;
    double *p = (double *)calloc(n * m, sizeof(double));
    #pragma acc parallel loop copy(p[0:n][0:m])
    for (int i = 0; i < n * m; i++) p[i] = i;
    printf("%g\n", p[5]);
    return 0;
}
