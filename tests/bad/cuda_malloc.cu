/* CUDA's allocation call has no place in the MESI-CUDA dialect. */
float *d;
int main(void)
{
    cudaMalloc((void **)&d, 1024);
    return 0;
}
