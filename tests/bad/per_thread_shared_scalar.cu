/* A kernel whose threads work together assigns a shared scalar: which thread's value the host
 * should see is not known, so it is refused. */
__global__ int total;
__global__ int a[256];
__global__ void sum_block(void)
{
    __shared__ int s[256];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 255)
        total = s[0] + s[255];
}
int main(void)
{
    sum_block<<<1, 256>>>();
    return total;
}
