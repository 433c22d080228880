// yosegi-test: rtol=1e-5
/* A 3-D seven-point stencil on float arrays, the shape of Himeno's pressure reads: the
 * streaming staged variant keeps a ring of planes along z and copies in two new planes per
 * point instead of a block's four. A few steps with the arrays' roles swapped. */
#include <stdio.h>

#define NZ 34
#define NY 18
#define NX 66
#define STEPS 3

static float in[NZ][NY][NX];
static float out[NZ][NY][NX];

void heat(void) {
    #pragma acc parallel loop
    for (int z = 1; z < NZ - 1; z++) {
        #pragma acc loop
        for (int y = 1; y < NY - 1; y++) {
            #pragma acc loop
            for (int x = 1; x < NX - 1; x++)
                out[z][y][x] = 0.25f * in[z][y][x]
                               + 0.125f * (in[z - 1][y][x] + in[z + 1][y][x] + in[z][y - 1][x]
                                           + in[z][y + 1][x] + in[z][y][x - 1] + in[z][y][x + 1]);
        }
    }
}

void copy_back(void) {
    #pragma acc parallel loop
    for (int z = 1; z < NZ - 1; z++)
        #pragma acc loop
        for (int y = 1; y < NY - 1; y++)
            #pragma acc loop
            for (int x = 1; x < NX - 1; x++)
                in[z][y][x] = out[z][y][x];
}

int main(void) {
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                in[z][y][x] = (float)((z * 7 + y * 13 + x * 29) % 31) * 0.125f + 0.5f;
                out[z][y][x] = 0.0f;
            }
    #pragma acc data copy(in, out)
    {
        for (int s = 0; s < STEPS; s++) {
            heat();
            copy_back();
        }
    }
    double sum = 0.0;
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) sum += (double)in[z][y][x] * (double)((x + 2 * y + 3 * z) % 5);
    printf("heat7: sum %.9e in[9][7][33] %.9e\n", sum, (double)in[9][7][33]);
    return 0;
}
