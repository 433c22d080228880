// bad input: gang dimension 3 in a construct whose num_gangs gives two dimensions
int main(void) {
    double a[16][16];
    int n = 16;
    #pragma acc parallel num_gangs(n, n)
    #pragma acc loop gang(dim: 3)
    for (int i = 0; i < 16; i++) {
        #pragma acc loop gang(dim: 1)
        for (int j = 0; j < 16; j++) a[i][j] = i + j;
    }
    return 0;
}
