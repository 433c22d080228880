// bad input: an atomic update of a long double (no device atomic updates its 80-bit format)
#include <stdio.h>
int main(void) {
    long double s = 0;
#pragma acc parallel loop
    for (int i = 0; i < 100; i++) {
#pragma acc atomic update
        s += 1;
    }
    printf("%Lg\n", s);
    return 0;
}
