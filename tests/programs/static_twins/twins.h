#define N 64
#define M 8
extern double grid[N][M];
double a_step(const double *x, double *out);
void b_step(const double *x, double *out);
double b_mix(double x);
double b_row(const double *r, int n);
