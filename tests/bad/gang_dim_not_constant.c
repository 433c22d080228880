// bad input: a gang dimension that is not a constant
int main(void) {
    double a[16];
    int d = 1;
    #pragma acc parallel loop gang(dim: d)
    for (int i = 0; i < 16; i++) a[i] = i;
    return 0;
}
