/* Host loops that touch arrays a data region maps, between kernels that write them: the
 * host's access hooks must do their work after every kernel (copy back, mark the device
 * stale) and need none for the rest of a loop (tests/cli.rs counts them). */
#include <stdio.h>

#define N 4000

static double ce[13][5];
static double u[N];

/* NPB LU's `exact`: a polynomial whose coefficients live in a mapped array. */
static void exact(int i, double out[5]) {
  double x = i / (double)N;
  for (int m = 0; m < 5; m++)
    out[m] = ce[0][m] + x * (ce[1][m] + x * (ce[2][m] + x * ce[3][m]));
}

int main(void) {
  for (int k = 0; k < 13; k++)
    for (int m = 0; m < 5; m++) ce[k][m] = 0.25 * (k + 1) + 0.125 * m;
  for (int i = 0; i < N; i++) u[i] = i % 7;
#pragma acc data copyin(ce) copy(u)
  {
    for (int step = 0; step < 3; step++) {
      double s = 0.0;
      for (int i = 0; i < N; i++) {
        double e[5];
        exact(i, e);
        s += e[step] + u[i];
      }
      printf("step %d: %.6f\n", step, s);
#pragma acc parallel loop present(u)
      for (int i = 0; i < N; i++) u[i] = u[i] * 0.5 + i;
      for (int i = 0; i < N; i += 3) u[i] += 1.0;
#pragma acc parallel loop present(u, ce)
      for (int i = 0; i < N; i++) u[i] = u[i] * 2.0 - ce[step + 2][i % 5];
      if (step == 1)
        for (int m = 0; m < 5; m++) ce[4][m] += 1.0;
    }
  }
  double t = 0.0;
  for (int i = 0; i < N; i++) t += u[i] * (i % 11);
  printf("checksum %.6f\n", t);
  return 0;
}
