int main(void) {
    double a[16];
    #pragma acc parallel loop gang(dim: 2)
    for (int i = 0; i < 16; i++) a[i] = i;
    return 0;
}
