/* Built-in index variables are read one axis at a time. */
__global__ unsigned int a[256];
__global__ void fill(void)
{
    uint3 t = threadIdx;
    a[t.x] = t.x;
}
int main(void)
{
    fill<<<1, 256>>>();
    return 0;
}
