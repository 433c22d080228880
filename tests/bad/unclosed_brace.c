// bad input: a function body whose closing brace is missing
#include <stdio.h>
int main(void) {
    int x = 3;
    for (int i = 0; i < 4; i++) {
        x += i;
    printf("%d\n", x);
    return 0;
}
