/*
 * A scan along each row of a ROWS x 32 matrix, one thread per row: the thread reads its row of
 * a and writes its row of b, so at each column a warp's 32 lanes touch 32 different rows (a
 * column access, 32 sectors per warp instruction, for the reads and for the writes). Staging
 * copies a block's rows of a into a shared tile and its rows of b back from one, both with
 * consecutive threads on consecutive addresses.
 *
 *   yosegi run examples/row_scan.c                     (ROWS = 1048576, 20 repetitions)
 *   yosegi run -DROWS=1000 examples/row_scan.c -- 3    (ROWS, then repetitions)
 *   yosegi run --staging off examples/row_scan.c       (global memory only, to compare)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#ifndef ROWS
#define ROWS 1048576
#endif
#define COLS 32

static float a[ROWS][COLS];
static float b[ROWS][COLS];

static double now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    if (reps < 1) {
        fprintf(stderr, "usage: row_scan [REPETITIONS >= 1]\n");
        return 1;
    }
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            a[i][j] = (float)((i * 7 + j * 3) % 17) * 0.25f + 0.5f;
            b[i][j] = 0.0f;
        }

    double t0 = now();
    #pragma acc data copyin(a) copy(b)
    {
        for (int r = 0; r < reps; r++) {
            #pragma acc parallel loop gang vector vector_length(64)
            for (int i = 0; i < ROWS; i++) {
                float run = (float)(r % 3) * 0.125f;
                for (int j = 0; j < COLS; j++) {
                    run = 0.75f * run + a[i][j];
                    b[i][j] = run;
                }
            }
        }
    }
    double elapsed = now() - t0;

    double sum = 0.0;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) sum += b[i][j] * (double)((i + j) % 3);
    printf("row_scan: %d rows of %d, %d repetitions\n", ROWS, COLS, reps);
    printf("b: sum %.9e, b[ROWS/3][5] %.9e\n", sum, b[ROWS / 3][5]);
    printf("time: %f s, %.1f M rows/s\n", elapsed, elapsed > 0.0 ? (double)ROWS * reps / elapsed * 1.0e-6 : 0.0);
    return 0;
}

/* The sizes the test suite runs it at (tests/differential.rs): */
// yosegi-test: cflags=-DROWS=1000
// yosegi-test: args=3
// yosegi-test: ignore-lines=time:
