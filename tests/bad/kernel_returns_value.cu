/* A kernel returns nothing. */
__global__ float a[256];
__global__ int fill(float v)
{
    a[threadIdx.x] = v;
    return 1;
}
int main(void)
{
    return 0;
}
