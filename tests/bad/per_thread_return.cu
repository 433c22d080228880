/* An early return in a kernel whose threads meet at barriers. */
__global__ float a[1024];
__global__ void reverse(int n)
{
    __shared__ float t[256];
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i >= n)
        return;
    t[threadIdx.x] = a[i];
    __syncthreads();
    a[i] = t[255 - threadIdx.x];
}
int main(void)
{
    reverse<<<4, 256>>>(1024);
    return 0;
}
