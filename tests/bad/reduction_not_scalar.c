// bad input: a reduction on a struct
#include <stdio.h>
struct pair { double lo, hi; };
int main(void) {
    struct pair p = {0.0, 0.0};
#pragma acc parallel loop reduction(+:p)
    for (int i = 0; i < 100; i++) p.lo += i;
    printf("%f\n", p.lo);
    return 0;
}
