// yosegi-test: rtol=1e-12
// A multi-pass 2-D filter in one region, for loop fusion along both dims: a blur along x,
// one along y, a sharpening pass reading both intermediates, loops of different bounds, and a
// pass reading an intermediate transposed (which cuts the chain).
#include <stdio.h>
#include <stdlib.h>

#define NY 203
#define NX 317

static double in[NY][NX], bx[NY][NX], by[NY][NX], out[NY][NX], tr[NX][NY];

int main(void) {
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            in[j][i] = ((j * 31 + i * 17) % 97) * 0.25 - 3.0;
            bx[j][i] = by[j][i] = out[j][i] = 0.0;
        }
    #pragma acc kernels copyin(in) copy(bx, by, out) copyout(tr)
    {
        #pragma acc loop independent collapse(2)
        for (int j = 0; j < NY; j++)
            for (int i = 1; i < NX - 1; i++)
                bx[j][i] = 0.25 * in[j][i - 1] + 0.5 * in[j][i] + 0.25 * in[j][i + 1];
        #pragma acc loop independent collapse(2)
        for (int j = 1; j < NY - 1; j++)
            for (int i = 0; i < NX; i++)
                by[j][i] = 0.25 * bx[j - 1][i] + 0.5 * bx[j][i] + 0.25 * bx[j + 1][i];
        #pragma acc loop independent collapse(2)
        for (int j = 2; j < NY - 2; j++)
            for (int i = 2; i < NX - 2; i++)
                out[j][i] = 2.0 * in[j][i] - 0.5 * (by[j][i - 2] + by[j][i + 2]) + 0.1 * (by[j - 2][i] - bx[j + 1][i + 1]);
        #pragma acc loop independent collapse(2)
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NY; j++)
                tr[i][j] = out[j][i];
    }
    double s = 0, w = 0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            s += out[j][i] * (1 + (i + j) % 7) + by[j][i] + bx[j][i] * 0.5;
            w += tr[i][j] * (i % 3);
        }
    printf("sum %.12e %.12e\n", s, w);
    printf("samples %.12e %.12e %.12e\n", out[2][2], out[NY - 3][NX - 3], by[NY / 2][1]);
    return 0;
}
