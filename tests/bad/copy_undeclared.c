// bad input: a data clause naming a variable that does not exist
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc parallel loop copy(zz[0:100])
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("%f\n", a[5]);
    return 0;
}
