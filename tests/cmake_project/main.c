#include <stdio.h>
void scale(int n, double *a, double s);
int main(void) {
  double a[100];
#pragma acc parallel loop copyout(a)
  for (int i = 0; i < 100; i++) a[i] = i;
  scale(100, a, 2.0);
  printf("%.1f\n", a[99]);
  return 0;
}
