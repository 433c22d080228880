// bad input: a parallel loop whose trip count depends on the data
#include <stdio.h>
int main(void) {
    int a[101];
    int i;
    for (i = 0; i < 100; i++) a[i] = i + 1;
    a[100] = 0;
#pragma acc parallel loop
    for (i = 0; a[i] != 0; i++) a[i] = 2 * a[i];
    printf("%d\n", a[5]);
    return 0;
}
