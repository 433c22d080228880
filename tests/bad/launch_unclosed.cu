/* The launch configuration closes with `>>>`. */
__global__ float a[256];
__global__ void fill(float v)
{
    a[threadIdx.x] = v;
}
int main(void)
{
    fill<<<1, 256>>(2.0f);
    return 0;
}
