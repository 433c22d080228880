/* A kernel with __shared__ arrays needs a constant block size. */
__global__ float a[1024];
__global__ void reverse(void)
{
    __shared__ float t[256];
    t[threadIdx.x] = a[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    a[blockIdx.x * 256 + threadIdx.x] = t[255 - threadIdx.x];
}
int main(int argc, char **argv)
{
    int threads = 256 + argc - 1;
    reverse<<<4, threads>>>();
    return 0;
}
