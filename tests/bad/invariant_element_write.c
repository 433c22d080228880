#include <stdio.h>
#define N 100000
static int a[N], s[1];
int main(void) {
    #pragma acc parallel loop copy(a, s)
    for (int i = 0; i < N; i++) {
        a[0] = i;
        s[0] += 1;
    }
    printf("%d %d\n", a[0], s[0]);
    return 0;
}
