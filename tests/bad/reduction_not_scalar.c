// bad input: a reduction on an array
#include <stdio.h>
int main(void) {
    double arr[4] = {0.0, 0.0, 0.0, 0.0};
#pragma acc parallel loop reduction(+:arr)
    for (int i = 0; i < 100; i++) arr[i % 4] += i;
    printf("%f\n", arr[1]);
    return 0;
}
