// bad input: a reduction array read inside the loop other than by its own update
#include <stdio.h>
int main(void) {
    int h[4] = {0}, out[100];
#pragma acc parallel loop reduction(+:h) copy(out)
    for (int i = 0; i < 100; i++) {
        h[i % 4] += 1;
        out[i] = h[i % 4];
    }
    printf("%d %d\n", h[0], out[5]);
    return 0;
}
