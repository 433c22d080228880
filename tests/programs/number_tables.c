// Initializers made of plain numbers, which the front end holds as flat runs: file-scope
// tables (negated, hexadecimal, octal, suffixed, floating) read in kernels and on the host; a
// length taken from the count; runs broken by other elements and designators; kernel-local
// arrays and structs initialised from runs, partly or wholly; a block whose first statement is
// a comma expression of numbers.
#include <stdio.h>

static const double weights[] = {0.5, -1.25, 2e-1, -3.e2, .75, 0x1p-3, -0x1.8p1, 4.f, -5.5F, 6.0L, 1e+1, -0.0};
static const int codes[12] = {1, -2, 0x1F, -0x10, 017, -010, 7u, 8L, -9LL, 10UL, 0, -2147483647};
static const long wide[] = {-9223372036854775807L, 2147483648, -2147483648, 4294967295u, -1};
static const short grid[3][4] = {{1, 2, 3, 4}, {-5, -6}, {9, 10, 11, 12}};
static int mixed[12] = {1, 2, [5] = 9, 10, 11, 3 * 4, -(5), 6};
enum { seven = 7 };
static int named[6] = {seven, 1, 2, seven * 2, 3, 4};
static const unsigned char bytes[] = {'a', 66, 'c', 255, 0x7f, 1};

typedef struct { double x; int k; float f; } point;

int main(void) {
    int n = (int)(sizeof weights / sizeof weights[0]);
    double out[64];
    long total[64];
    #pragma acc parallel loop copyin(weights, codes, grid) copyout(out, total)
    for (int i = 0; i < 64; i++) {
        double c[5] = {0.5, -1, 2e-1, 3, -0.25f};
        int k[6] = {1, -2};
        point p = {1.5, -3, 2.25f};
        point ps[2] = {{-1, 2, 3}, {4.5, -6}};
        double s = weights[i % 12] * c[i % 5] + codes[i % 12] + k[i % 6];
        s += p.x * p.k + p.f + ps[i % 2].x - ps[i % 2].k + ps[1].f;
        out[i] = s + grid[i % 3][i % 4];
        total[i] = codes[(i * 5) % 12] * (long)(i + 1);
    }
    double s = 0;
    long t = 0;
    for (int i = 0; i < 64; i++) {
        s += out[i] * (i % 7 + 1);
        t += total[i];
    }
    { 1, 2, t++; }
    long w = 0;
    for (int i = 0; i < 5; i++) w ^= wide[i] + i;
    int m = 0;
    for (int i = 0; i < 12; i++) m = m * 3 + mixed[i] + named[i % 6];
    int b = 0;
    for (int i = 0; i < (int)sizeof bytes; i++) b = b * 5 + bytes[i];
    printf("%d %.9f %ld %ld %d %d %zu\n", n, s, t, w, m, b, sizeof wide);
    return 0;
}
