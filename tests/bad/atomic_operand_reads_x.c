// bad input: the operand of an atomic update reads the variable it updates
#include <stdio.h>
int main(void) {
    int x[4] = {1, 1, 1, 1};
#pragma acc parallel loop copy(x)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic update
        x[i % 4] += x[i % 4] * 2;
    }
    printf("%d\n", x[0]);
    return 0;
}
