#include <stddef.h>
#include <stdio.h>

void fill(double *v, int n, double k);
double total(const double *v, int n);

static double data[100];

int main(void) {
    fill(data, 100, 0.5);
    data[0] = 10.0;
    printf("total %.2f\n", total(data, 100));
    return 0;
}
