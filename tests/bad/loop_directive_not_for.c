// bad input: a parallel loop directive followed by a while loop
#include <stdio.h>
int main(void) {
    double a[100];
    int i = 0;
#pragma acc parallel loop
    while (i < 100) {
        a[i] = i;
        i++;
    }
    printf("%f\n", a[5]);
    return 0;
}
