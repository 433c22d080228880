// bad input: collapse(n) with a variable count
#include <stdio.h>
int main(void) {
    double a[10][10];
    int n = 2;
#pragma acc parallel loop collapse(n)
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) a[i][j] = i + j;
    printf("%f %d\n", a[1][2], n);
    return 0;
}
