// yosegi-test: rtol=0
// Structs in kernels: members of elements of host arrays of structs read and assigned
// (`a[x].c = a[x].a + a[x].b`, as the OpenACC V&V suite's data_with_structs does), structs of
// mixed member types with array and nested struct members, a 2-D static array of structs, an
// array of structs reached through a host struct; struct locals with initializer lists and
// designators, copied whole to and from array elements and host structs; sizeof of a struct.
#include <stdio.h>
#include <stdlib.h>

typedef struct multi_item {
    double a;
    double b;
    double c;
} multi_item;

struct vec3 {
    double x, y, z;
};

struct particle {
    int id;
    float w;
    double pos[3];
    struct {
        short s;
        unsigned char c;
    } tag;
    long long hits;
};

struct cell {
    float v;
    int n;
};

struct sim {
    int n;
    struct particle *parts;
};

struct box {
    struct vec3 lo, hi;
    int bins[4];
};

#define N 64

static struct cell grid[8][16];
static struct vec3 moved[N];
static double widths[N];
static int bins_out[N * 4];

int main(void) {
    int n = N;
    multi_item *a = (multi_item *)malloc(n * sizeof(multi_item));
    for (int x = 0; x < n; ++x) {
        a[x].a = x * 0.5;
        a[x].b = 3.0 - x;
        a[x].c = -1.0;
    }

    #pragma acc data copy(a[0:n])
    {
        #pragma acc parallel
        {
            #pragma acc loop
            for (int x = 0; x < n; ++x) {
                a[x].c = a[x].a + a[x].b;
            }
        }
    }

    struct sim s;
    s.n = n;
    s.parts = (struct particle *)malloc(n * sizeof(struct particle));
    for (int i = 0; i < n; i++) {
        s.parts[i].id = i;
        s.parts[i].w = 0.25f * (i % 4);
        for (int k = 0; k < 3; k++) s.parts[i].pos[k] = i + 0.125 * k;
        s.parts[i].tag.s = (short)(100 - i);
        s.parts[i].tag.c = (unsigned char)(i * 5);
        s.parts[i].hits = 0;
    }
    struct vec3 shift = { 0.5, -1.0, 2.0 };

    #pragma acc parallel loop copy(s.parts[0:s.n]) copyout(moved, widths, bins_out)
    for (int i = 0; i < s.n; i++) {
        struct vec3 p = { s.parts[i].pos[0], s.parts[i].pos[1], .z = s.parts[i].pos[2] };
        struct vec3 d = shift;                       /* a host struct, member by member */
        struct box b = { .lo = { 0.0 }, .hi = p, .bins = { 1, 2 } };
        p.x += d.x * s.parts[i].w;
        p.y += d.y * s.parts[i].id;
        p.z = p.z * 2 + d.z;
        for (int k = 0; k < 3; k++) s.parts[i].pos[k] += s.parts[i].w * (k + 1);
        s.parts[i].tag.s += s.parts[i].tag.c;
        s.parts[i].tag.c = (unsigned char)(s.parts[i].tag.c * 3);
        s.parts[i].hits = (long long)s.parts[i].id * 1000000007LL + sizeof(struct particle) + sizeof(b);
        b.bins[i % 4] += 10;
        b.lo.y = -p.y;
        moved[i] = p;                                /* a struct local to an array element */
        struct box c = b;
        c.hi.x -= 1.0;
        widths[i] = c.hi.x - c.lo.x + c.hi.y - c.lo.y;
        for (int k = 0; k < 4; k++) bins_out[i * 4 + k] = c.bins[k];
    }

    #pragma acc parallel loop collapse(2) copy(grid)
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++) {
            struct cell here = grid[i][j];
            here.n = i * 16 + j;
            here.v = here.n * 0.5f;
            grid[i][j] = here;
            grid[i][j].v += (j > 0) ? 1.0f : 0.0f;
        }

    /* A serial region swapping two elements through a struct local. */
    #pragma acc serial copy(a[0:n])
    {
        multi_item t = a[0];
        a[0] = a[n - 1];
        a[n - 1] = t;
    }

    double sa = 0.0, sp = 0.0, sm = 0.0, sw = 0.0;
    long long sh = 0, sg = 0, sb = 0;
    for (int i = 0; i < n; i++) {
        sa += a[i].a + 2 * a[i].b + 3 * a[i].c;
        for (int k = 0; k < 3; k++) sp += s.parts[i].pos[k] * (k + 1);
        sh += s.parts[i].hits % 1000 + s.parts[i].tag.s * 7 + s.parts[i].tag.c;
        sm += moved[i].x + 2 * moved[i].y + 3 * moved[i].z;
        sw += widths[i];
        for (int k = 0; k < 4; k++) sb = sb * 3 + bins_out[i * 4 + k];
    }
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++) sg += grid[i][j].n + (long long)(grid[i][j].v * 2);
    printf("a %.6f first %.3f %.3f %.3f\n", sa, a[0].a, a[0].b, a[0].c);
    printf("parts %.6f %lld moved %.6f widths %.6f\n", sp, sh, sm, sw);
    printf("grid %lld bins %lld\n", sg, sb);
    free(a);
    free(s.parts);
    return 0;
}
