// Loop nests with statements between their loops (NPB MG's rprj3: `i3 = 2*j3 - d3;` between
// the gang loop and the worker loop). Statements that give the same result however often
// they run move into the innermost body and the nest keeps its three parallel dimensions;
// the others (a statement that reads what it assigns, one whose names the inner loop
// assigns, one an inner loop bound reads) keep the inner loops in order inside each thread.
// Every answer must equal the sequential program's.
#include <stdio.h>

#define N 34
#define M (2 * N)

static double r[M][M][M];
static double s[N][N][N];

static void restrict3(int d1, int d2, int d3) {
    int i1, i2, i3, j1, j2, j3;
    #pragma acc parallel loop gang copyin(r) copy(s)
    for (j3 = 1; j3 < N - 1; j3++) {
        i3 = 2 * j3 - d3;
        #pragma acc loop worker
        for (j2 = 1; j2 < N - 1; j2++) {
            i2 = 2 * j2 - d2;
            #pragma acc loop vector
            for (j1 = 1; j1 < N - 1; j1++) {
                i1 = 2 * j1 - d1;
                s[j3][j2][j1] = 0.5 * r[i3 + 1][i2 + 1][i1 + 1] + 0.25 * (r[i3][i2 + 1][i1 + 1] + r[i3 + 2][i2 + 1][i1 + 1])
                              + 0.125 * (r[i3 + 1][i2][i1] + r[i3 + 1][i2 + 2][i1 + 2]);
            }
        }
    }
}

/* Declarations between the loops, and a scalar the construct reads from the host. */
static double declared(double scale) {
    double out[N][N];
    #pragma acc parallel loop gang copyout(out)
    for (int i = 0; i < N; i++) {
        int row = 3 * i + 1;
        double w = scale * row;
        #pragma acc loop vector
        for (int j = 0; j < N; j++) out[i][j] = w + row * j;
    }
    double t = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) t += out[i][j] * (1 + (i + j) % 5);
    return t;
}

/* `k = k + 1` reads what it assigns: running it again per inner iteration would change it. */
static double counted_up(void) {
    double out[N][N];
    #pragma acc parallel loop gang copyout(out)
    for (int i = 0; i < N; i++) {
        int k = i;
        k = k + 1;
        #pragma acc loop vector
        for (int j = 0; j < N; j++) out[i][j] = k * 100.0 + j;
    }
    double t = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) t += out[i][j] * (1 + (i * j) % 7);
    return t;
}

/* The inner loop's bound reads the statement's scalar: the bound is not known at launch. */
static double bound_from_prefix(void) {
    double out[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) out[i][j] = -1;
    #pragma acc parallel loop gang copy(out)
    for (int i = 0; i < N; i++) {
        int end = i + 1;
        #pragma acc loop vector
        for (int j = 0; j < end; j++) out[i][j] = i * 0.5 + j;
    }
    double t = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) t += out[i][j] * (1 + (i + 2 * j) % 3);
    return t;
}

int main(void) {
    for (int a = 0; a < M; a++)
        for (int b = 0; b < M; b++)
            for (int c = 0; c < M; c++) r[a][b][c] = (a * 7 + b * 3 + c) % 11 - 5.0;
    for (int d = 1; d <= 2; d++) {
        restrict3(d, 2, 1);
        double t = 0;
        for (int a = 0; a < N; a++)
            for (int b = 0; b < N; b++)
                for (int c = 0; c < N; c++) t += s[a][b][c] * (1 + (a + b + c) % 4);
        printf("restrict d1=%d: %.6f\n", d, t);
    }
    printf("declared: %.6f\n", declared(0.25));
    printf("counted up: %.6f\n", counted_up());
    printf("bound from prefix: %.6f\n", bound_from_prefix());
    return 0;
}
