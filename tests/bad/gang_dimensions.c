int main(void) {
    double a[16][16];
    int n = 16;
    #pragma acc parallel num_gangs(n, n)
    {
        #pragma acc loop gang
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) a[i][j] = i + j;
    }
    #pragma acc parallel loop gang(dim: 2)
    for (int i = 0; i < 16; i++) a[i][0] = i;
    return 0;
}
