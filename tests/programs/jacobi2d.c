// yosegi-test: rtol=1e-9
// 2-D Jacobi (Laplace) iteration until the max change drops below a tolerance: reduction(max:err) in a while loop.
#include <stdio.h>
#include <math.h>

#define NX 98
#define NY 98

static double A[NY][NX];
static double Anew[NY][NX];

int main(void) {
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            A[j][i] = 0.0;
            Anew[j][i] = 0.0;
        }
    for (int i = 0; i < NX; i++) {
        A[0][i] = 1.0;
        Anew[0][i] = 1.0;
    }
    for (int j = 0; j < NY; j++) {
        A[j][0] = 0.5 * (double)j / NY;
        Anew[j][0] = A[j][0];
    }
    const double tol = 1.0e-4;
    const int iter_max = 150;
    double err = 1.0;
    int iter = 0;
    #pragma acc data copy(A) create(Anew)
    while (err > tol && iter < iter_max) {
        err = 0.0;
        #pragma acc parallel loop reduction(max:err)
        for (int j = 1; j < NY - 1; j++) {
            #pragma acc loop reduction(max:err)
            for (int i = 1; i < NX - 1; i++) {
                Anew[j][i] = 0.25 * (A[j][i + 1] + A[j][i - 1] + A[j - 1][i] + A[j + 1][i]);
                err = fmax(err, fabs(Anew[j][i] - A[j][i]));
            }
        }
        #pragma acc parallel loop
        for (int j = 1; j < NY - 1; j++) {
            #pragma acc loop
            for (int i = 1; i < NX - 1; i++) {
                A[j][i] = Anew[j][i];
            }
        }
        if (iter % 25 == 0) printf("iter %d err %.10e\n", iter, err);
        iter++;
    }
    double s = 0.0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) s += A[j][i];
    printf("iterations %d\n", iter);
    printf("final_err %.10e\n", err);
    printf("checksum %.12e\n", s);
    printf("center %.12e\n", A[NY / 2][NX / 2]);
    return 0;
}
