/* Warp shuffles need a warp's threads together. */
__global__ float a[1024];
__global__ void add_neighbour(void)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    a[i] = v + __shfl_down_sync(0xffffffffu, v, 1);
}
int main(void)
{
    add_neighbour<<<4, 256>>>();
    return 0;
}
