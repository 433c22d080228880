// bad input: collapse(0): the count must be a positive integer
#include <stdio.h>
int main(void) {
    double a[10][10];
#pragma acc parallel loop collapse(0)
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++) a[i][j] = i + j;
    printf("%f\n", a[1][2]);
    return 0;
}
