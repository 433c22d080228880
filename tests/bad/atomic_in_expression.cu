/* An atomic's result is used inside a larger expression. */
__global__ int counter[1];
__global__ int slots[256];
__global__ void claim(void)
{
    slots[threadIdx.x] = 1 + atomicAdd(&counter[0], 1);
}
int main(void)
{
    claim<<<1, 256>>>();
    return 0;
}
