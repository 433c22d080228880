// yosegi-test: rtol=1e-12
// A loop that defines two arrays which the next loop reads at different offsets (`p` along j,
// `q` along i): the fused kernel computes each only where its reader needs it (the research
// distributes such a loop first, so each statement gets its own redundant iterations), then a
// third loop reading both at the other offsets, and a 1-D chain of the same shape.
#include <stdio.h>

#define NY 61
#define NX 139

static double in[NY][NX], p[NY][NX], q[NY][NX], out[NY][NX], o2[NY][NX];
static double a[5000], b[5000], c[5000], d[5000];

int main(void) {
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            in[j][i] = ((j * 13 + i * 7) % 29) * 0.25 - 2.0;
            p[j][i] = q[j][i] = out[j][i] = o2[j][i] = 0.0;
        }
    for (int i = 0; i < 5000; i++) {
        a[i] = (i % 17) * 0.5;
        b[i] = c[i] = d[i] = 0.0;
    }
    #pragma acc kernels copyin(in) copy(p, q, out, o2, a, b, c, d)
    {
        #pragma acc loop independent collapse(2)
        for (int j = 1; j < NY - 1; j++)
            for (int i = 1; i < NX - 1; i++) {
                double s = in[j][i - 1] + in[j][i + 1];
                p[j][i] = 0.5 * s + in[j - 1][i];
                q[j][i] = s - 0.25 * in[j + 1][i];
            }
        #pragma acc loop independent collapse(2)
        for (int j = 2; j < NY - 2; j++)
            for (int i = 2; i < NX - 2; i++)
                out[j][i] = p[j - 1][i] + p[j + 1][i] - q[j][i - 1] * 0.5 + q[j][i + 2];
        #pragma acc loop independent collapse(2)
        for (int j = 3; j < NY - 3; j++)
            for (int i = 3; i < NX - 3; i++)
                o2[j][i] = out[j][i + 1] - out[j - 1][i] + p[j][i];
        #pragma acc loop independent
        for (int i = 1; i < 4999; i++) {
            b[i] = a[i - 1] + a[i + 1];
            c[i] = a[i] * 0.5;
        }
        #pragma acc loop independent
        for (int i = 3; i < 4996; i++)
            d[i] = b[i - 3] + b[i + 3] - c[i];
    }
    double s = 0, t = 0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            s += out[j][i] * (1 + (i + j) % 5) + p[j][i] - q[j][i];
            t += o2[j][i];
        }
    double u = 0;
    for (int i = 0; i < 5000; i++) u += d[i] * (1 + i % 3) + c[i];
    printf("sums %.12e %.12e %.12e\n", s, t, u);
    return 0;
}
