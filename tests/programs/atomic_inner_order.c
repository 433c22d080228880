// An inner loop whose iterations read an element that an `atomic` in another iteration updates
// (the V&V suite's shift captures): each thread runs that loop in order, so every captured value
// is the sequential one. Beside it, an inner loop whose atomics hit a different element per
// iteration, and one whose only access to the element is atomic (both stay parallel; their
// results do not depend on the order).
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int n = 300;
    unsigned *a = malloc(n * sizeof *a), *bits = malloc(n * sizeof *bits);
    unsigned *seen = malloc(7 * n * sizeof *seen), *old = malloc(7 * n * sizeof *old);
    for (int x = 0; x < n; x++) {
        a[x] = 1;
        bits[x] = (unsigned)(x * 37 + 11) % 128;
    }
    #pragma acc data copyin(bits[0:n]) copy(a[0:n]) copyout(seen[0:7*n], old[0:7*n])
    {
        #pragma acc parallel
        {
            #pragma acc loop
            for (int x = 0; x < n; ++x) {
                #pragma acc loop
                for (int y = 0; y < 7; ++y) {
                    seen[x * 7 + y] = a[x];
                    old[x * 7 + y] = 0;
                    if ((bits[x] >> y) % 2 == 1) {
                        #pragma acc atomic capture
                        old[x * 7 + y] = a[x] <<= 1;
                    }
                }
            }
        }
    }
    unsigned long long check = 0;
    for (int i = 0; i < 7 * n; i++) check = check * 31 + seen[i] * 7 + old[i];
    unsigned long long final = 0;
    for (int x = 0; x < n; x++) final += a[x] * (x + 1);
    printf("shift captures: checksum %llu final %llu\n", check, final);

    int *count = calloc(n, sizeof *count), *total = calloc(1, sizeof *total);
    #pragma acc parallel loop copy(count[0:n], total[0:1])
    for (int x = 0; x < n; ++x) {
        #pragma acc loop
        for (int y = 0; y < 9; ++y) {
            #pragma acc atomic update
            count[(x + y) % n] += y;
            #pragma acc atomic update
            total[0] += 1;
        }
    }
    long sum = 0;
    for (int x = 0; x < n; x++) sum += (long)count[x] * (x % 5 + 1);
    printf("parallel atomics: sum %ld total %d\n", sum, total[0]);
    free(a); free(bits); free(seen); free(old); free(count); free(total);
    return 0;
}
