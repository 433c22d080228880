// bad input: a bit operation on a floating-point element
#include <stdio.h>
int main(void) {
    float f[4] = {1, 1, 1, 1};
#pragma acc parallel loop copy(f)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic update
        f[i % 4] <<= 1;
    }
    printf("%g\n", f[0]);
    return 0;
}
