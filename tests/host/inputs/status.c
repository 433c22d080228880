#include <stdio.h>
int main(void) {
    printf("failing\n");
    return 3;
}
