// bad input: num_gangs with four values (there are three gang dimensions)
int main(void) {
    double a[16];
    #pragma acc parallel loop num_gangs(2, 2, 2, 2)
    for (int i = 0; i < 16; i++) a[i] = i;
    return 0;
}
