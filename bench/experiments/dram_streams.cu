// Device memory's rate by the number of read and write streams each thread walks at once, the
// streams' starts aligned (issue 16, bench/NOTES.md run 40): a thread of the grid-stride loop
// reads r arrays and writes w, each `stride` elements apart. Build: nvcc -O3 -arch=sm_90
// -std=c++17 dram_streams.cu; prints GB/s per mix, then two NPB-shaped cases (rows of
// 63 * 63 * 65 elements, starts off sector boundaries).
#include <cstdio>
#include <cuda_runtime.h>
__global__ void mixk(const double* __restrict__ a, double* b, size_t n, size_t stride, int r, int w){
  size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x, s=(size_t)gridDim.x*blockDim.x;
  for(;i<n;i+=s){ double t=0; for(int k=0;k<r;k++) t+=a[k*stride+i]; for(int k=0;k<w;k++) b[k*stride+i]=t+k; } }
int main(){
  size_t cap=(size_t)4<<30;
  double *a,*b; cudaMalloc(&a,cap); cudaMalloc(&b,cap); cudaMemset(a,0,cap); cudaMemset(b,0,cap);
  int sms; cudaDeviceGetAttribute(&sms,cudaDevAttrMultiProcessorCount,0);
  cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto best=[&](auto f){ float bt=1e9; for(int r=0;r<6;r++){ cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(r>0&&ms<bt) bt=ms;} return bt; };
  int rs[]={1,2,4,8,16,25,50,1,1,1,1,1,8,25,25,4};
  int wsv[]={1,1,1,1,1,1,1,2,4,8,16,25,8,25,8,25};
  for(int pad=0; pad<2; pad++)
  for(int q=0;q<16;q++){ int r=rs[q], w=wsv[q]; int mx=r>w?r:w;
    size_t n=cap/8/mx; n = n/4096*4096; size_t stride = pad ? n+ 4096+ 512 : n;
    if (pad) n = (cap/8 - 8192)/mx/4096*4096 - 4096, stride = n + 4096 + 512;
    for (int bl: {8}) {
      float t=best([&]{mixk<<<sms*bl,256>>>(a,b,n,stride,r,w);});
      double bytes=(double)(r+w)*n*8;
      printf("pad%d %2dR%2dW  %7.1f GB/s  ns/KB %.3f\n",pad,r,w,bytes/t/1e6, t*1e6/(bytes/1024));
    }
  }
  // one array, 50 slices a 2 MB apart (like fjac[m][n][j][i][k]): 1R50W over 100 MB
  { size_t n=63*63*65; size_t stride=n; float t=best([&]{mixk<<<sms*8,256>>>(a,b,n,stride,8,50);});
    printf("npb-like 8R50W slices %7.1f GB/s  %.1f us\n",(58.0*n*8)/t/1e6,t*1e3); }
  { size_t n=63*63*65; size_t stride=n; float t=best([&]{mixk<<<sms*8,256>>>(a,b,n,stride,1,1);});
    printf("npb-like 1R1W %7.1f GB/s  %.1f us\n",(2.0*n*8)/t/1e6,t*1e3); }
  return 0;
}
