// yosegi-test: rtol=1e-12
// A serial region, atomic capture/read/write, update device after a host change, async with wait,
// and an if clause that keeps a small loop on the host.
#include <stdio.h>

#define N 1000

static double a[N];
static int order[N];

int main(void) {
    for (int i = 0; i < N; i++) a[i] = (double)i;
    int counter = 0;
    double total = 0.0;
    #pragma acc data copy(a, order) copy(counter)
    {
        /* A serial region runs on one device thread, in order. */
        #pragma acc serial
        {
            for (int i = 1; i < N; i++) a[i] = a[i - 1] * 0.5 + a[i];
        }
        /* Each iteration takes a distinct ticket; the set of tickets is 0..N-1 whatever the order. */
        #pragma acc parallel loop
        for (int i = 0; i < N; i++) {
            int ticket;
            #pragma acc atomic capture
            ticket = counter++;
            order[i] = ticket;
        }
        #pragma acc update host(a)
        for (int i = 0; i < N; i += 2) a[i] = -a[i];
        #pragma acc update device(a)
        #pragma acc parallel loop async(1)
        for (int i = 0; i < N; i++) a[i] = a[i] * 2.0 + 1.0;
        #pragma acc wait(1)
        int small = 10;
        #pragma acc parallel loop if(small > 100)
        for (int i = 0; i < small; i++) a[i] += 1000.0;
    }
    long ticket_sum = 0;
    int seen_max = 0;
    for (int i = 0; i < N; i++) {
        ticket_sum += order[i];
        if (order[i] > seen_max) seen_max = order[i];
        total += a[i];
    }
    double last_read;
    #pragma acc atomic read
    last_read = a[N - 1];
    #pragma acc atomic write
    a[0] = last_read;
    printf("counter %d tickets %ld max %d\n", counter, ticket_sum, seen_max);
    printf("a %.15e %.15e %.15e\n", a[0], a[1], a[N / 2]);
    printf("total %.12e\n", total);
    return 0;
}
