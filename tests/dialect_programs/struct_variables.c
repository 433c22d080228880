/* The plain C twin of struct_variables.cu. */
#include <stdio.h>

#define N 1000

struct particles {
    float x[N];
    float v[N];
};

struct particles p;
float dt;

int main(void)
{
    for (int i = 0; i < N; i++) {
        p.x[i] = i;
        p.v[i] = (i % 7) - 3;
    }
    dt = 0.5f;
    double seen = 0.0;
    for (int s = 0; s < 10; s++) {
        for (int i = 0; i < N; i++)
            p.x[i] += p.v[i] * dt;
        seen += p.x[s * 97];
        p.v[s] += 1.0f;
        dt = 0.5f + 0.125f * s;
    }
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += p.x[i];
    printf("seen %.3f sum %.3f x[10] %.3f\n", seen, sum, p.x[10]);
    return 0;
}
