// bad input: devices are numbered from 0
int main(void) {
#pragma acc init device_num(-1)
    return 0;
}
