// bad input: `set` needs default_async, device_num or device_type
int main(void) {
    int n = 1;
#pragma acc set if(n > 0)
    return 0;
}
