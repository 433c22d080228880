/* A barrier between a kernel's threads is not supported. */
__global__ float a[256];
__global__ void k(void)
{
    a[threadIdx.x] += 1.0f;
    __syncthreads();
}
int main(void)
{
    k<<<1, 256>>>();
    return 0;
}
