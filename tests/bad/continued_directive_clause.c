/* A directive continued over three physical lines with backslash-newlines: cpp joins it
 * into one line, yet the bad clause must be reported on its own (third) line and column. */
#include <stdio.h>
#define N 64
int main(void) {
    double a[N][N];
#pragma acc parallel loop gang vector \
        copyout(a[0:N][0:N]) \
        collapse(0)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) a[i][j] = i + j;
    printf("%f\n", a[3][4]);
    return 0;
}
