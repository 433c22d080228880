#include <stdio.h>
#include <stdlib.h>
int main(void) {
    printf("buffered before exit\n");
    exit(7);
}
