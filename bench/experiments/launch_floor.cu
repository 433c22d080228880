// The host cost of one launch as the runtime makes it (an event, the launch, an event, on the
// default stream), against a bare launch: the floor under the runtime's own per-launch work.
//   nvcc -O2 -o launch_floor launch_floor.cu && ./launch_floor
#include <cstdio>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>

__global__ void scale(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

int main() {
    const int n = 1024, launches = 20000;
    float *x;
    cudaMalloc(&x, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    std::vector<cudaEvent_t> events(2 * 1024);
    for (auto &e : events) cudaEventCreate(&e);
    for (int mode = 0; mode < 2; mode++) {
        for (int rep = 0; rep < 3; rep++) {
            cudaDeviceSynchronize();
            auto t0 = std::chrono::steady_clock::now();
            for (int k = 0; k < launches; k++) {
                if (mode == 1) cudaEventRecord(events[2 * (k % 1024)], 0);
                scale<<<(n + 255) / 256, 256>>>(x, n);
                if (mode == 1) cudaEventRecord(events[2 * (k % 1024) + 1], 0);
                if (mode == 1 && k % 1024 == 1023) cudaEventSynchronize(events[2 * 1023 + 1]);
            }
            cudaDeviceSynchronize();
            double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / launches;
            printf("%s: %.2f us per launch (host loop, %d launches)\n", mode ? "event, launch, event" : "launch only", us, launches);
        }
    }
    return 0;
}
