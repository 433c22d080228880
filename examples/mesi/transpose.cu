/* A matrix transpose through a `__shared__` tile, the classic CUDA kernel: a block of 32x8
 * threads reads a 32x32 tile row by row (coalesced), waits at `__syncthreads()`, and writes
 * it out transposed, also row by row; the tile has a padding column so that reading its
 * columns meets no bank conflicts. transpose.c is the plain C twin.
 *
 *   yosegi run examples/mesi/transpose.cu -- [repeats]    (size: -DROWS=... -DCOLS=..., multiples of 32) */
// yosegi-test: cflags=-DROWS=96 -DCOLS=64
// yosegi-test: args=3
// yosegi-test: ignore-lines=time:
#include <stdio.h>
#include <stdlib.h>
#include "timer.h"

#ifndef ROWS
#define ROWS 4096
#endif
#ifndef COLS
#define COLS 4096
#endif
#define TILE 32
#define BLOCK_ROWS 8

__global__ float in[ROWS][COLS], out[COLS][ROWS];

__global__ void transpose(void)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[y + j][x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        out[y + j][x] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 10;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            in[r][c] = (float)((r * 131 + c * 17) % 1000);
    dim3 block(TILE, BLOCK_ROWS);
    dim3 grid(COLS / TILE, ROWS / TILE);
    double t0 = wall_seconds();
    double check = 0.0;
    for (int k = 0; k < repeats; k++) {
        in[k % ROWS][k % COLS] += 1.0f;
        transpose<<<grid, block>>>();
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
