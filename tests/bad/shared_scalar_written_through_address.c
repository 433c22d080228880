// bad input: writing through the address of a host scalar every iteration shares
#include <stdio.h>
#pragma acc routine seq
static void bump(int *n) { *n += 1; }
int main(void) {
    int count = 0;
    double c[10];
#pragma acc parallel loop copyout(c)
    for (int i = 0; i < 10; i++) {
        c[i] = i;
        bump(&count);
    }
    printf("%d %f\n", count, c[3]);
    return 0;
}
