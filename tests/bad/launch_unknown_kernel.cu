/* A launch names a kernel defined or declared above it. */
__global__ float a[256];
int main(void)
{
    fill<<<1, 256>>>(2.0f);
    return 0;
}
