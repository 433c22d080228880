// bad input: a call to an OpenACC routine that does not exist (a misspelt acc_copyin); a shared
// object links with it, so it must be refused before the program runs, at the call
#include <stdio.h>
#include <openacc.h>

int main(void) {
    double a[100];
    for (int i = 0; i < 100; i++) a[i] = i;
    printf("starting\n");
    acc_copy_in(a, sizeof a);
#pragma acc parallel loop present(a)
    for (int i = 0; i < 100; i++) a[i] *= 2.0;
    printf("%f\n", a[10]);
    return 0;
}
