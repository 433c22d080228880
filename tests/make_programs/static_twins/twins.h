#define N 1024
void other_pass(double *f, int steps);
