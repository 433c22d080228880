/* `__shared__` arrays belong to kernels. */
int main(void)
{
    __shared__ float tile[16];
    tile[0] = 1.0f;
    return 0;
}
