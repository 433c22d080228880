// bad input: `v = x = expr` is not an atomic capture form
#include <stdio.h>
int main(void) {
    int x[4] = {0}, v[100];
#pragma acc parallel loop copy(x, v)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic capture
        v[i] = x[i % 4] = i;
    }
    printf("%d\n", v[3]);
    return 0;
}
