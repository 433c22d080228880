/* dim3 has three sizes. */
int main(void)
{
    dim3 grid(1, 2, 3, 4);
    return 0;
}
