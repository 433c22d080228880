/* A launch passes one argument per kernel parameter. */
__global__ float a[256];
__global__ void fill(float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v;
}
int main(void)
{
    fill<<<1, 256>>>(2.0f);
    return 0;
}
