// yosegi-test: rtol=1e-7
// Himeno benchmark kernel with the malloc'ed struct Mat layout and the MR index macro; gosa summed in double.
#include <stdio.h>
#include <stdlib.h>

#define MR(mt,n,r,c,d) mt->m[(n)*mt->mrows*mt->mcols*mt->mdeps + (r)*mt->mcols*mt->mdeps + (c)*mt->mdeps + (d)]

struct Mat {
    float *m;
    int mnums;
    int mrows;
    int mcols;
    int mdeps;
};
typedef struct Mat Matrix;

static int newMat(Matrix *Mat, int mnums, int mrows, int mcols, int mdeps) {
    Mat->mnums = mnums;
    Mat->mrows = mrows;
    Mat->mcols = mcols;
    Mat->mdeps = mdeps;
    Mat->m = (float *)malloc((size_t)mnums * mrows * mcols * mdeps * sizeof(float));
    return Mat->m != NULL;
}

static void clearMat(Matrix *Mat) {
    free(Mat->m);
    Mat->m = NULL;
    Mat->mnums = Mat->mrows = Mat->mcols = Mat->mdeps = 0;
}

static void mat_set(Matrix *Mat, int l, float val) {
    for (int i = 0; i < Mat->mrows; i++)
        for (int j = 0; j < Mat->mcols; j++)
            for (int k = 0; k < Mat->mdeps; k++) MR(Mat, l, i, j, k) = val;
}

static void mat_set_init(Matrix *Mat) {
    for (int i = 0; i < Mat->mrows; i++)
        for (int j = 0; j < Mat->mcols; j++)
            for (int k = 0; k < Mat->mdeps; k++)
                MR(Mat, 0, i, j, k) = (float)(i * i) / (float)((Mat->mrows - 1) * (Mat->mrows - 1));
}

static double jacobi(int nn, Matrix *a, Matrix *b, Matrix *c, Matrix *p, Matrix *bnd,
                     Matrix *wrk1, Matrix *wrk2) {
    int imax = p->mrows - 1;
    int jmax = p->mcols - 1;
    int kmax = p->mdeps - 1;
    float omega = 0.8f;
    double gosa = 0.0;
    for (int n = 0; n < nn; n++) {
        gosa = 0.0;
        #pragma acc parallel loop gang reduction(+:gosa)
        for (int i = 1; i < imax; i++) {
            #pragma acc loop worker reduction(+:gosa)
            for (int j = 1; j < jmax; j++) {
                #pragma acc loop vector reduction(+:gosa)
                for (int k = 1; k < kmax; k++) {
                    float s0 = MR(a, 0, i, j, k) * MR(p, 0, i + 1, j, k)
                             + MR(a, 1, i, j, k) * MR(p, 0, i, j + 1, k)
                             + MR(a, 2, i, j, k) * MR(p, 0, i, j, k + 1)
                             + MR(b, 0, i, j, k) * (MR(p, 0, i + 1, j + 1, k) - MR(p, 0, i + 1, j - 1, k)
                                                  - MR(p, 0, i - 1, j + 1, k) + MR(p, 0, i - 1, j - 1, k))
                             + MR(b, 1, i, j, k) * (MR(p, 0, i, j + 1, k + 1) - MR(p, 0, i, j - 1, k + 1)
                                                  - MR(p, 0, i, j + 1, k - 1) + MR(p, 0, i, j - 1, k - 1))
                             + MR(b, 2, i, j, k) * (MR(p, 0, i + 1, j, k + 1) - MR(p, 0, i - 1, j, k + 1)
                                                  - MR(p, 0, i + 1, j, k - 1) + MR(p, 0, i - 1, j, k - 1))
                             + MR(c, 0, i, j, k) * MR(p, 0, i - 1, j, k)
                             + MR(c, 1, i, j, k) * MR(p, 0, i, j - 1, k)
                             + MR(c, 2, i, j, k) * MR(p, 0, i, j, k - 1)
                             + MR(wrk1, 0, i, j, k);
                    float ss = (s0 * MR(a, 3, i, j, k) - MR(p, 0, i, j, k)) * MR(bnd, 0, i, j, k);
                    gosa += (double)ss * (double)ss;
                    MR(wrk2, 0, i, j, k) = MR(p, 0, i, j, k) + omega * ss;
                }
            }
        }
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < imax; i++)
            for (int j = 1; j < jmax; j++) {
                #pragma acc loop vector
                for (int k = 1; k < kmax; k++) MR(p, 0, i, j, k) = MR(wrk2, 0, i, j, k);
            }
        printf("iteration %d gosa %.10e\n", n, gosa);
    }
    return gosa;
}

int main(void) {
    int mimax = 17, mjmax = 17, mkmax = 33;
    int imax = mimax - 1, jmax = mjmax - 1, kmax = mkmax - 1;
    Matrix a, b, c, p, bnd, wrk1, wrk2;
    newMat(&p, 1, mimax, mjmax, mkmax);
    newMat(&bnd, 1, mimax, mjmax, mkmax);
    newMat(&wrk1, 1, mimax, mjmax, mkmax);
    newMat(&wrk2, 1, mimax, mjmax, mkmax);
    newMat(&a, 4, mimax, mjmax, mkmax);
    newMat(&b, 3, mimax, mjmax, mkmax);
    newMat(&c, 3, mimax, mjmax, mkmax);
    mat_set_init(&p);
    mat_set(&bnd, 0, 1.0f);
    mat_set(&wrk1, 0, 0.0f);
    mat_set(&wrk2, 0, 0.0f);
    mat_set(&a, 0, 1.0f);
    mat_set(&a, 1, 1.0f);
    mat_set(&a, 2, 1.0f);
    mat_set(&a, 3, 1.0f / 6.0f);
    mat_set(&b, 0, 0.0f);
    mat_set(&b, 1, 0.0f);
    mat_set(&b, 2, 0.0f);
    mat_set(&c, 0, 1.0f);
    mat_set(&c, 1, 1.0f);
    mat_set(&c, 2, 1.0f);
    /* A non-trivial b makes the diagonal terms of the stencil count. */
    for (int i = 0; i < mimax; i++)
        for (int j = 0; j < mjmax; j++)
            for (int k = 0; k < mkmax; k++) MR((&b), 1, i, j, k) = 0.01f * (float)((i + 2 * j + 3 * k) % 5);
    printf("grid %d %d %d\n", mimax, mjmax, mkmax);
    double gosa = jacobi(5, &a, &b, &c, &p, &bnd, &wrk1, &wrk2);
    double psum = 0.0;
    Matrix *pp = &p;
    for (int i = 0; i < mimax; i++)
        for (int j = 0; j < mjmax; j++)
            for (int k = 0; k < mkmax; k++) psum += MR(pp, 0, i, j, k);
    printf("gosa %.10e\n", gosa);
    printf("psum %.10e\n", psum);
    printf("p %.7e %.7e\n", MR(pp, 0, imax / 2, jmax / 2, kmax / 2), MR(pp, 0, 3, 5, 7));
    clearMat(&p); clearMat(&bnd); clearMat(&wrk1); clearMat(&wrk2);
    clearMat(&a); clearMat(&b); clearMat(&c);
    return 0;
}
