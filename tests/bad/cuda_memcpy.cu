/* Copies are the runtime's job in the MESI-CUDA dialect. */
__global__ float a[64];
float h[64];
int main(void)
{
    cudaMemcpy(a, h, sizeof h, 1);
    return 0;
}
