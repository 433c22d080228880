// bad input: a complex integer type (a GNU extension Yosegi does not model)
#include <stdio.h>
int main(void) {
    int _Complex z = 0;
    printf("%d\n", (int)sizeof z);
    return 0;
}
