/* A kernel with __syncthreads() runs with one block shape. */
__global__ float a[1024];
__global__ void shift(void)
{
    float v = a[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    a[blockIdx.x * blockDim.x + threadIdx.x] = v + 1.0f;
}
int main(void)
{
    shift<<<4, 256>>>();
    shift<<<8, 128>>>();
    return 0;
}
