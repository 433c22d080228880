// bad input: `#pragma pack` changes a struct's layout; a kernel cannot index an array of it
#include <stdio.h>
#pragma pack(push, 1)
struct rec {
    char tag;
    int count;
};
#pragma pack(pop)
static struct rec recs[16];
int main(void) {
#pragma acc parallel loop copy(recs)
    for (int i = 0; i < 16; i++) recs[i].count = recs[i].tag + i;
    printf("%d\n", recs[3].count);
    return 0;
}
