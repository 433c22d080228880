// Stores off a sector boundary by kernel shape, and a thread walking its line (issue 16,
// bench/NOTES.md run 40): fills and copies of 1 GiB aligned and 8 bytes off, grid-stride or one
// element a thread; a 1-D three-point stencil and a 2-D Jacobi sweep over the interior (stores
// off a sector) and over the whole (aligned); 128 warps each walking a column of 2048 rows with
// 1, 2 or 4 independent loads an iteration, unrolled by 4 or not, against a chase of dependent
// loads through 512 MB. Build: nvcc -O3 -arch=sm_90 -std=c++17 store_shapes.cu.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void fill_stride(double* b, size_t n){ size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x, s=(size_t)gridDim.x*blockDim.x; for(;i<n;i+=s) b[i]=1.0; }
__global__ void fill_one(double* b, size_t n){ size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x; if(i<n) b[i]=1.0; }
__global__ void copy_one(const double* __restrict__ a, double* b, size_t n){ size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x; if(i<n) b[i]=a[i]; }
__global__ void diff_one(const double* __restrict__ u, double* v, size_t lo, size_t hi){ size_t i=lo+blockIdx.x*(size_t)blockDim.x+threadIdx.x; if(i<hi) v[i]=u[i]+0.25*(u[i-1]-2*u[i]+u[i+1]); }
__global__ void jac2d(const double* __restrict__ a, double* b, int n, int j0, int j1){ int j=j0+blockIdx.x*32+threadIdx.x, i=1+blockIdx.y*8+threadIdx.y; if(j<j1 && i<n-1) b[(size_t)i*n+j]=0.25*(a[(size_t)(i-1)*n+j]+a[(size_t)(i+1)*n+j]+a[(size_t)i*n+j-1+(j==0)]+a[(size_t)i*n+j+1-(j==n-1)]); }
template<int R, bool UNROLL> __global__ void walk(const double* __restrict__ a, double* out, int len, size_t pitch, size_t plane){
  int t=blockIdx.x*blockDim.x+threadIdx.x; double acc=0;
  if (UNROLL) {
    #pragma unroll 4
    for(int k=0;k<len;k++){ double x=0; for(int r=0;r<R;r++) x+=a[r*plane+(size_t)k*pitch+t]; acc=acc*0.5+x; }
  } else {
    #pragma unroll 1
    for(int k=0;k<len;k++){ double x=0; for(int r=0;r<R;r++) x+=a[r*plane+(size_t)k*pitch+t]; acc=acc*0.5+x; }
  }
  out[t]=acc; }
__global__ void chase(const unsigned* __restrict__ next, unsigned* out, int steps, size_t pitch){
  int t=blockIdx.x*blockDim.x+threadIdx.x; unsigned p=t; for(int k=0;k<steps;k++) p=next[p]; out[t]=p; }
int main(){
  size_t cap=(size_t)1<<30; double *a,*b; cudaMalloc(&a,cap+4096); cudaMalloc(&b,cap+4096); cudaMemset(a,0,cap+4096); cudaMemset(b,0,cap+4096);
  int sms; cudaDeviceGetAttribute(&sms,cudaDevAttrMultiProcessorCount,0);
  cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto best=[&](int reps, auto f){ float bt=1e9; for(int r=0;r<reps;r++){ cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(r>0&&ms<bt) bt=ms;} return bt*1e3; };
  size_t n=cap/8; unsigned nb=(unsigned)((n+255)/256);
  for(int off: {0,1}) {
    printf("fill stride off %dB  %.1f us\n", off*8, best(5,[&]{fill_stride<<<sms*8,256>>>(b+off,n);}));
    printf("fill one    off %dB  %.1f us\n", off*8, best(5,[&]{fill_one<<<nb,256>>>(b+off,n);}));
    printf("copy one    off %dB  %.1f us\n", off*8, best(5,[&]{copy_one<<<nb,256>>>(a,b+off,n);}));
  }
  size_t m=n/2; // 64M doubles per array
  printf("diffusion i=1..m-1 %.1f us\n", best(5,[&]{diff_one<<<(unsigned)((m+255)/256),256>>>(a,b,1,m-1);}));
  printf("diffusion i=4..m-4 %.1f us\n", best(5,[&]{diff_one<<<(unsigned)((m+255)/256),256>>>(a,b,4,m-4);}));
  int N=8192; dim3 g2((N+31)/32,(N-2+7)/8), b2(32,8);
  printf("jacobi2d j=1..n-2 %.1f us\n", best(5,[&]{jac2d<<<g2,b2>>>(a,b,N,1,N-1);}));
  printf("jacobi2d j=0..n-1 %.1f us\n", best(5,[&]{jac2d<<<g2,b2>>>(a,b,N,0,N);}));
  // line walks: 128 blocks of 32 threads, thread t walks column t of a len x pitch matrix (far larger than L2)
  int len=2048; size_t pitch=4096, plane=(size_t)len*pitch; // rows of 4096 doubles, 64 MB a plane
  double* out=b;
  #define W(R,U) printf("walk R=%d unroll=%d  %.1f ns/iter\n", R, U, best(3,[&]{walk<R,U><<<128,32>>>(a,out,len,pitch,plane);})*1e3/len);
  W(1,false) W(1,true) W(2,false) W(2,true) W(4,false) W(4,true)
  // chase: dependent loads, one warp per SM, over 512 MB
  unsigned* nx=(unsigned*)a; size_t cnt=(size_t)1<<27; // 512 MB of indices
  { unsigned* h=(unsigned*)malloc(cnt*4); for(size_t i=0;i<cnt;i++) h[i]=(unsigned)((i + 1000003ull)%cnt); cudaMemcpy(nx,h,cnt*4,cudaMemcpyHostToDevice); free(h); }
  printf("chase dram %.1f ns/step\n", best(3,[&]{chase<<<128,32>>>(nx,(unsigned*)b,2000,0);})*1e3/2000);
  return 0;
}
