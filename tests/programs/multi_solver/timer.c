// Wall-clock timer of the multi-file solver test.
#include <stddef.h>
#include <sys/time.h>
#include "solver.h"

double timer_seconds(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1.0e-6;
}
