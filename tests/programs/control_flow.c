// yosegi-test: rtol=1e-12
// Control flow inside kernels: if/else chains, switch, while and do-while, continue, ternaries,
// short-circuit operators with side-effect-free operands, and an early-exit inner search loop.
#include <stdio.h>

#define N 2048

static int cls[N];
static double val[N];
static int firstdiv[N];

int main(void) {
    #pragma acc parallel loop copyout(cls, val, firstdiv)
    for (int i = 0; i < N; i++) {
        int k = i % 10;
        switch (k) {
        case 0:
            cls[i] = 100;
            break;
        case 1:
        case 2:
            cls[i] = 200 + k;
            break;
        default:
            cls[i] = (k > 6) ? 300 : 400;
        }
        double acc = 0.0;
        int j = 0;
        while (j < (i % 17)) {
            j++;
            if (j % 3 == 0) continue;
            acc += 1.0 / (double)j;
        }
        int steps = 0;
        int v = i + 1;
        do {
            v = v / 2;
            steps++;
        } while (v > 0);
        if (i % 2 == 0 && i % 3 == 0) acc *= 2.0;
        else if (i % 5 == 0 || i % 7 == 0) acc -= 0.5;
        else acc += (double)steps;
        val[i] = acc;
        /* smallest divisor >= 2 of i + 2 */
        int found = i + 2;
        for (int d = 2; d * d <= i + 2; d++) {
            if ((i + 2) % d == 0) {
                found = d;
                break;
            }
        }
        firstdiv[i] = found;
    }
    long csum = 0, dsum = 0;
    double vs = 0.0;
    int primes = 0;
    for (int i = 0; i < N; i++) {
        csum += cls[i];
        dsum += firstdiv[i];
        vs += val[i];
        if (firstdiv[i] == i + 2) primes++;
    }
    printf("classes %ld divisors %ld primes %d\n", csum, dsum, primes);
    printf("values %.15e %.15e %.15e %.15e\n", vs, val[0], val[35], val[N - 1]);
    return 0;
}
