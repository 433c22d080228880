// yosegi-test: rtol=0
// Functions that access an array through a file-scope pointer are called in loops before the
// array is tracked (the runtime remembers that an address was untracked, to skip the lookup
// on the next calls), then after `enter data` put it on the device and a kernel wrote it: the
// host must see the kernel's values through the same functions and address, and a kernel
// must see what the host wrote through them.
#include <stdio.h>

static double *cursor;

static double read_cursor(void) { return cursor[1]; }
static void scale_cursor(double by) { cursor[2] = cursor[2] * by; }

int main(void) {
    double s[4] = {1.0, 2.0, 3.0, 4.0};
    cursor = s;
    double sum = 0.0;
    for (int k = 0; k < 3; k++) {
        sum += read_cursor();
        scale_cursor(2.0);
    }
    #pragma acc enter data copyin(s[0:4])
    #pragma acc parallel loop present(s[0:4])
    for (int i = 0; i < 4; i++) s[i] = s[i] * 10.0 + 1.0;
    for (int k = 0; k < 3; k++) sum += read_cursor();
    scale_cursor(3.0);
    double total = 0.0;
    #pragma acc parallel loop reduction(+:total) present(s[0:4])
    for (int i = 0; i < 4; i++) total += s[i];
    printf("%.3f %.3f\n", sum, total);
    #pragma acc exit data delete(s[0:4])
    return 0;
}
