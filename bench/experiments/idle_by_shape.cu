// What a launch from idle costs beyond a queued one, by the kernel's shape (issue 16, the idle
// extra: bench/NOTES.md run 39): an empty kernel, one block touching 1 KiB, a block per
// multiprocessor, 4 MiB over 4096 blocks, and kernels of 12 and 24 params, each timed between
// two events 21 times queued behind a spinner, and 21 times after the host waited for the device
// and then spun 0, 100 us, 1 ms or 10 ms; the medians, twice.
//   nvcc -O2 -arch=sm_90 -o idle_by_shape idle_by_shape.cu -lcuda && ./idle_by_shape
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include <thread>
#define P float *
extern "C" __global__ void k_empty() {}
extern "C" __global__ void k_touch(float *p) { p[threadIdx.x] = p[threadIdx.x] * 0.5f + 1.0f; }
extern "C" __global__ void k_touch_grid(float *p) { int i = blockIdx.x * blockDim.x + threadIdx.x; p[i] = p[i] * 0.5f + 1.0f; }
extern "C" __global__ void k_p12(P a, P b, P c, P d, P e, P f, int n, int m, double x, double y, P g, P h) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = b[i] + c[i] * x + d[i] * y + e[i] + f[i] + g[i] + h[i] + m; }
extern "C" __global__ void k_p24(P a, P b, P c, P d, P e, P f, P g, P h, P a2, P b2, P c2, P d2, P e2, P f2, P g2, P h2,
  int n, int m, int o, int q, double x, double y, double z, double w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = b[i] + c[i] * x + d[i] * y + e[i] + f[i] + g[i] + h[i] + m + a2[i] + b2[i] + c2[i] * z + d2[i] * w + e2[i] + f2[i] + g2[i] + h2[i] + o + q; }
extern "C" __global__ void spin(float *out, int iters) { float v = threadIdx.x; for (int i = 0; i < iters; i++) v = v * 0.999f + 0.5f; out[threadIdx.x] = v; }

static CUevent e0, e1;
static double timed(CUfunction f, unsigned blocks, unsigned threads, void **args) {
  cuEventRecord(e0, 0);
  cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, 0, args, 0);
  cuEventRecord(e1, 0);
  cuEventSynchronize(e1);
  float ms; cuEventElapsedTime(&ms, e0, e1); return ms * 1e3;
}
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static void busy_wait_us(int us) { auto t = std::chrono::steady_clock::now(); while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() < us) {} }

int main() {
  cudaFree(0);
  cuEventCreate(&e0, 0); cuEventCreate(&e1, 0);
  size_t n = 1 << 20; float *buf[16]; for (int i = 0; i < 16; i++) { cudaMalloc(&buf[i], n * 4); cudaMemset(buf[i], 0, n * 4); }
  float *out; cudaMalloc(&out, 4096);
  CUfunction fe, ft, ftg, f12, f24, fs;
  cudaGetFuncBySymbol((cudaFunction_t *)&fe, (void *)k_empty);
  cudaGetFuncBySymbol((cudaFunction_t *)&ft, (void *)k_touch);
  cudaGetFuncBySymbol((cudaFunction_t *)&ftg, (void *)k_touch_grid);
  cudaGetFuncBySymbol((cudaFunction_t *)&f12, (void *)k_p12);
  cudaGetFuncBySymbol((cudaFunction_t *)&f24, (void *)k_p24);
  cudaGetFuncBySymbol((cudaFunction_t *)&fs, (void *)spin);
  int nn = n, m = 3, o = 4, q = 5; double x = 1.5, y = 2.5, z = 0.5, w = 0.25;
  void *a0[] = {0};
  void *a1[] = {&buf[0]};
  void *a12[] = {&buf[0], &buf[1], &buf[2], &buf[3], &buf[4], &buf[5], &nn, &m, &x, &y, &buf[6], &buf[7]};
  void *a24[] = {&buf[0], &buf[1], &buf[2], &buf[3], &buf[4], &buf[5], &buf[6], &buf[7], &buf[8], &buf[9], &buf[10], &buf[11], &buf[12], &buf[13], &buf[14], &buf[15], &nn, &m, &o, &q, &x, &y, &z, &w};
  struct K { const char *name; CUfunction f; unsigned blocks, threads; void **args; };
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::vector<K> ks = {
    {"empty 1x1", fe, 1, 1, a0}, {"touch 1x256", ft, 1, 256, a1}, {"touch sms x256", ftg, (unsigned)sms, 256, a1},
    {"touch 4096x256 (4MB)", ftg, 4096, 256, a1}, {"p12 1x256", f12, 1, 256, a12}, {"p12 4096x256", f12, 4096, 256, a12},
    {"p24 1x256", f24, 1, 256, a24}, {"p24 4096x256", f24, 4096, 256, a24}};
  for (auto &k : ks) for (int w = 0; w < 3; w++) timed(k.f, k.blocks, k.threads, k.args);
  printf("%-22s %9s %9s %9s %9s %9s  (us; extra = idle - queued)\n", "kernel", "queued", "idle", "gap100us", "gap1ms", "gap10ms");
  for (int rep = 0; rep < 2; rep++)
  for (auto &k : ks) {
    // queued: behind a spinner, events around each launch
    std::vector<CUevent> ev(42); for (auto &e : ev) cuEventCreate(&e, 0);
    cuCtxSynchronize();
    int iters = 400000; void *sa[] = {&out, &iters};
    cuLaunchKernel(fs, 1, 1, 1, 32, 1, 1, 0, 0, sa, 0);
    for (int i = 0; i < 21; i++) { cuEventRecord(ev[2 * i], 0); cuLaunchKernel(k.f, k.blocks, 1, 1, k.threads, 1, 1, 0, 0, k.args, 0); cuEventRecord(ev[2 * i + 1], 0); }
    cuCtxSynchronize();
    std::vector<double> qs; for (int i = 0; i < 21; i++) { float ms; cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]); qs.push_back(ms * 1e3); }
    for (auto &e : ev) cuEventDestroy(e);
    double qu = median(qs);
    double r[4]; int gaps[4] = {0, 100, 1000, 10000};
    for (int g = 0; g < 4; g++) {
      std::vector<double> is;
      for (int i = 0; i < 21; i++) { cuCtxSynchronize(); if (gaps[g]) busy_wait_us(gaps[g]); is.push_back(timed(k.f, k.blocks, k.threads, k.args)); }
      r[g] = median(is);
    }
    printf("%-22s %9.2f %9.2f %9.2f %9.2f %9.2f   extra %5.2f %5.2f %5.2f %5.2f\n", k.name, qu, r[0], r[1], r[2], r[3], r[0] - qu, r[1] - qu, r[2] - qu, r[3] - qu);
  }
  return 0;
}
