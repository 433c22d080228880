// bad input: an update of a reduction array with another operator than the clause's
#include <stdio.h>
int main(void) {
    int h[4] = {1, 1, 1, 1};
#pragma acc parallel loop reduction(+:h)
    for (int i = 0; i < 100; i++) {
        h[i % 4] *= 2;
    }
    printf("%d\n", h[0]);
    return 0;
}
