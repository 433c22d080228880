// bad input: an integer imaginary constant (of GNU's complex integer type)
#include <stdio.h>
int main(void) {
    double x[4] = {0};
#pragma acc parallel loop copy(x)
    for (int i = 0; i < 4; i++) {
        x[i] = __imag__ (x[i] + 2i);
    }
    printf("%g\n", x[1]);
    return 0;
}
