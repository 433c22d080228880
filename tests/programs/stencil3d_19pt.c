// yosegi-test: rtol=1e-12
// A 3-D 19-point stencil (the centre, 6 faces, 12 edges) on a box whose sides are not multiples
// of any block side, two sweeps: the staging pass groups the 19 references to `u` into one tile
// with a halo of 1 per side per dimension.
#include <stdio.h>

#define NZ 13
#define NY 19
#define NX 37

static double u[NZ][NY][NX];
static double v[NZ][NY][NX];

static void sweep(double (*restrict src)[NY][NX], double (*restrict dst)[NY][NX]) {
    #pragma acc parallel loop copyin(src[0:NZ]) copy(dst[0:NZ])
    for (int z = 1; z < NZ - 1; z++) {
        #pragma acc loop
        for (int y = 1; y < NY - 1; y++) {
            #pragma acc loop
            for (int x = 1; x < NX - 1; x++) {
                double faces = src[z - 1][y][x] + src[z + 1][y][x] + src[z][y - 1][x] + src[z][y + 1][x]
                             + src[z][y][x - 1] + src[z][y][x + 1];
                double edges = src[z - 1][y - 1][x] + src[z - 1][y + 1][x] + src[z + 1][y - 1][x] + src[z + 1][y + 1][x]
                             + src[z - 1][y][x - 1] + src[z - 1][y][x + 1] + src[z + 1][y][x - 1] + src[z + 1][y][x + 1]
                             + src[z][y - 1][x - 1] + src[z][y - 1][x + 1] + src[z][y + 1][x - 1] + src[z][y + 1][x + 1];
                dst[z][y][x] = (1.0 / 3.0) * src[z][y][x] + (1.0 / 18.0) * faces + (1.0 / 36.0) * edges;
            }
        }
    }
}

int main(void) {
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) u[z][y][x] = v[z][y][x] = (double)((x * 7 + y * 13 + z * 29) % 31) / 31.0;
    sweep(u, v);
    sweep(v, u);
    double sum = 0.0, weighted = 0.0;
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                sum += u[z][y][x];
                weighted += u[z][y][x] * (double)((x + 2 * y + 3 * z) % 5);
            }
    printf("sum %.15e\nweighted %.15e\ncentre %.15e\n", sum, weighted, u[NZ / 2][NY / 2][NX / 2]);
    return 0;
}
