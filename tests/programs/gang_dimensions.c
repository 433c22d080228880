// OpenACC 3.3 gang dimensions: `num_gangs` with 2 and 3 values and loops nested with
// `gang(dim: 2)` over `gang(dim: 1)` and `gang(dim: 3)` over 2 over 1, on variable-length
// arrays whose size a global sets (and changes between calls), with a reduction and an inner
// vector loop; every iteration must run exactly once.
#include <stdio.h>

long long n = 20;

static double check2(void) {
    double a[n][n], b[n][n];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            a[i][j] = i * 0.5 + j;
            b[i][j] = 0;
        }
    #pragma acc parallel num_gangs(n, n)
    #pragma acc loop gang(dim: 2)
    for (int i = 0; i < n; i++) {
        #pragma acc loop gang(dim: 1)
        for (int j = 0; j < n; j++) {
            a[i][j] = a[i][j] + 1;
            b[i][j] += i - j;
        }
    }
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) s += a[i][j] * (b[i][j] + 2);
    return s;
}

static double check3(void) {
    double a[n][n][n];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) a[i][j][k] = i + 10 * j + 100 * k;
    double total = 0;
    #pragma acc parallel num_gangs(4, 3, 2) reduction(+:total)
    #pragma acc loop gang(dim: 3) reduction(+:total)
    for (int i = 0; i < n; i++) {
        #pragma acc loop gang(dim: 2) reduction(+:total)
        for (int j = 0; j < n; j++) {
            #pragma acc loop gang(dim: 1) reduction(+:total)
            for (int k = 0; k < n; k++) {
                a[i][j][k] = a[i][j][k] * 2 + 1;
                total += a[i][j][k];
            }
        }
    }
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) s += a[i][j][k] * (1 + (i + j + k) % 3);
    return s + total;
}

/* A gang dimension over a vector loop: the vector loop runs inside each gang. */
static double gang_over_vector(void) {
    double c[64][32];
    #pragma acc parallel loop gang(dim: 1) num_gangs(8) copyout(c)
    for (int i = 0; i < 64; i++) {
        #pragma acc loop vector
        for (int j = 0; j < 32; j++) c[i][j] = i * 32 + j;
    }
    double s = 0;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 32; j++) s += c[i][j] * (i % 5);
    return s;
}

int main(void) {
    for (int call = 0; call < 2; call++) {
        printf("2-D with n = %lld: %.1f\n", n, check2());
        printf("3-D with n = %lld: %.1f\n", n, check3());
        n = 8;
    }
    printf("gang over vector: %.1f\n", gang_over_vector());
    return 0;
}
