int main(void) {
    double a[16][16];
    #pragma acc parallel loop collapse(force: 2)
    for (int i = 0; i < 16; i++) {
        a[i][0] = 0;
        for (int j = 0; j < 16; j++) a[i][j] = i + j;
    }
    return 0;
}
