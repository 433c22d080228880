// Hand-written forms of two stencil kernels, timed side by side, to decide what the staging pass
// should emit (bench/NOTES.md, "Run 4"). W* = the radius-8 1-D stencil of
// examples/diffusion_wide.c (2^26 doubles), J* = the 5-point Jacobi sweep of examples/jacobi2d.c
// (8192^2 doubles, without its max reduction). W0/W1 and J0/J1 are what Yosegi emitted at
// commit 7c6857a (global, staged); the others are candidates. Every variant is checked against
// W0/J0 on random data, then timed with CUDA events: 5 warm-up launches, median of 21.
//
//   nvcc -O3 -arch=sm_90 -o stencil_forms stencil_forms.cu && ./stencil_forms
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <functional>
#include <string>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ static long long ymax(long long a, long long b) { return a >= b ? a : b; }

#define WIDE(U, I) (U(I) + (r * (((((((((U((I) - 1) + U((I) + 1)) - (2.0 * U(I))) + (((U((I) - 2) + U((I) + 2)) - (2.0 * U(I))) / 4.0)) \
    + (((U((I) - 3) + U((I) + 3)) - (2.0 * U(I))) / 9.0)) + (((U((I) - 4) + U((I) + 4)) - (2.0 * U(I))) / 16.0)) \
    + (((U((I) - 5) + U((I) + 5)) - (2.0 * U(I))) / 25.0)) + (((U((I) - 6) + U((I) + 6)) - (2.0 * U(I))) / 36.0)) \
    + (((U((I) - 7) + U((I) + 7)) - (2.0 * U(I))) / 49.0)) + (((U((I) - 8) + U((I) + 8)) - (2.0 * U(I))) / 64.0))))

// W0: global memory (as emitted).
__global__ void w0_global(int n, double *un, const double *__restrict__ u, double r) {
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gx < ymax(0, (long long)(n - 8) - 8)) {
        int i = (int)(8 + gx);
#define G(x) u[x]
        un[i] = WIDE(G, i);
#undef G
    }
}

// W1: staged as emitted (64-bit hull check per tile element).
__global__ void w1_staged(int n, double *un, const double *__restrict__ u, double r) {
    __shared__ double t[272];
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int e = threadIdx.x; e < 272; e += 256) {
        long long g = (8ll + (long long)blockIdx.x * 256ll) - 8ll + e;
        if (g >= 0 && g <= ((8ll + ymax(0ll, (long long)(n - 8) - 8ll)) - 1ll) + 8ll) t[e] = u[g];
    }
    __syncthreads();
    if (gx < ymax(0, (long long)(n - 8) - 8)) {
#define S(x) t[x]
        int tx = threadIdx.x + 8;
        un[8 + gx] = WIDE(S, tx);
#undef S
    }
}

// W2: staged, hull bounds hoisted into 32-bit locals.
__global__ void w2_staged_hoisted(int n, double *un, const double *__restrict__ u, double r) {
    __shared__ double t[272];
    int origin = blockIdx.x * 256;  // = 8 + block start - 8
    int lo = -origin, hi = n - origin;  // tile element e is loaded when lo <= e < hi
    for (int e = threadIdx.x; e < 272; e += 256)
        if (e >= lo && e < hi) t[e] = u[origin + e];
    __syncthreads();
    int gx = blockIdx.x * 256 + threadIdx.x;
    if (gx < n - 16) {
#define S(x) t[x]
        int tx = threadIdx.x + 8;
        un[8 + gx] = WIDE(S, tx);
#undef S
    }
}

// W3: diagnostic only (not a legal rewrite of the C): divides by k^2 as multiplies.
__global__ void w3_global_nodiv(int n, double *un, const double *__restrict__ u, double r) {
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gx < n - 16) {
        int i = (int)(8 + gx);
        double c = 2.0 * u[i];
        double s = (u[i - 1] + u[i + 1] - c);
        s += (u[i - 2] + u[i + 2] - c) * 0.25;
        s += (u[i - 3] + u[i + 3] - c) * (1.0 / 9.0);
        s += (u[i - 4] + u[i + 4] - c) * 0.0625;
        s += (u[i - 5] + u[i + 5] - c) * (1.0 / 25.0);
        s += (u[i - 6] + u[i + 6] - c) * (1.0 / 36.0);
        s += (u[i - 7] + u[i + 7] - c) * (1.0 / 49.0);
        s += (u[i - 8] + u[i + 8] - c) * (1.0 / 64.0);
        un[i] = u[i] + r * s;
    }
}

// W4: staged, each block of 256 threads computes 4 x 256 outputs (thread t: t, t+256, ...),
// one tile of 1040 doubles, one barrier: the halo and barrier amortised over 4x the work.
template <int OUT>
__global__ void w4_staged_multi(int n, double *un, const double *__restrict__ u, double r) {
    __shared__ double t[256 * OUT + 16];
    int origin = blockIdx.x * 256 * OUT;
    int lo = -origin, hi = n - origin;
    for (int e = threadIdx.x; e < 256 * OUT + 16; e += 256)
        if (e >= lo && e < hi) t[e] = u[origin + e];
    __syncthreads();
#pragma unroll
    for (int o = 0; o < OUT; o++) {
        int gx = origin + o * 256 + threadIdx.x;
        if (gx < n - 16) {
#define S(x) t[x]
            int tx = o * 256 + threadIdx.x + 8;
            un[8 + gx] = WIDE(S, tx);
#undef S
        }
    }
}

// W5: global memory, several outputs per thread (t, t+256, ...), no shared memory.
template <int OUT>
__global__ void w5_global_multi(int n, double *un, const double *__restrict__ u, double r) {
#pragma unroll
    for (int o = 0; o < OUT; o++) {
        long long gx = ((long long)blockIdx.x * OUT + o) * 256 + threadIdx.x;
        if (gx < n - 16) {
            int i = (int)(8 + gx);
#define G(x) u[x]
            un[i] = WIDE(G, i);
#undef G
        }
    }
}

// ---- 2-D Jacobi, 32x8 blocks ----
#define JAC(A, j, i) (0.25 * (((A(j, (i) + 1) + A(j, (i) - 1)) + A((j) - 1, i)) + A((j) + 1, i)))

__global__ void j0_global(int n, double *anew, const double *__restrict__ a) {
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long gy = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (gx < n - 2 && gy < n - 2) {
        int i = 1 + gx, j = 1 + gy;
#define A(y, x) a[(long long)(y) * n + (x)]
        anew[(long long)j * n + i] = JAC(A, j, i);
#undef A
    }
}

// J1: staged as emitted (div/mod per element, 64-bit per-dim and linear-address checks).
__global__ void j1_staged(int n_p0, double *anew, const double *__restrict__ A_p2) {
    __shared__ double A_tile_s1[10][34];
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long gy = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    int st_t_7 = ((int)threadIdx.x) + (((int)threadIdx.y) * 32);
    for (int st_e_8 = st_t_7; st_e_8 < 340; st_e_8 += 256) {
        if (((((((1ll + (((long long)((int)blockIdx.y)) * 8ll)) - 1ll) + ((long long)(st_e_8 / 34))) >= 0ll) && ((((1ll + (((long long)((int)blockIdx.y)) * 8ll)) - 1ll) + ((long long)(st_e_8 / 34))) <= (((1ll + ymax(0ll, ((long long)(n_p0 - 1)) - 1ll)) - 1ll) + 1ll))) && (((((1ll + (((long long)((int)blockIdx.x)) * 32ll)) - 1ll) + ((long long)(st_e_8 % 34))) >= 0ll) && ((((1ll + (((long long)((int)blockIdx.x)) * 32ll)) - 1ll) + ((long long)(st_e_8 % 34))) <= (((1ll + ymax(0ll, ((long long)(n_p0 - 1)) - 1ll)) - 1ll) + 1ll)))) && ((((((long long)n_p0) * (((1ll + (((long long)((int)blockIdx.y)) * 8ll)) - 1ll) + ((long long)(st_e_8 / 34)))) + (((1ll + (((long long)((int)blockIdx.x)) * 32ll)) - 1ll) + ((long long)(st_e_8 % 34)))) >= ((((long long)n_p0) + 1ll) + (-(long long)n_p0))) && (((((long long)n_p0) * (((1ll + (((long long)((int)blockIdx.y)) * 8ll)) - 1ll) + ((long long)(st_e_8 / 34)))) + (((1ll + (((long long)((int)blockIdx.x)) * 32ll)) - 1ll) + ((long long)(st_e_8 % 34)))) <= (((((long long)n_p0) * ((1ll + ymax(0ll, ((long long)(n_p0 - 1)) - 1ll)) - 1ll)) + ((1ll + ymax(0ll, ((long long)(n_p0 - 1)) - 1ll)) - 1ll)) + (long long)n_p0)))) {
            A_tile_s1[st_e_8 / 34][st_e_8 % 34] = A_p2[(((1ll + (((long long)((int)blockIdx.y)) * 8ll)) - 1ll) + ((long long)(st_e_8 / 34))) * ((long long)n_p0) + (((1ll + (((long long)((int)blockIdx.x)) * 32ll)) - 1ll) + ((long long)(st_e_8 % 34)))];
        }
    }
    __syncthreads();
    if (gx < n_p0 - 2 && gy < n_p0 - 2) {
#define T(y, x) A_tile_s1[y][x]
        anew[(long long)(1 + gy) * n_p0 + 1 + gx] = JAC(T, threadIdx.y + 1, threadIdx.x + 1);
#undef T
    }
}

// J2: staged, copy coordinates stepped incrementally (no div/mod), bounds hoisted.
__global__ void j2_staged_incremental(int n, double *anew, const double *__restrict__ a) {
    __shared__ double t[10][34];
    int oy = blockIdx.y * 8, ox = blockIdx.x * 32;  // tile origin: 1 + block start - 1
    int lin = threadIdx.x + threadIdx.y * 32;
    int cy = lin / 34, cx = lin % 34;  // once per thread
    for (; cy < 10;) {
        int gy = oy + cy, gx = ox + cx;
        if (gy < n && gx < n) t[cy][cx] = a[(long long)gy * n + gx];
        // + 256 = 7 rows and 18 columns
        cx += 18; cy += 7;
        if (cx >= 34) { cx -= 34; cy += 1; }
    }
    __syncthreads();
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long gy = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (gx < n - 2 && gy < n - 2) {
#define T(y, x) t[y][x]
        anew[(long long)(1 + gy) * n + 1 + gx] = JAC(T, threadIdx.y + 1, threadIdx.x + 1);
#undef T
    }
}

// J3: staged, 2-D copy loops over the tile (rows by threadIdx.y, columns by threadIdx.x).
__global__ void j3_staged_rows(int n, double *anew, const double *__restrict__ a) {
    __shared__ double t[10][34];
    int oy = blockIdx.y * 8, ox = blockIdx.x * 32;
    for (int cy = threadIdx.y; cy < 10; cy += 8)
        for (int cx = threadIdx.x; cx < 34; cx += 32) {
            int gy = oy + cy, gx = ox + cx;
            if (gy < n && gx < n) t[cy][cx] = a[(long long)gy * n + gx];
        }
    __syncthreads();
    long long gx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long gy = (long long)blockIdx.y * blockDim.y + threadIdx.y;
    if (gx < n - 2 && gy < n - 2) {
#define T(y, x) t[y][x]
        anew[(long long)(1 + gy) * n + 1 + gx] = JAC(T, threadIdx.y + 1, threadIdx.x + 1);
#undef T
    }
}

template <typename F>
float time_median(F launch) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 5; i++) launch();
    CHECK(cudaGetLastError());
    std::vector<float> ts;
    for (int i = 0; i < 21; i++) {
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        ts.push_back(ms);
    }
    CHECK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

static double max_rel_diff(const std::vector<double> &x, const std::vector<double> &y) {
    double m = 0;
    for (size_t i = 0; i < x.size(); i++) {
        double d = fabs(x[i] - y[i]) / fmax(1e-300, fabs(y[i]));
        if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
        if (!(x[i] == y[i])) m = fmax(m, d);
    }
    return m;
}

int main(int argc, char **argv) {
    // `steps`: the example's own initial data (a step of ones in zeros) instead of random values.
    bool steps = argc > 1 && std::string(argv[1]) == "steps";
    // ---- wide stencil ----
    {
        const int n = 1 << 26;
        const double r = 0.15;
        std::vector<double> h(n);
        srand(7);
        for (int i = 0; i < n; i++) h[i] = steps ? ((i > n / 3 && i < 2 * n / 3) ? 1.0 : 0.0) : rand() / (double)RAND_MAX;
        double *u, *un;
        CHECK(cudaMalloc(&u, n * 8ll));
        CHECK(cudaMalloc(&un, n * 8ll));
        CHECK(cudaMemcpy(u, h.data(), n * 8ll, cudaMemcpyHostToDevice));
        std::vector<double> want(n), got(n);
        auto poison = [&] { CHECK(cudaMemset(un, 0xff, n * 8ll)); };
        int blocks = (n - 16 + 255) / 256;
        poison();
        w0_global<<<blocks, 256>>>(n, un, u, r);
        CHECK(cudaMemcpy(want.data(), un, n * 8ll, cudaMemcpyDeviceToHost));
        double bytes = 16.0 * (n - 16);
        struct V { const char *name; std::function<void()> f; bool exact; };
        std::vector<V> vs = {
            {"W0 global (emitted)", [&] { w0_global<<<blocks, 256>>>(n, un, u, r); }, true},
            {"W1 staged (emitted)", [&] { w1_staged<<<blocks, 256>>>(n, un, u, r); }, true},
            {"W2 staged, hoisted bounds", [&] { w2_staged_hoisted<<<blocks, 256>>>(n, un, u, r); }, true},
            {"W3 global, no divides (diagnostic)", [&] { w3_global_nodiv<<<blocks, 256>>>(n, un, u, r); }, false},
            {"W4 staged, 2 outputs/thread", [&] { w4_staged_multi<2><<<(n - 16 + 511) / 512, 256>>>(n, un, u, r); }, true},
            {"W4 staged, 4 outputs/thread", [&] { w4_staged_multi<4><<<(n - 16 + 1023) / 1024, 256>>>(n, un, u, r); }, true},
            {"W4 staged, 8 outputs/thread", [&] { w4_staged_multi<8><<<(n - 16 + 2047) / 2048, 256>>>(n, un, u, r); }, true},
            {"W5 global, 4 outputs/thread", [&] { w5_global_multi<4><<<(n - 16 + 1023) / 1024, 256>>>(n, un, u, r); }, true},
        };
        printf("| wide stencil r=8, n=2^26, %s data |", steps ? "step" : "random");
        printf(" ms | GB/s | max rel diff vs W0 |\n|---|---:|---:|---:|\n");
        for (auto &v : vs) {
            poison();
            v.f();
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(got.data(), un, n * 8ll, cudaMemcpyDeviceToHost));
            double d = max_rel_diff(std::vector<double>(got.begin() + 8, got.end() - 8), std::vector<double>(want.begin() + 8, want.end() - 8));
            float ms = time_median(v.f);
            printf("| %s | %.4f | %.0f | %.1e%s |\n", v.name, ms, bytes / ms * 1e-6, d, (v.exact && d != 0) ? " MISMATCH" : "");
        }
        CHECK(cudaFree(u));
        CHECK(cudaFree(un));
    }
    // ---- jacobi 2-D ----
    {
        const int n = 8192;
        long long nn = (long long)n * n;
        std::vector<double> h(nn);
        for (auto &v : h) v = rand() / (double)RAND_MAX;
        double *a, *an;
        CHECK(cudaMalloc(&a, nn * 8));
        CHECK(cudaMalloc(&an, nn * 8));
        CHECK(cudaMemcpy(a, h.data(), nn * 8, cudaMemcpyHostToDevice));
        std::vector<double> want(nn), got(nn);
        dim3 blk(32, 8), grd((n - 2 + 31) / 32, (n - 2 + 7) / 8);
        CHECK(cudaMemset(an, 0, nn * 8));
        j0_global<<<grd, blk>>>(n, an, a);
        CHECK(cudaMemcpy(want.data(), an, nn * 8, cudaMemcpyDeviceToHost));
        double bytes = 16.0 * (n - 2) * (double)(n - 2);
        struct V { const char *name; std::function<void()> f; };
        std::vector<V> vs = {
            {"J0 global (emitted)", [&] { j0_global<<<grd, blk>>>(n, an, a); }},
            {"J1 staged (emitted copy-in)", [&] { j1_staged<<<grd, blk>>>(n, an, a); }},
            {"J2 staged, incremental copy-in", [&] { j2_staged_incremental<<<grd, blk>>>(n, an, a); }},
            {"J3 staged, 2-D copy loops", [&] { j3_staged_rows<<<grd, blk>>>(n, an, a); }},
        };
        if (steps) return 0;
        printf("\n| jacobi 5-point, 8192^2 | ms | GB/s | max rel diff vs J0 |\n|---|---:|---:|---:|\n");
        for (auto &v : vs) {
            CHECK(cudaMemset(an, 0, nn * 8));
            v.f();
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(got.data(), an, nn * 8, cudaMemcpyDeviceToHost));
            double d = max_rel_diff(got, want);
            float ms = time_median(v.f);
            printf("| %s | %.4f | %.0f | %.1e%s |\n", v.name, ms, bytes / ms * 1e-6, d, d != 0 ? " MISMATCH" : "");
        }
    }
    return 0;
}
