// bad input: attach names a pointer, and `x` is a double
int main(void) {
    double x = 1;
#pragma acc enter data attach(x)
    return (int)x - 1;
}
