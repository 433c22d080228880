#include <stdio.h>
#define N 1000
static double a[N];
int main(void) {
    double t = 0.0;
    #pragma acc parallel loop
    for (int i = 0; i < N; i++) {
        t = 2.0 * i;
        a[i] = t * t;
    }
    printf("%f %f\n", a[N - 1], t);
    return 0;
}
