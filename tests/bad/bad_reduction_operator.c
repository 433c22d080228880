// bad input: % is not a reduction operator
#include <stdio.h>
int main(void) {
    int a[100], s = 0;
    for (int i = 0; i < 100; i++) a[i] = i;
#pragma acc parallel loop reduction(%:s)
    for (int i = 0; i < 100; i++) s += a[i];
    printf("%d\n", s);
    return 0;
}
