// bad input: a binary operator with no right operand
#include <stdio.h>
int main(void) {
    int x = 1;
    x = (3 + ) * 2;
    printf("%d\n", x);
    return 0;
}
