/* The plain C twin of transpose.cu. */
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef ROWS
#define ROWS 4096
#endif
#ifndef COLS
#define COLS 4096
#endif

float in[ROWS][COLS], out[COLS][ROWS];

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 10;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            in[r][c] = (float)((r * 131 + c * 17) % 1000);
    double t0 = wall_seconds();
    double check = 0.0;
    for (int k = 0; k < repeats; k++) {
        in[k % ROWS][k % COLS] += 1.0f;
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                out[c][r] = in[r][c];
        check += out[k % COLS][k % ROWS] + out[COLS - 1 - k % COLS][k % ROWS];
    }
    double sum = 0.0;
    for (int c = 0; c < COLS; c++)
        for (int r = 0; r < ROWS; r++)
            sum += out[c][r] * ((c + 2 * r) % 7);
    double t1 = wall_seconds();
    printf("transpose %dx%d check=%.1f sum=%.1f\n", ROWS, COLS, check, sum);
    printf("time: %.6f s\n", t1 - t0);
    return 0;
}
