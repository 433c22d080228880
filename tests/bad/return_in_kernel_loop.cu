/* `return` inside a loop of a kernel is refused. */
__global__ int a[256];
__global__ void find(int v)
{
    int i = threadIdx.x;
    for (int k = 0; k < 256; k++)
        if (a[k] == v + i)
            return;
    a[i] = 0;
}
int main(void)
{
    find<<<1, 256>>>(3);
    return 0;
}
