#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    double *a = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        a[i] = i * 0.5;
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += a[i];
    printf("sum %.2f\n", sum);
    free(a);
    return 0;
}
