// yosegi-test: args=6
// A 2-D Jacobi sweep inside one data region, STEPS from argv: split over several devices, each
// step moves only the rows next to each block boundary from device to device (the byte-count
// test in tests/differential.rs checks that the count grows by exactly that per step).
#include <stdio.h>
#include <stdlib.h>

#define N 64
#define M 48

double a[N][M], b[N][M];

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 6;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) a[i][j] = b[i][j] = (i * 7 + j * 3) % 11;
    #pragma acc data copy(a, b)
    for (int t = 0; t < steps; t++) {
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < M - 1; j++)
                b[i][j] = 0.25 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
        #pragma acc parallel loop collapse(2)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < M - 1; j++)
                a[i][j] = b[i][j];
    }
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) sum += a[i][j] * (1 + i % 3);
    printf("%.12e %.12e\n", sum, a[N / 2][M / 2]);
    return 0;
}
