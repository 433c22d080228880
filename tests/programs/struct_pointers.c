// Structs in kernels through pointers and by value: pointers into a host array of structs
// (`lo = &grid[i]; hi = lo + 1; hi->e`), writes through them, pointers to struct locals,
// structs passed to and returned from routines by value, a host struct passed by address.
#include <stdio.h>

#define N 300

typedef struct {
    double e;
    double xs[3];
    int id;
} node_t;

typedef struct {
    double x, y, z;
} vec3;

typedef struct {
    double scale;
    int count;
} params_t;

#pragma acc routine seq
static vec3 add(vec3 a, vec3 b) {
    vec3 r = {a.x + b.x, a.y + b.y, a.z + b.z};
    return r;
}

#pragma acc routine seq
static vec3 scaled(vec3 v, double s) {
    v.x *= s;
    v.y *= s;
    v.z *= s;
    return v;
}

#pragma acc routine seq
static double dot(const vec3 *a, const vec3 *b) { return a->x * b->x + a->y * b->y + a->z * b->z; }

#pragma acc routine seq
static void normalise(vec3 *v) {
    double n = dot(v, v);
    if (n > 0) {
        v->x /= n;
        (*v).y /= n;
        v[0].z /= n;
    }
}

/* Interpolates between the two nodes around x (grid sorted by e). */
#pragma acc routine seq
static double interpolate(const node_t *grid, int n, double x, const params_t *p) {
    int i = 0;
    while (i < n - 2 && grid[i + 1].e < x) i++;
    const node_t *lo = &grid[i];
    const node_t *hi = lo + 1;
    double f = (x - lo->e) / (hi->e - lo->e);
    return p->scale * (lo->xs[1] + f * (hi->xs[1] - lo->xs[1])) + (hi - grid) * 0.001 + p->count;
}

int main(void) {
    static node_t grid[N];
    double out[N];
    params_t params = {0.5, 3};
    for (int i = 0; i < N; i++) {
        grid[i].e = i * 1.5;
        grid[i].xs[0] = i;
        grid[i].xs[1] = (i % 17) * 0.25;
        grid[i].xs[2] = -i;
        grid[i].id = i;
    }

    #pragma acc parallel loop copy(grid) copyout(out)
    for (int i = 0; i < N; i++) {
        vec3 a = {i * 0.5, 1.0, -2.0};
        vec3 b = {1.0, i * 0.25, 3.0};
        vec3 c = add(a, scaled(b, 2.0));
        vec3 *pc = &c;
        normalise(pc);
        node_t *mine = &grid[i];
        double v = interpolate(grid, N, (i * 7 % N) * 1.5 + 0.75, &params);
        out[i] = v + dot(&a, pc) + pc->x;
        mine->xs[2] = mine->xs[0] * 2.0 + (*mine).id;
    }

    double s = 0;
    for (int i = 0; i < N; i++) s += out[i] + grid[i].xs[2] * 0.001;
    printf("%.10f\n", s);
    return 0;
}
