// What a launch costs between its two events after the device has been idle for a while, with
// or without the host having waited for the device (issue 16, the idle extra's ramp: bench/NOTES.md
// run 36). Each case: 300 launches of 128 blocks of 32 threads, the host spinning GAP us before
// each (and first waiting for the device where sync=1); the medians of the last 290.
//   nvcc -O2 -arch=sm_90 -o idle_gap idle_gap.cu && ./idle_gap
#include <cstdio>
#include <chrono>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
__global__ void work(double *x, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { double v = x[i]; for (int k = 0; k < iters; k++) v = v * 0.999 + 1.0; x[i] = v; }
}
static void spin(double us) {
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() < us) {}
}
int main() {
    int n = 4096; double *x; cudaMalloc(&x, n * sizeof(double)); cudaMemset(x, 0, n * sizeof(double));
    const int reps = 300;
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto &e : ev) cudaEventCreate(&e);
    double gaps[] = {0, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 100, 200};
    int iters_of[] = {0, 200};
    for (int iters : iters_of) {
        for (int sync = 0; sync < 2; sync++) {
            for (double g : gaps) {
                cudaDeviceSynchronize();
                for (int r = 0; r < reps; r++) {
                    if (sync) cudaStreamSynchronize(0);
                    spin(g);
                    cudaEventRecord(ev[2 * r], 0);
                    work<<<128, 32>>>(x, n, iters);
                    cudaEventRecord(ev[2 * r + 1], 0);
                }
                cudaDeviceSynchronize();
                std::vector<float> t(reps);
                for (int r = 0; r < reps; r++) cudaEventElapsedTime(&t[r], ev[2 * r], ev[2 * r + 1]);
                std::sort(t.begin() + 10, t.end());
                printf("iters=%d sync=%d gap=%6.1f us  median=%.2f us p10=%.2f p90=%.2f\n", iters, sync, g,
                       1000 * t[10 + (reps - 10) / 2], 1000 * t[10 + (reps - 10) / 10], 1000 * t[10 + 9 * (reps - 10) / 10]);
            }
        }
    }
    return 0;
}
