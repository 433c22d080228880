// bad input: a shift on a floating-point element
#include <stdio.h>
int main(void) {
    double d[4] = {1, 1, 1, 1};
#pragma acc parallel loop copy(d)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic update
        d[i % 4] = d[i % 4] * 2 + 1;
    }
    printf("%g\n", d[0]);
    return 0;
}
