// bad input: gang(dim: 2) inside gang(dim: 1) (gang dimensions decrease inward)
int main(void) {
    double a[16][16];
    #pragma acc parallel num_gangs(4, 4)
    #pragma acc loop gang(dim: 1)
    for (int i = 0; i < 16; i++) {
        #pragma acc loop gang(dim: 2)
        for (int j = 0; j < 16; j++) a[i][j] = i + j;
    }
    return 0;
}
