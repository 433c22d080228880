// yosegi-test: args=70 90
// yosegi-test: rtol=1e-9
// A run-time sized 2-D array accessed through a pointer to a variable-length row, double (*a)[n].
#include <stdio.h>
#include <stdlib.h>

static void transpose_add(int m, int n, double (*a)[n], double (*b)[m]) {
    #pragma acc parallel loop copyin(a[0:m][0:n]) copyout(b[0:n][0:m])
    for (int j = 0; j < n; j++) {
        #pragma acc loop
        for (int i = 0; i < m; i++) b[j][i] = 2.0 * a[i][j] + (double)(i - j);
    }
}

int main(int argc, char **argv) {
    int m = argc > 1 ? atoi(argv[1]) : 10;
    int n = argc > 2 ? atoi(argv[2]) : 12;
    double (*a)[n] = malloc(sizeof(double[m][n]));
    double (*b)[m] = malloc(sizeof(double[n][m]));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) a[i][j] = (double)(i * n + j) * 0.001;
    transpose_add(m, n, a, b);
    double s = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) s += b[j][i] * (double)((i + j) % 7);
    printf("m %d n %d\n", m, n);
    printf("weighted %.12e\n", s);
    printf("b %.15e %.15e %.15e\n", b[0][0], b[n - 1][m - 1], b[n / 2][m / 3]);
    free(a);
    free(b);
    return 0;
}
