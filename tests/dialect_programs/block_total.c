/* The plain C twin of block_total.cu. */
#include <stdio.h>

#define N 256

int total[1];
int a[N];

int main(void)
{
    int seen = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            a[i] = i + round;
        int t = 0;
        for (int i = 0; i < N; i++)
            t += a[i] * 3;
        total[0] = t;
        seen += total[0];
    }
    printf("total %d seen %d\n", total[0], seen);
    return 0;
}
