// bad input: atomic update on a plain assignment that is not an update
#include <stdio.h>
int main(void) {
    int bins[8] = {0};
    int last[8] = {0};
#pragma acc parallel loop copy(bins, last)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic update
        last[i % 8] = bins[i % 8];
    }
    printf("%d\n", last[3]);
    return 0;
}
