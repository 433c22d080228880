/* Arrays that are members of a file-scope struct, written by kernels and read by the host
 * between them (element by element and in loops), and written by the host before the next
 * kernel: every host access must see the kernels' values and the kernels the host's. */
#include <stdio.h>

#define N 500
#define M 8

struct state {
    double x[N];
    double v[N];
    int grid[M][M];
};
struct state s;

int main(void)
{
    for (int i = 0; i < N; i++) {
        s.x[i] = i;
        s.v[i] = (i % 7) - 3;
    }
    double checks = 0.0;
    for (int step = 0; step < 6; step++) {
        #pragma acc parallel loop
        for (int i = 0; i < N; i++)
            s.x[i] += s.v[i] * 0.5;
        checks += s.x[step * 11];          /* one element read by the host */
        s.v[step] = -s.v[step];            /* one element written by the host */
        if (step % 2 == 0)
            for (int i = 0; i < N; i += 50)
                s.v[i] += 1.0;             /* a host loop writing the member */
        #pragma acc parallel loop collapse(2)
        for (int r = 0; r < M; r++)
            for (int c = 0; c < M; c++)
                s.grid[r][c] = r * M + c + step;
    }
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += s.x[i];
    long g = 0;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < M; c++)
            g += s.grid[r][c];
    printf("checks %.3f sum %.3f grid %ld\n", checks, sum, g);
    return 0;
}
