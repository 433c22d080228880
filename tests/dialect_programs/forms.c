/* The plain C twin of forms.cu. */
#include <stdio.h>

#define N 1000

int a[N], b[N], c[N];
float x[N], y[N];
int limit;
int counters[4];
int slots[N];
int grid2[40][50];

static float scale(float v, float s)
{
    return v * s + 1.0f;
}

int main(void)
{
    limit = N / 2;
    for (int i = 0; i < N; i++) {
        a[i] = i * 3 % 17;
        b[i] = i % 128 + 1000 * (i / 128);
    }
    for (int i = 0; i < limit; i++)
        c[i] = a[i] + b[i];
    limit = N;
    for (int i = 0; i < limit; i++)
        c[i] = a[i] + b[i];
    for (int i = 3; i < N; i++)
        c[i] += a[i - 2] - a[i - 1];
    for (int i = 0; i < N; i++)
        b[i] = b[i] - (int)(i % 7);
    for (int i = 0; i < N; i++)
        x[i] = (float)(a[i] - b[i % 100]) * 0.5f;
    for (int i = 0; i < N; i++)
        y[i] = scale(x[i], 0.25f);
    for (int i = 0; i < N; i++) {
        counters[0] += a[i];
        if (b[i] % 997 > counters[1])
            counters[1] = b[i] % 997;
        counters[2] -= 1;
        if (i % 32 == 0) {
            counters[3] += 1;
            slots[i] = 1;
        }
    }
    for (int r = 0; r < 40; r++)
        for (int q = 0; q < 50; q++)
            grid2[r][q] = r * 100 + q;
    long sum = 0;
    double fsum = 0.0;
    int claimed = 0;
    for (int i = 0; i < N; i++) {
        sum += (long)a[i] * 3 + (long)b[i] * 5 + (long)c[i] * 7;
        fsum += x[i] + 2.0 * y[i];
        claimed += slots[i];
    }
    long plane_sum = 0;
    for (int r = 0; r < 40; r++)
        for (int q = 0; q < 50; q++)
            plane_sum += grid2[r][q] % 97;
    printf("sum=%ld fsum=%.4f counters=%d %d %d %d claimed=%d plane=%ld\n", sum, fsum, counters[0], counters[1], counters[2],
           counters[3], claimed, plane_sum);
    return 0;
}
