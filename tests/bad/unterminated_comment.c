// bad input: a block comment that never ends
#include <stdio.h>
int main(void) {
    int x = 1;
    /* the end of this comment is missing
    printf("%d\n", x);
    return 0;
}
