/* Shared variables are declared at file scope. */
int main(void)
{
    __global__ float a[16];
    a[0] = 1.0f;
    return 0;
}
