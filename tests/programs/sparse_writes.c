// yosegi-test: rtol=0
// A kernel that writes only the two ends of an array the host changed in between: its write
// section is the hull 0..N, but the middle keeps the host's values (the launch must not take
// the device's stale middle for the array's value).
#include <stdio.h>

#define N 1000

double v[N];

int main(void) {
    for (int i = 0; i < N; i++) v[i] = i;
    #pragma acc parallel loop copy(v)
    for (int i = 0; i < N; i++) v[i] = 2 * v[i];
    for (int i = 1; i < N - 1; i++) v[i] += 0.5;
    #pragma acc parallel loop
    for (int k = 0; k < 1; k++) {
        v[0] = -1;
        v[N - 1] = -2;
    }
    double sum = 0;
    for (int i = 0; i < N; i++) sum += v[i];
    printf("%.1f %.1f %.1f %.1f\n", sum, v[0], v[N / 2], v[N - 1]);
    return 0;
}
