// yosegi-test: rtol=1e-12
// Two 3-D stencils in one region, the second reading the first's result at its six
// neighbours: fusion with redundant iterations along all three dims.
#include <stdio.h>
#include <stdlib.h>

#define NZ 21
#define NY 34
#define NX 67

static float u[NZ][NY][NX], v[NZ][NY][NX], w[NZ][NY][NX];

int main(void) {
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                u[k][j][i] = (float)((k * 7 + j * 13 + i * 3) % 29) * 0.125f;
                v[k][j][i] = w[k][j][i] = 0.0f;
            }
    #pragma acc parallel copyin(u) copy(v, w)
    {
        #pragma acc loop collapse(3)
        for (int k = 1; k < NZ - 1; k++)
            for (int j = 1; j < NY - 1; j++)
                for (int i = 1; i < NX - 1; i++)
                    v[k][j][i] = u[k][j][i] + 0.1f * (u[k - 1][j][i] + u[k + 1][j][i] + u[k][j - 1][i] + u[k][j + 1][i] + u[k][j][i - 1] + u[k][j][i + 1] - 6.0f * u[k][j][i]);
        #pragma acc loop collapse(3)
        for (int k = 1; k < NZ - 1; k++)
            for (int j = 1; j < NY - 1; j++)
                for (int i = 1; i < NX - 1; i++)
                    w[k][j][i] = v[k][j][i] + 0.1f * (v[k - 1][j][i] + v[k + 1][j][i] + v[k][j - 1][i] + v[k][j + 1][i] + v[k][j][i - 1] + v[k][j][i + 1] - 6.0f * v[k][j][i]);
    }
    double s = 0;
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) s += (double)w[k][j][i] * (1 + (i + j + k) % 5) + v[k][j][i];
    printf("sum %.6e\n", s);
    printf("samples %.6e %.6e\n", (double)w[1][1][1], (double)w[NZ / 2][NY / 2][NX / 2]);
    return 0;
}
