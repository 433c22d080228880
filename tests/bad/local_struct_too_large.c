/* A struct local whose member array no GPU thread can hold (8 GiB). Lowering it element by
   element once hung the compiler; it must be refused at its declaration. */
#include <stdio.h>
typedef struct { double x; int hits[2147483648]; } cell;
int main(void) {
    double out[8];
#pragma acc parallel loop copyout(out)
    for (int i = 0; i < 8; i++) {
        cell c = {1.0, {1, 2}};
        out[i] = c.x + c.hits[1];
    }
    printf("%f\n", out[3]);
    return 0;
}
