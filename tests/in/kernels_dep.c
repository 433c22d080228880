// A kernels region: the first loop is parallel, the second carries a dependence.
#include <stdio.h>
#define N 256
float a[N], b[N];

int main(void) {
    for (int i = 0; i < N; i++) b[i] = i * 0.5f;
#pragma acc kernels
    {
        for (int i = 0; i < N; i++)
            a[i] = 2.0f * b[i];
        for (int i = 1; i < N; i++)
            a[i] = a[i - 1] + b[i];
    }
    printf("%f\n", a[N - 1]);
    return 0;
}
