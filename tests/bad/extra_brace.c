// bad input: a closing brace with no opening brace
#include <stdio.h>
int main(void) {
    int x = 3;
    printf("%d\n", x);
    return 0;
}
}
