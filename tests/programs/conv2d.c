// yosegi-test: rtol=1e-9
// 2-D convolution of an image with a 5x5 filter held in a small array (copyin), border pixels left at zero.
#include <stdio.h>

#define H 200
#define W 240
#define K 5

static double img[H][W];
static double out[H][W];
static double filt[K][K];

int main(void) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            img[y][x] = (double)((x * 13 + y * 7) % 31) / 31.0;
            out[y][x] = 0.0;
        }
    double fs = 0.0;
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++) {
            filt[a][b] = 1.0 / (1.0 + (a - 2) * (a - 2) + (b - 2) * (b - 2));
            fs += filt[a][b];
        }
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++) filt[a][b] /= fs;

    #pragma acc parallel loop copyin(img, filt) copy(out)
    for (int y = K / 2; y < H - K / 2; y++) {
        #pragma acc loop
        for (int x = K / 2; x < W - K / 2; x++) {
            double acc = 0.0;
            for (int a = 0; a < K; a++)
                for (int b = 0; b < K; b++)
                    acc += filt[a][b] * img[y + a - K / 2][x + b - K / 2];
            out[y][x] = acc;
        }
    }
    double s = 0.0, s2 = 0.0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            s += out[y][x];
            s2 += out[y][x] * out[y][x] * (double)((x + y) % 3);
        }
    printf("sum %.12e weighted %.12e\n", s, s2);
    printf("out %.15e %.15e %.15e\n", out[2][2], out[H / 2][W / 3], out[H - 3][W - 3]);
    return 0;
}
