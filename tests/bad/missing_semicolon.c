// bad input: a declaration without its semicolon
#include <stdio.h>
int main(void) {
    int x = 3
    x++;
    printf("%d\n", x);
    return 0;
}
