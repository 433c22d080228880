// yosegi-test: rtol=0
// A collapse(2) loop over a rectangular index space with integer arithmetic (exact output).
#include <stdio.h>

#define NI 173
#define NJ 211

static long grid[NI][NJ];

int main(void) {
    #pragma acc parallel loop collapse(2) copyout(grid)
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            grid[i][j] = (long)i * 1000 + j * 3 - (i ^ j);
    long total = 0, diag = 0;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++) {
            total += grid[i][j];
            if (i == j) diag += grid[i][j];
        }
    printf("total %ld\n", total);
    printf("diag %ld\n", diag);
    printf("corners %ld %ld %ld %ld\n", grid[0][0], grid[0][NJ - 1], grid[NI - 1][0], grid[NI - 1][NJ - 1]);
    return 0;
}
