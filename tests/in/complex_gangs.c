#include <complex.h>

/* A complex product reduction, and a 2-D nest with OpenACC 3.3 gang dimensions. */
double complex spin(int n, const double complex *z) {
    double complex p = 1.0;
    #pragma acc parallel loop reduction(*:p) copyin(z[0:n])
    for (int i = 0; i < n; i++) {
        p *= z[i];
    }
    return p;
}

void scale(int n, int m, double a[n][m]) {
    #pragma acc parallel num_gangs(n, m) copy(a[0:n][0:m])
    #pragma acc loop gang(dim: 2)
    for (int i = 0; i < n; i++) {
        #pragma acc loop gang(dim: 1)
        for (int j = 0; j < m; j++) {
            a[i][j] = 2.0 * a[i][j];
        }
    }
}
