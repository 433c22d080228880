// bad input: num_gangs with two values on a kernels construct (one value there)
int main(void) {
    double a[16][16];
    #pragma acc kernels num_gangs(4, 4)
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) a[i][j] = i + j;
    return 0;
}
