// yosegi-test: rtol=1e-12
// A 3-D box stencil written with loops over the neighbour offsets (in[z + dz][y + dy][x + dx]),
// asymmetric ranges and a weight that depends on dz: the staging pass folds each offset loop
// into its thread dim's halo.
#include <stdio.h>
#define NZ 13
#define NY 19
#define NX 45
static double in[NZ][NY][NX];
static double out[NZ][NY][NX];
void box(void) {
    #pragma acc parallel loop copyin(in) copy(out)
    for (int z = 2; z < NZ - 2; z++)
        #pragma acc loop
        for (int y = 1; y < NY - 1; y++)
            #pragma acc loop
            for (int x = 2; x < NX - 1; x++) {
                double s = 0.0;
                for (int dz = -2; dz <= 1; dz++)
                    for (int dy = -1; dy < 2; dy++)
                        for (int dx = -2; dx <= 0; dx++)
                            s += in[z + dz][y + dy][x + dx + 1] * (double)(dz + 3);
                out[z][y][x] = s;
            }
}
int main(void) {
    for (int z = 0; z < NZ; z++) for (int y = 0; y < NY; y++) for (int x = 0; x < NX; x++) { in[z][y][x] = (double)((x * 7 + y * 13 + z * 29) % 31) / 31.0; out[z][y][x] = -1.0; }
    box();
    double sum = 0.0;
    for (int z = 0; z < NZ; z++) for (int y = 0; y < NY; y++) for (int x = 0; x < NX; x++) sum += out[z][y][x] * (double)((x + y + z) % 5);
    printf("box: %.12e %.12e\n", sum, out[5][7][9]);
    return 0;
}
