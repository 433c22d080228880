/* An array of structs each small enough, together too large for a GPU thread's local memory. */
#include <stdio.h>
typedef struct { double r, i; int hits[1024]; } cell;
int main(void) {
    double out[8];
#pragma acc parallel loop copyout(out)
    for (int i = 0; i < 8; i++) {
        cell cells[200];
        cells[0].r = i;
        out[i] = cells[0].r;
    }
    printf("%f\n", out[3]);
    return 0;
}
