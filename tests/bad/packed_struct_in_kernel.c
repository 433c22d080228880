// bad input: a kernel indexes an array of packed structs, whose layout yosegi cannot know
#include <stdio.h>
struct __attribute__((packed)) rec {
    char tag;
    double value;
};
static struct rec recs[16];
int main(void) {
#pragma acc parallel loop copy(recs)
    for (int i = 0; i < 16; i++) recs[i].value = i * 0.5;
    printf("%f\n", recs[3].value);
    return 0;
}
