// Fallback for bench/copy_ceiling.py when neither PyTorch nor CuPy is installed: the same
// measurement (device-to-device cudaMemcpy of two GIB-GiB buffers, one warm-up, median of REPS
// copies timed with CUDA events, read + write bytes counted). Usage: copy_ceiling [GIB] [REPS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_));         \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv) {
    double gib = argc > 1 ? std::atof(argv[1]) : 4.0;
    int reps = argc > 2 ? std::atoi(argv[2]) : 20;
    size_t bytes = (size_t)(gib * (double)(1ull << 30));
    void *src, *dst;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 1, bytes));
    CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(reps);
    for (int r = 0; r < reps; r++) {
        CHECK(cudaEventRecord(start));
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&ms[r], start, stop));
    }
    std::sort(ms.begin(), ms.end());
    float median = reps % 2 ? ms[reps / 2] : 0.5f * (ms[reps / 2 - 1] + ms[reps / 2]);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("copy %g GiB x %d: median %.3f ms, min %.3f ms, max %.3f ms\n", gib, reps, median, ms[0], ms[reps - 1]);
    std::printf("ceiling_gbs %.1f nvcc cudaMemcpy on %s, %g GiB device-to-device copy, read+write counted\n",
                2.0 * (double)bytes / (median * 1e-3) * 1e-9, prop.name, gib);
    return 0;
}
