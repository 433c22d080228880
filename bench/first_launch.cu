// What the first launch of a kernel costs on the device, and what it depends on (issue 16's
// first-launch term: programs' kernels launched once pay about 24 us more than their steady
// launch, the runtime's calibration measures 16 us on five tiny modules, bench/NOTES.md runs
// 22 and 25). For each case, five modules of distinct code are compiled with NVRTC, each loaded
// fresh, and its kernel launched twice, each launch between two CUDA events on an idle device;
// the table gives the medians of the first launch, the second, and the host time of
// cuModuleLoadData + cuModuleGetFunction. Cases: code size (statements in the kernel body),
// grid (blocks of 256 threads), the image kind (cubin or PTX), and the parameter bytes.
//
//     nvcc -O2 -o first_launch bench/first_launch.cu -lcuda -lnvrtc
//     ./first_launch                          # the module loading the driver defaults to
//     CUDA_MODULE_LOADING=EAGER ./first_launch
//     ./first_launch --busy                   # only the context as a program leaves it
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda.h>
#include <nvrtc.h>

#define CU(call)                                                                        \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char *s_ = nullptr;                                                   \
            cuGetErrorString(r_, &s_);                                                  \
            std::fprintf(stderr, "%s: %s\n", #call, s_ ? s_ : "?");                     \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

static std::string kernel_source(int statements, int salt, int extra_params, int shared_floats = 0) {
    std::string s = "extern \"C\" __global__ void k(float *p, int n";
    for (int i = 0; i < extra_params; i++) s += ", long long e" + std::to_string(i);
    s += ") {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n";
    if (shared_floats > 0) {
        // A static shared array, as the runtime's staged and reduction kernels declare.
        s += "  __shared__ float tile[" + std::to_string(shared_floats) + "];\n  tile[threadIdx.x] = i < n ? p[i] : 0.0f;\n  __syncthreads();\n";
        s += "  if (i >= n) return;\n  float x = tile[(threadIdx.x + 1) % blockDim.x];\n";
    } else {
        s += "  if (i >= n) return;\n  float x = p[i];\n";
    }
    for (int j = 0; j < statements; j++) {
        // Distinct constants and loads, so that nothing folds away and every module differs.
        s += "  x = x * " + std::to_string(1.0001 + 1e-7 * (j + 1000 * salt)) + "f + p[(i + " +
             std::to_string(j * 7 + salt) + ") % n];\n";
    }
    s += "  p[i] = x + " + std::to_string(salt) + ".0f;\n}\n";
    return s;
}

static std::vector<char> compile(const std::string &source, bool cubin, int major, int minor) {
    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, source.c_str(), "first_launch.cu", 0, nullptr, nullptr);
    std::string arch = std::string(cubin ? "--gpu-architecture=sm_" : "--gpu-architecture=compute_") +
                       std::to_string(major * 10 + minor);
    const char *opts[] = {arch.c_str(), "-default-device"};
    if (nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) {
        size_t n;
        nvrtcGetProgramLogSize(prog, &n);
        std::string log(n, ' ');
        nvrtcGetProgramLog(prog, &log[0]);
        std::fprintf(stderr, "NVRTC: %s\n", log.c_str());
        std::exit(1);
    }
    size_t n;
    std::vector<char> image;
    if (cubin) {
        nvrtcGetCUBINSize(prog, &n);
        image.resize(n);
        nvrtcGetCUBIN(prog, image.data());
    } else {
        nvrtcGetPTXSize(prog, &n);
        image.resize(n);
        nvrtcGetPTX(prog, image.data());
    }
    nvrtcDestroyProgram(&prog);
    return image;
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    // `--busy`: only the last part (a context holding many allocations and modules).
    bool busy_only = argc > 1 && std::string(argv[1]) == "--busy";
    CU(cuInit(0));
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    int major, minor;
    CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    char name[256];
    CU(cuDeviceGetName(name, sizeof name, dev));
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured, also into a pipe
    const char *loading = std::getenv("CUDA_MODULE_LOADING");
    std::printf("device: %s, CUDA_MODULE_LOADING=%s\n\n", name, loading ? loading : "(default)");
    int n = 1 << 22;
    CUdeviceptr p;
    CU(cuMemAlloc(&p, n * sizeof(float)));
    CU(cuMemsetD32(p, 0, n));
    CUevent start, stop;
    CU(cuEventCreate(&start, 0));
    CU(cuEventCreate(&stop, 0));
    double host_launch_us = 0;  // host time of the last timed cuLaunchKernel call
    auto timed = [&](CUfunction f, int blocks, void **args) {
        CU(cuCtxSynchronize());
        CU(cuEventRecord(start, nullptr));
        auto h0 = std::chrono::steady_clock::now();
        CU(cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
        host_launch_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count();
        CU(cuEventRecord(stop, nullptr));
        CU(cuEventSynchronize(stop));
        float ms;
        CU(cuEventElapsedTime(&ms, start, stop));
        return 1e3 * ms;
    };
    // Warm the context: one module loaded and launched before any timing.
    {
        std::vector<char> image = compile(kernel_source(0, 999, 0), true, major, minor);
        CUmodule m;
        CUfunction f;
        CU(cuModuleLoadData(&m, image.data()));
        CU(cuModuleGetFunction(&f, m, "k"));
        void *args[] = {&p, &n};
        timed(f, 1, args);
        CU(cuModuleUnload(m));
    }
    std::printf("| image | statements | image bytes | blocks | param bytes | shared bytes | first launch (us) | second (us) | first - second (us) | load + get, host (us) | cuLaunchKernel host, first / second (us) |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    struct Case { bool cubin; int statements; int blocks; int extra; int shared = 0; };
    std::vector<Case> cases = {
        {true, 0, 1, 0},     {true, 0, 16384, 0},   {true, 200, 1, 0},   {true, 200, 16384, 0},
        {true, 1000, 1, 0},  {true, 1000, 16384, 0}, {true, 0, 16384, 24}, {false, 0, 16384, 0},
        {false, 200, 16384, 0}, {true, 0, 16384, 0, 256}, {true, 0, 16384, 0, 4096}, {true, 200, 16384, 6, 2048},
    };
    int salt = 0;
    // Five fresh modules of case `c`, each launched twice: the medians.
    struct Medians { double first, second, load, host_first, host_second; size_t bytes; };
    auto measure = [&](const Case &c) {
        std::vector<double> first, second, load, host_first, host_second;
        size_t bytes = 0;
        for (int rep = 0; rep < 5; rep++) {
            std::vector<char> image = compile(kernel_source(c.statements, ++salt, c.extra, c.shared), c.cubin, major, minor);
            bytes = image.size();
            CUmodule m;
            CUfunction f;
            auto t0 = std::chrono::steady_clock::now();
            CU(cuModuleLoadData(&m, image.data()));
            CU(cuModuleGetFunction(&f, m, "k"));
            load.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            std::vector<long long> extra(c.extra, 1);
            std::vector<void *> args = {&p, &n};
            for (auto &e : extra) args.push_back(&e);
            first.push_back(timed(f, c.blocks, args.data()));
            host_first.push_back(host_launch_us);
            second.push_back(timed(f, c.blocks, args.data()));
            host_second.push_back(host_launch_us);
            CU(cuModuleUnload(m));
        }
        return Medians{median(first), median(second), median(load), median(host_first), median(host_second), bytes};
    };
    if (busy_only) cases.clear();
    for (const Case &c : cases) {
        Medians t = measure(c);
        std::printf("| %s | %d | %zu | %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f / %.1f |\n", c.cubin ? "cubin" : "PTX", c.statements, t.bytes,
                    c.blocks, 12 + 8 * c.extra, 4 * c.shared, t.first, t.second, t.first - t.second, t.load, t.host_first, t.host_second);
    }

    // Data touched for the first time: one kernel, already loaded and launched, reads arrays
    // just allocated and filled (by a copy from the host, or by a memset), first pass against
    // second. Arrays of 1 GiB, beyond L2, so the second pass finds nothing cached either.
    if (!busy_only) {
        std::vector<char> image = compile(kernel_source(0, 4242, 0), true, major, minor);
        CUmodule m;
        CUfunction f;
        CU(cuModuleLoadData(&m, image.data()));
        CU(cuModuleGetFunction(&f, m, "k"));
        void *warm_args[] = {&p, &n};
        timed(f, 1, warm_args);
        std::printf("\n| data | bytes | first pass (us) | second pass (us) | first - second (us) |\n|---|---:|---:|---:|---:|\n");
        for (int how = 0; how < 2; how++) {
            for (size_t bytes : {size_t(64) << 20, size_t(1) << 30}) {
                std::vector<double> first, second;
                for (int rep = 0; rep < 3; rep++) {
                    CUdeviceptr q;
                    CU(cuMemAlloc(&q, bytes));
                    if (how == 0) {
                        std::vector<float> host(bytes / sizeof(float), 1.0f);
                        CU(cuMemcpyHtoD(q, host.data(), bytes));
                    } else {
                        CU(cuMemsetD32(q, 0, bytes / sizeof(float)));
                    }
                    CU(cuCtxSynchronize());
                    int count = int(bytes / sizeof(float));
                    void *args[] = {&q, &count};
                    int blocks = (count + 255) / 256;
                    first.push_back(timed(f, blocks, args));
                    second.push_back(timed(f, blocks, args));
                    CU(cuMemFree(q));
                }
                std::printf("| %s | %zu | %.1f | %.1f | %.1f |\n", how == 0 ? "copied from the host" : "memset", bytes, median(first),
                            median(second), median(first) - median(second));
            }
        }
        CU(cuModuleUnload(m));
    }

    // A context as a program leaves it: many allocations and many loaded modules, each
    // launched once. Then the first launch of fresh modules again (does the driver's first
    // launch cost grow with what the context holds?), and the first pass over a fresh array
    // copied from the host, read only (into another array) against read and written in place.
    {
        std::vector<CUdeviceptr> arrays;
        for (int i = 0; i < 64; i++) {
            CUdeviceptr q;
            CU(cuMemAlloc(&q, size_t(16) << 20));
            CU(cuMemsetD32(q, 0, (size_t(16) << 20) / 4));
            arrays.push_back(q);
        }
        std::vector<CUmodule> loaded;
        for (int i = 0; i < 60; i++) {
            std::vector<char> image = compile(kernel_source(20, 5000 + i, 4), true, major, minor);
            CUmodule m;
            CUfunction f;
            CU(cuModuleLoadData(&m, image.data()));
            CU(cuModuleGetFunction(&f, m, "k"));
            std::vector<long long> extra(4, 1);
            int count = (16 << 20) / 4;
            std::vector<void *> args = {&arrays[i % 64], &count};
            for (auto &e : extra) args.push_back(&e);
            timed(f, 64, args.data());
            loaded.push_back(m);
        }
        std::printf("\nAfter 64 allocations of 16 MiB and 60 modules loaded and launched:\n\n");
        std::printf("| statements | blocks | first launch (us) | second (us) | first - second (us) | cuLaunchKernel host, first / second (us) |\n|---:|---:|---:|---:|---:|---|\n");
        for (Case c : std::vector<Case>{{true, 0, 1, 0}, {true, 200, 16384, 6, 2048}}) {
            Medians t = measure(c);
            std::printf("| %d | %d | %.1f | %.1f | %.1f | %.1f / %.1f |\n", c.statements, c.blocks, t.first, t.second, t.first - t.second,
                        t.host_first, t.host_second);
        }
        // Read only: a grid-stride copy of float4 from the fresh array into a warm one (the
        // runtime's calibration); in place: one thread an element, read and written.
        const char *copy_src = "extern \"C\" __global__ void c4(const float4 *__restrict__ a, float4 *__restrict__ b, unsigned long long n) {\n"
                               "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) b[i] = a[i];\n}\n";
        std::vector<char> image = compile(copy_src, true, major, minor);
        CUmodule cm;
        CUfunction c4;
        CU(cuModuleLoadData(&cm, image.data()));
        CU(cuModuleGetFunction(&c4, cm, "c4"));
        std::vector<char> image2 = compile(kernel_source(0, 777, 0), true, major, minor);
        CUmodule km;
        CUfunction k;
        CU(cuModuleLoadData(&km, image2.data()));
        CU(cuModuleGetFunction(&k, km, "k"));
        size_t bytes = size_t(64) << 20;
        CUdeviceptr warm;
        CU(cuMemAlloc(&warm, bytes));
        CU(cuMemsetD32(warm, 0, bytes / 4));
        std::vector<float> host(bytes / 4, 1.0f);
        unsigned long long n4 = bytes / 16;
        int count = int(bytes / 4);
        {
            void *a1[] = {&warm, &warm, &n4};
            timed(c4, 2112, a1);
            void *a2[] = {&warm, &count};
            timed(k, count / 256, a2);
        }
        std::printf("\n| first pass over 64 MiB just copied from the host | first (us) | second (us) | first - second (us) |\n|---|---:|---:|---:|\n");
        for (int kind = 0; kind < 3; kind++) {
            std::vector<double> first, second;
            for (int rep = 0; rep < 5; rep++) {
                CUdeviceptr q;
                CU(cuMemAlloc(&q, bytes));
                CU(cuMemcpyHtoD(q, host.data(), bytes));
                if (kind == 0) {
                    void *a[] = {&q, &warm, &n4};
                    first.push_back(timed(c4, 2112, a));
                    second.push_back(timed(c4, 2112, a));
                } else if (kind == 1) {
                    void *a[] = {&q, &count};
                    first.push_back(timed(k, count / 256, a));
                    second.push_back(timed(k, count / 256, a));
                } else {
                    void *a[] = {&warm, &q, &n4};
                    first.push_back(timed(c4, 2112, a));
                    second.push_back(timed(c4, 2112, a));
                }
                CU(cuMemFree(q));
            }
            const char *what[] = {"read (grid-stride float4 copy into a warm array)", "read and written in place (a thread an element)",
                                  "written (a warm array copied into it)"};
            std::printf("| %s | %.1f | %.1f | %.1f |\n", what[kind], median(first), median(second), median(first) - median(second));
        }
        for (CUmodule m : loaded) CU(cuModuleUnload(m));
        for (CUdeviceptr q : arrays) CU(cuMemFree(q));
    }
    return 0;
}
