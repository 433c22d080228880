// bad input: an #include of a file that does not exist
#include <stdio.h>
#include "not_there.h"
int main(void) {
    printf("%d\n", NOT_THERE);
    return 0;
}
