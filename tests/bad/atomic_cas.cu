/* Compare-and-swap has no OpenACC atomic form. */
__global__ int lock[1];
__global__ void take(void)
{
    atomicCAS(&lock[0], 0, 1);
}
int main(void)
{
    take<<<1, 32>>>();
    return 0;
}
