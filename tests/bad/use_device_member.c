// bad input: `use_device` names a struct member, which the host code cannot be given a device
// address for under the same name
#include <stdio.h>
#include <stdlib.h>
struct field { double *v; int n; };
int main(void) {
    struct field f = { (double *)calloc(8, sizeof(double)), 8 };
    #pragma acc enter data copyin(f.v[0:8])
    #pragma acc host_data use_device(f.v)
    {
        printf("%p\n", (void *)f.v);
    }
    return 0;
}
