// The coarsened staged kernel of examples/diffusion_wide.c as Yosegi emitted it (commit cfabb8a,
// `yosegi emit --staging on`), against the emitted global kernel and the same x4 kernel with its
// point loop unrolled (bench/NOTES.md, run 4).
//   nvcc -O3 -arch=sm_90 --fmad=false -o emitted_x4 emitted_x4.cu && ./emitted_x4
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)
__device__ static long long yosegi_max_i64(long long a, long long b) { return a >= b ? a : b; }
__device__ static long long yosegi_min_i64(long long a, long long b) { return a <= b ? a : b; }
extern "C" __global__ void e4_emitted(int n_p0, double *un_p1, const double *u_p2, double r_p3)
{
    __shared__ double u_tile_s0[1040];
    int i_0;
    long long gx_1;
    int st_p_2;
    int st_t_3;
    int st_c0_4;
    int st_lo0_5;
    int st_hi0_6;
    gx_1 = (((long long)((int)blockIdx.x)) * ((long long)((int)blockDim.x))) + ((long long)((int)threadIdx.x));
    st_t_3 = (int)threadIdx.x;
    st_c0_4 = st_t_3;
    st_lo0_5 = (int)yosegi_min_i64(yosegi_max_i64(8ll - (8ll + (((long long)((int)blockIdx.x)) * 1024ll)), -1ll), 1040ll);
    st_hi0_6 = (int)yosegi_min_i64(yosegi_max_i64((((8ll + yosegi_max_i64(0ll, ((long long)(n_p0 - 8)) - 8ll)) - 1ll) - (8ll + (((long long)((int)blockIdx.x)) * 1024ll))) + 16ll, -1ll), 1040ll);
    for (;;) {
        if (!(st_c0_4 < 1040)) break;
        if ((st_c0_4 >= st_lo0_5) && (st_c0_4 <= st_hi0_6)) {
            u_tile_s0[st_c0_4] = u_p2[((8ll + (((long long)((int)blockIdx.x)) * 1024ll)) - 8ll) + ((long long)st_c0_4)];
        }
        st_c0_4 = st_c0_4 + 256;
    }
    __syncthreads();
    st_p_2 = 0;
    for (;;) {
        if (!(st_p_2 < 4)) break;
        gx_1 = (((long long)((((int)blockIdx.x) * 4) + st_p_2)) * ((long long)((int)blockDim.x))) + ((long long)((int)threadIdx.x));
        if (gx_1 < yosegi_max_i64(0ll, ((long long)(n_p0 - 8)) - 8ll)) {
            i_0 = (int)(8ll + gx_1);
            un_p1[i_0] = u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8] + (r_p3 * (((((((((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 7] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 9]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 6] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 10]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 4.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 5] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 11]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 9.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 4] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 12]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 16.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 3] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 13]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 25.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 2] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 14]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 36.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 1] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 15]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 49.0)) + (((u_tile_s0[((int)threadIdx.x) + (st_p_2 * 256)] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 16]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 64.0)));
        }
        st_p_2 = st_p_2 + 1;
    }
}

extern "C" __global__ void e4_unrolled(int n_p0, double *un_p1, const double *u_p2, double r_p3)
{
    __shared__ double u_tile_s0[1040];
    int i_0;
    long long gx_1;
    int st_p_2;
    int st_t_3;
    int st_c0_4;
    int st_lo0_5;
    int st_hi0_6;
    gx_1 = (((long long)((int)blockIdx.x)) * ((long long)((int)blockDim.x))) + ((long long)((int)threadIdx.x));
    st_t_3 = (int)threadIdx.x;
    st_c0_4 = st_t_3;
    st_lo0_5 = (int)yosegi_min_i64(yosegi_max_i64(8ll - (8ll + (((long long)((int)blockIdx.x)) * 1024ll)), -1ll), 1040ll);
    st_hi0_6 = (int)yosegi_min_i64(yosegi_max_i64((((8ll + yosegi_max_i64(0ll, ((long long)(n_p0 - 8)) - 8ll)) - 1ll) - (8ll + (((long long)((int)blockIdx.x)) * 1024ll))) + 16ll, -1ll), 1040ll);
    for (;;) {
        if (!(st_c0_4 < 1040)) break;
        if ((st_c0_4 >= st_lo0_5) && (st_c0_4 <= st_hi0_6)) {
            u_tile_s0[st_c0_4] = u_p2[((8ll + (((long long)((int)blockIdx.x)) * 1024ll)) - 8ll) + ((long long)st_c0_4)];
        }
        st_c0_4 = st_c0_4 + 256;
    }
    __syncthreads();
#pragma unroll
    for (st_p_2 = 0; st_p_2 < 4; st_p_2++) {
        gx_1 = (((long long)((((int)blockIdx.x) * 4) + st_p_2)) * ((long long)((int)blockDim.x))) + ((long long)((int)threadIdx.x));
        if (gx_1 < yosegi_max_i64(0ll, ((long long)(n_p0 - 8)) - 8ll)) {
            i_0 = (int)(8ll + gx_1);
            un_p1[i_0] = u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8] + (r_p3 * (((((((((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 7] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 9]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 6] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 10]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 4.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 5] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 11]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 9.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 4] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 12]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 16.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 3] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 13]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 25.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 2] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 14]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 36.0)) + (((u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 1] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 15]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 49.0)) + (((u_tile_s0[((int)threadIdx.x) + (st_p_2 * 256)] + u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 16]) - (2.0 * u_tile_s0[(((int)threadIdx.x) + (st_p_2 * 256)) + 8])) / 64.0)));
        }
    }
}

extern "C" __global__ void e0_global(int n_p0, double *un_p1, const double *u_p2, double r_p3)
{
    int i_0;
    long long gx_1;
    gx_1 = (((long long)((int)blockIdx.x)) * ((long long)((int)blockDim.x))) + ((long long)((int)threadIdx.x));
    if (gx_1 < yosegi_max_i64(0ll, ((long long)(n_p0 - 8)) - 8ll)) {
        i_0 = (int)(8ll + gx_1);
        un_p1[i_0] = u_p2[i_0] + (r_p3 * (((((((((u_p2[i_0 - 1] + u_p2[i_0 + 1]) - (2.0 * u_p2[i_0])) + (((u_p2[i_0 - 2] + u_p2[i_0 + 2]) - (2.0 * u_p2[i_0])) / 4.0)) + (((u_p2[i_0 - 3] + u_p2[i_0 + 3]) - (2.0 * u_p2[i_0])) / 9.0)) + (((u_p2[i_0 - 4] + u_p2[i_0 + 4]) - (2.0 * u_p2[i_0])) / 16.0)) + (((u_p2[i_0 - 5] + u_p2[i_0 + 5]) - (2.0 * u_p2[i_0])) / 25.0)) + (((u_p2[i_0 - 6] + u_p2[i_0 + 6]) - (2.0 * u_p2[i_0])) / 36.0)) + (((u_p2[i_0 - 7] + u_p2[i_0 + 7]) - (2.0 * u_p2[i_0])) / 49.0)) + (((u_p2[i_0 - 8] + u_p2[i_0 + 8]) - (2.0 * u_p2[i_0])) / 64.0)));
    }
}

int main() {
    const int n = 1 << 26;
    std::vector<double> h(n);
    for (int i = 0; i < n; i++) h[i] = 1.0 + (double)(((long long)i * i % 1000 * 7919 + 31ll * i) % 1000) / 1000.0;  // no zero second differences
    double *u, *un;
    CHECK(cudaMalloc(&u, n * 8ll));
    CHECK(cudaMalloc(&un, n * 8ll));
    CHECK(cudaMemcpy(u, h.data(), n * 8ll, cudaMemcpyHostToDevice));
    std::vector<double> want(n), got(n);
    const char *names[] = {"emitted global", "emitted x4", "emitted x4, point loop unrolled"};
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int v = 0; v < 3; v++) {
        auto launch = [&] {
            int blocks = ((n - 16 + 255) / 256 + 3) / 4;
            if (v == 0) e0_global<<<(n - 16 + 255) / 256, 256>>>(n, un, u, 0.15);
            else if (v == 1) e4_emitted<<<blocks, 256>>>(n, un, u, 0.15);
            else e4_unrolled<<<blocks, 256>>>(n, un, u, 0.15);
        };
        CHECK(cudaMemset(un, 0xff, n * 8ll));
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got.data(), un, n * 8ll, cudaMemcpyDeviceToHost));
        if (v == 0) want = got;
        bool same = std::equal(got.begin() + 8, got.end() - 8, want.begin() + 8);
        for (int i = 0; i < 5; i++) launch();
        std::vector<float> ts;
        for (int i = 0; i < 21; i++) {
            CHECK(cudaEventRecord(a)); launch(); CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b));
            float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
        }
        CHECK(cudaGetLastError());
        std::sort(ts.begin(), ts.end());
        printf("| %s | %.4f | %s |\n", names[v], ts[10], same ? "same" : "DIFFERS");
    }
    return 0;
}
