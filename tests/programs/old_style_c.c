/* Old C that gcc still compiles (gnu11, with warnings): old-style (K&R) definitions called
 * from host code and from inside compute constructs (float, double, int, char, short,
 * pointer and array parameters; parameters declared in another order than listed; one left
 * to default `int`), declarations with `()` (unspecified parameters) called with arguments,
 * and implicit `int` (`static count = 0;`, `register i;`, functions without a return type,
 * `main()`). As in Rodinia's backprop (`float squash(x) float x; {...}`) and CSC's jacobi
 * (`void usage(pname) char *pname; {...}`). A GPU's expf may differ from glibc's in the last
 * bit of a float. */
// yosegi-test: rtol=1e-6
#include <stdio.h>
#include <math.h>

#define N 300

static count = 0;
static const limit = 7;

double ramp();          /* defined after main, old-style */
double cube();          /* defined after main with a prototype */
static double scale_of();

/* A float parameter: callers without a prototype pass a double, which it receives. */
float squash(x)
float x;
{
    return 1.0f / (1.0f + expf(-x));
}

/* Declared in another order than listed, and `k` left to default int. */
double blend(w, a, k)
double a;
float w;
{
    return a * w + k % 7;
}

/* Array and pointer parameters (the kernel inlines it). */
double dot3(v, i, w)
int i;
double v[], *w;
{
    return v[3 * i] * w[3 * i] + v[3 * i + 1] * w[3 * i + 1] + v[3 * i + 2] * w[3 * i + 2];
}

/* Implicit int result, both parameters default int. */
twice_plus(a, b)
{
    return 2 * a + b;
}

/* char and short parameters: promoted to int by the caller, converted back here. */
int widen(c, s)
char c;
short s;
{
    return c * 1000 + s;
}

/* An old-style routine calling another. */
float layer(x, bias)
float x, bias;
{
    return squash(x + bias) - squash(bias);
}

/* Host only: a pointer parameter written through, and a string. */
void fill(a, n, step)
double *a;
int n;
double step;
{
    register i;
    for (i = 0; i < n; i++) a[i] = step * (i % 17) - 1.0;
}

/* Host only, called inside a data region whose device copy is the current one: the host
 * code's coherence hooks must see `a` (declared after the `)`) as a pointer. */
double total(a, n)
int n;
double *a;
{
    double t = 0;
    int i;
    for (i = 0; i < n; i++) t += a[i];
    return t;
}

/* Host only, writing through a pointer the next kernel reads. */
void bump(n, a)
double *a;
{
    int i;
    for (i = 0; i < n; i += 3) a[i] += 0.5;
}

void report(name, v)
char *name;
double v;
{
    count++;
    printf("%-8s %.9f\n", name, v);
}

main()
{
    static float in[N];
    static double out[N], mixed[N], v[3 * N], w[3 * N];
    static int ia[N];
    register i;
    int j;
    for (i = 0; i < N; i++) in[i] = (i - N / 2) * 0.03f;
    fill(v, 3 * N, 0.125);
    fill(w, 3 * N, 0.0625);
    double s = scale_of(N);

#pragma acc parallel loop copyin(in, v, w) copyout(out, ia)
    for (int k = 0; k < N; k++) {
        out[k] = squash(in[k]) + blend(in[k], s * k, k) + dot3(v, k, w);
        ia[k] = twice_plus(k, k % 5) + widen((char)(k % 100), (short)(3 * k));
    }

#pragma acc parallel loop copyin(in) copyout(mixed)
    for (int k = 0; k < N; k++)
        mixed[k] = ramp(in[k], 0.5) + cube(s * k) + layer(in[k], 0.25f);

#pragma acc data copy(out)
    {
#pragma acc parallel loop present(out)
        for (int k = 0; k < N; k++) out[k] = 2.0 * out[k] - squash(in[k]);
        report("inside", total(out, N));
        bump(N, out);
#pragma acc parallel loop present(out)
        for (int k = 0; k < N; k++) out[k] = out[k] + twice_plus(k, 1);
    }

    double sum = 0, mix = 0, host = 0, first = 0;
    long isum = 0;
    for (j = 0; j < N; j++) {
        sum += out[j];
        mix += mixed[j];
        isum += ia[j];
        /* The same functions, called by the host. */
        first += squash(in[j]) + blend(in[j], s * j, j) + dot3(v, j, w);
        host += ramp(in[j], 0.5) + cube(s * j) + layer(in[j], 0.25f);
    }
    report("kernel", sum + mix);
    report("first", first);
    report("host", host);
    report("mixed", mix);
    report("ints", (double)isum);
    printf("out[7] %.9f ia[299] %d squash(0) %.6f count %d limit %d\n", out[7], ia[299], squash(0), count, limit);
    return 0;
}

/* Old-style, after its `()` declaration: the kernel's call passes (float, double). */
double ramp(t, lo)
double lo;
float t;
{
    return t > lo ? t - lo : 0.0;
}

double cube(double x)
{
    return x * x * x;
}

static double scale_of(n)
int n;
{
    return 1.0 / n;
}
