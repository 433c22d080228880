/* A kernel with a `__shared__` array whose first thread stores a one-element shared array the
 * host reads after the launch; block_total.c is the plain C twin. */
#include <stdio.h>

#define N 256

__global__ int total[1];
__global__ int a[N];

__global__ void sum_block(void)
{
    __shared__ int s[N];
    s[threadIdx.x] = a[threadIdx.x] * 3;
    __syncthreads();
    if (threadIdx.x == 0) {
        int t = 0;
        for (int i = 0; i < N; i++)
            t += s[i];
        total[0] = t;
    }
}

int main(void)
{
    int seen = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            a[i] = i + round;
        sum_block<<<1, N>>>();
        seen += total[0];
    }
    printf("total %d seen %d\n", total[0], seen);
    return 0;
}
