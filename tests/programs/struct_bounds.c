// yosegi-test: rtol=1e-9
// A struct passed by pointer: its scalar fields are loop bounds and coefficients, its pointer field the data.
#include <stdio.h>
#include <stdlib.h>

struct Grid {
    int nx;
    int ny;
    int halo;
    double dx;
    double *data;
};

static void fill(struct Grid *g) {
    #pragma acc parallel loop collapse(2)
    for (int j = 0; j < g->ny; j++)
        for (int i = 0; i < g->nx; i++)
            g->data[j * g->nx + i] = (double)(i * g->dx) - (double)(j % 5);
}

static double interior_sum(const struct Grid *g) {
    double s = 0.0;
    #pragma acc parallel loop reduction(+:s)
    for (int j = g->halo; j < g->ny - g->halo; j++) {
        #pragma acc loop reduction(+:s)
        for (int i = g->halo; i < g->nx - g->halo; i++) s += g->data[j * g->nx + i] * g->dx;
    }
    return s;
}

int main(void) {
    struct Grid g;
    g.nx = 150;
    g.ny = 90;
    g.halo = 3;
    g.dx = 0.01;
    g.data = malloc((size_t)g.nx * g.ny * sizeof(double));
    fill(&g);
    printf("interior %.12e\n", interior_sum(&g));
    g.halo = 10;
    printf("interior %.12e\n", interior_sum(&g));
    printf("data %.15e %.15e\n", g.data[0], g.data[g.nx * g.ny - 1]);
    free(g.data);
    return 0;
}
