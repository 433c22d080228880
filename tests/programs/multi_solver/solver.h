/* Shared declarations of the multi-file solver test. */
#ifndef SOLVER_H
#define SOLVER_H
double timer_seconds(void);
void print_vector_summary(const char *label, const double *v, int n);
void print_scalar(const char *label, double value);
#endif
