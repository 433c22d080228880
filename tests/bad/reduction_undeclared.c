// bad input: a reduction on a variable that does not exist
#include <stdio.h>
int main(void) {
    double total = 0.0;
#pragma acc parallel loop reduction(+:totl)
    for (int i = 0; i < 100; i++) total += i;
    printf("%f\n", total);
    return 0;
}
