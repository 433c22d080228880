// What a kernel's first launch costs on the device beyond its second, from idle and queued
// behind Q us of work (issue 16, the first launch's load: bench/NOTES.md run 39). Each module
// m<i>.cubin (40 small kernels, 20 of 400 statements; bench/experiments/first_launch_queued.sh
// makes them) is loaded, then its kernel launched once after the host waited for the device, or
// behind a spinner of Q = 5-80 us, then once more from idle; each launch timed between two events.
#include <cuda.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <string>
extern "C" __global__ void spin(float *out, long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns) {} out[0] = 1; }
static CUevent e0, e1;
static double ev(CUevent a, CUevent b) { float ms; cuEventElapsedTime(&ms, a, b); return ms * 1e3; }
int main() {
  cuInit(0); CUdevice d; cuDeviceGet(&d, 0); CUcontext c; cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
  cuEventCreate(&e0, 0); cuEventCreate(&e1, 0);
  CUdeviceptr p; cuMemAlloc(&p, 4096); cuMemsetD8(p, 0, 4096);
  CUmodule sm; cuModuleLoad(&sm, "spin.cubin"); CUfunction fs; cuModuleGetFunction(&fs, sm, "spin");
  int clk; cuDeviceGetAttribute(&clk, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d); // kHz
  void *args[] = {&p};
  // warm the spinner
  long long cyc = 1000; void *sa[] = {&p, &cyc}; cuLaunchKernel(fs, 1,1,1,1,1,1,0,0,sa,0); cuCtxSynchronize();
  int Qs[] = {0, 5, 10, 20, 40, 80};
  printf("mod  Q(us)  first   second  (us, device time between events; first launch queued behind a spinner of Q us when Q>0)\n");
  for (int m = 0; m < 60; m++) {
    int Q = Qs[m % 6];
    char name[32]; sprintf(name, "m%d.cubin", m);
    CUmodule mod; if (cuModuleLoad(&mod, name)) { printf("load %s failed\n", name); continue; }
    CUfunction f; cuModuleGetFunction(&f, mod, "k");
    cuCtxSynchronize();
    if (Q) { cyc = (long long)Q * clk / 1000; cuLaunchKernel(fs, 1,1,1,1,1,1,0,0,sa,0); }
    cuEventRecord(e0, 0); cuLaunchKernel(f, 1,1,1,256,1,1,0,0,args,0); cuEventRecord(e1, 0); cuEventSynchronize(e1);
    double first = ev(e0, e1);
    cuCtxSynchronize();
    cuEventRecord(e0, 0); cuLaunchKernel(f, 1,1,1,256,1,1,0,0,args,0); cuEventRecord(e1, 0); cuEventSynchronize(e1);
    double second = ev(e0, e1);
    printf("%3d %s %3d %7.2f %7.2f\n", m, m < 40 ? "small" : "large", Q, first, second);
  }
  return 0;
}
