// bad input: a structured atomic capture whose two statements touch different variables
#include <stdio.h>
int main(void) {
    int x[4] = {0}, y[4] = {0}, v[100];
#pragma acc parallel loop copy(x, y, v)
    for (int i = 0; i < 100; i++) {
#pragma acc atomic capture
        {
            v[i] = x[i % 4];
            y[i % 4] += 1;
        }
    }
    printf("%d %d\n", x[0], v[5]);
    return 0;
}
