#include <stdio.h>
#define N 1000
static double a[N];
int main(void) {
    double last = 0.0;
    for (int i = 0; i < N; i++) a[i] = i;
    #pragma acc parallel loop
    for (int i = 0; i < N; i++) {
        double here = a[i];
        a[i] = here - last;
        last = here;
    }
    printf("%f\n", a[N - 1]);
    return 0;
}
