// yosegi-test: rtol=0
// An atomic capture that exchanges an element (`c[x] = b[x]; b[x] = a[x];`) reads the value it
// replaces: the old values must be where the loop runs, on every device it is split over (the
// V&V suite's atomic_structured_assign_assign read zeros on the second device before).
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 1 << 14;
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
    for (int x = 0; x < n; ++x) {
        a[x] = x + 0.5;
        b[x] = 3.0 * x;
    }
    #pragma acc data copyin(a[0:n]) copy(b[0:n]) copyout(c[0:n])
    {
        #pragma acc parallel loop
        for (int x = 0; x < n; ++x) {
            #pragma acc atomic capture
            {
                c[x] = b[x];
                b[x] = a[x];
            }
        }
        /* Again, the other way round: b's values now come from the first exchange. */
        #pragma acc parallel loop
        for (int x = 0; x < n; ++x) {
            #pragma acc atomic capture
            {
                a[x] = b[x];
                b[x] = c[x];
            }
        }
    }
    double sc = 0, sb = 0;
    int wrong = 0;
    for (int x = 0; x < n; ++x) {
        sc += c[x];
        sb += b[x];
        wrong += c[x] != 3.0 * x || b[x] != 3.0 * x;
    }
    printf("c %.1f b %.1f wrong %d\n", sc, sb, wrong);
    return 0;
}
