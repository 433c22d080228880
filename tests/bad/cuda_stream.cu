/* Streams are not part of the MESI-CUDA dialect. */
int main(void)
{
    int s;
    cudaStreamCreate(&s);
    return 0;
}
