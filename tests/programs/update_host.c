// yosegi-test: rtol=1e-9
// update host inside a time loop: the host prints an intermediate value every few steps.
#include <stdio.h>

#define N 2000
#define STEPS 60

static double u[N], un[N];

int main(void) {
    for (int i = 0; i < N; i++) u[i] = (i == N / 2) ? 1000.0 : 0.0;
    #pragma acc data copy(u) create(un)
    {
        for (int t = 1; t <= STEPS; t++) {
            #pragma acc parallel loop present(u, un)
            for (int i = 1; i < N - 1; i++) un[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
            #pragma acc parallel loop present(u, un)
            for (int i = 1; i < N - 1; i++) u[i] = un[i];
            if (t % 10 == 0) {
                #pragma acc update host(u[N/2-5:11])
                printf("step %d u[N/2] %.15e u[N/2+5] %.15e\n", t, u[N / 2], u[N / 2 + 5]);
            }
        }
    }
    double s = 0.0;
    for (int i = 0; i < N; i++) s += u[i];
    printf("mass %.12e\n", s);
    return 0;
}
