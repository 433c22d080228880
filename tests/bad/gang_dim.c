// bad input: gang dimension 4 (OpenACC 3.3 has gang dimensions 1 to 3)
int main(void) {
    double a[16];
    #pragma acc parallel loop gang(dim: 4)
    for (int i = 0; i < 16; i++) a[i] = i;
    return 0;
}
