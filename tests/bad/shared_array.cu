/* Block-local shared-memory arrays are not supported: Yosegi stages data itself. */
__global__ float a[256];
__global__ void k(void)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = a[threadIdx.x];
    a[threadIdx.x] = tile[255 - threadIdx.x];
}
int main(void)
{
    k<<<1, 256>>>();
    return 0;
}
