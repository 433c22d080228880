// Copies and fills whose reads or writes start off a sector or line boundary, over 1 GiB (device
// memory) and 16 MiB (the L2 cache), and copies of rows of 62 or 64 doubles at pitches 63-65
// (issue 16, bench/NOTES.md run 40: a warp's store covering part of a sector cost device
// memory about as much again). Build: nvcc -O3 -arch=sm_90 -std=c++17 dram_misaligned.cu.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void copyk(const double* __restrict__ a, double* b, size_t n){
  size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x, s=(size_t)gridDim.x*blockDim.x;
  for(;i<n;i+=s) b[i]=a[i]; }
// rows of len doubles, row pitch pitch doubles; one warp-row of 32 threads per row chunk
__global__ void rowsk(const double* __restrict__ a, double* b, size_t rows, int len, int pitch){
  size_t r=blockIdx.x*(size_t)(blockDim.x/32)+threadIdx.x/32; int l=threadIdx.x%32;
  size_t stride=(size_t)gridDim.x*(blockDim.x/32);
  for(;r<rows;r+=stride) for(int k=l;k<len;k+=32) b[r*pitch+k]=a[r*pitch+k]+1.0; }
__global__ void fillk(double* b, size_t n){
  size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x, s=(size_t)gridDim.x*blockDim.x;
  for(;i<n;i+=s) b[i]=1.0; }
int main(){
  size_t cap=(size_t)2<<30;
  double *a,*b; cudaMalloc(&a,cap+4096); cudaMalloc(&b,cap+4096); cudaMemset(a,0,cap+4096); cudaMemset(b,0,cap+4096);
  int sms; cudaDeviceGetAttribute(&sms,cudaDevAttrMultiProcessorCount,0);
  cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto best=[&](int reps, auto f){ float bt=1e9; for(int r=0;r<reps;r++){ cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(r>0&&ms<bt) bt=ms;} return bt; };
  for (size_t bytes : {(size_t)1<<30, (size_t)16<<20}) {
    size_t n=bytes/8; int reps = bytes > (64<<20) ? 6 : 50;
    int offs[]={0,1,2,4,8,16};
    for(int ra: offs) for (int wa: offs) { if (ra && wa) continue;
      float t=best(reps,[&]{copyk<<<sms*8,256>>>(a+ra,b+wa,n);});
      printf("copy %5zu MB read+%3dB write+%3dB  %7.1f GB/s\n", bytes>>20, ra*8, wa*8, 2.0*bytes/t/1e6); }
    for(int wa: offs){ float t=best(reps,[&]{fillk<<<sms*8,256>>>(b+wa,n);}); printf("fill %5zu MB write+%3dB  %7.1f GB/s\n", bytes>>20, wa*8, 1.0*bytes/t/1e6); }
    // rows of 62 of a pitch of 63 or 64 or 65 (NPB-like)
    for (int pitch: {64, 63, 65}) { size_t rows=n/pitch; float t=best(reps,[&]{rowsk<<<sms*8,256>>>(a,b,rows,62,pitch);});
      printf("rows %5zu MB len 62 pitch %d  %7.1f GB/s (of bytes copied)\n", bytes>>20, pitch, 2.0*rows*62*8/t/1e6); }
    for (int pitch: {64, 65}) { size_t rows=n/pitch; float t=best(reps,[&]{rowsk<<<sms*8,256>>>(a,b,rows,64,pitch);});
      printf("rows %5zu MB len 64 pitch %d  %7.1f GB/s (of bytes copied)\n", bytes>>20, pitch, 2.0*rows*64*8/t/1e6); }
  }
  return 0;
}
