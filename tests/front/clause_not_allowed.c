#include <stdlib.h>

void scale(int n, float *a) {
#pragma acc data copy(a[0:n]) collapse(2)
    for (int i = 0; i < n; i++) a[i] *= 2.0f;
}
