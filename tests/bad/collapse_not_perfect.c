// bad input: collapse(2) over loops with a statement between them
#include <stdio.h>
int main(void) {
    double a[10][10], rowsum[10];
#pragma acc parallel loop collapse(2)
    for (int i = 0; i < 10; i++) {
        rowsum[i] = 0.0;
        for (int j = 0; j < 10; j++) a[i][j] = i + j;
    }
    printf("%f %f\n", a[1][2], rowsum[0]);
    return 0;
}
