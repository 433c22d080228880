/* Wall-clock seconds, for the examples' `time:` lines (the tests do not compare them). */
#include <sys/time.h>
static double wall_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, 0);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}
