// bad input: a kernel that stores pointers into memory (a table of row pointers)
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int off[4] = {0, 8, 24, 56};
    double **u = malloc(4 * sizeof(double *));
    double *udata = malloc(64 * sizeof(double));
#pragma acc parallel loop copyin(off) copy(u[0:4])
    for (int l = 0; l < 4; l++)
        u[l] = &udata[off[l]];
    printf("%ld\n", (long)(u[2] - udata));
    return 0;
}
