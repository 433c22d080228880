#define N 4096
void smooth(double *f, int steps);
