/* Dynamic shared memory (a third launch argument) is not part of the dialect. */
__global__ float a[256];
__global__ void fill(float v)
{
    a[threadIdx.x] = v;
}
int main(void)
{
    fill<<<1, 256, 1024>>>(2.0f);
    return 0;
}
