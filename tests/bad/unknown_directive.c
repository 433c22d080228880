// bad input: a misspelled directive name
#include <stdio.h>
int main(void) {
    double a[100];
#pragma acc paralel loop
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("%f\n", a[5]);
    return 0;
}
