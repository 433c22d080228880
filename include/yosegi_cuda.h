/* What a MESI-CUDA program (a `.cu` file) sees before its first line: the launch-shape types
 * of CUDA, for host code. Yosegi includes this header itself; kernels never see these
 * definitions (their built-in variables become loop indices, see the front end's `cuda`
 * module). */
#include <stdio.h>
#include <stdlib.h>

typedef struct { unsigned int x, y, z; } dim3;
typedef struct { unsigned int x, y, z; } uint3;

/* A launch's `<<<grid, block>>>` take a `dim3` or an integer (x, with y and z 1). */
static inline dim3 __yosegi_dim3_of_dim3(dim3 d) { return d; }
static inline dim3 __yosegi_dim3_of_uint(unsigned long long n) {
    dim3 d = { (unsigned int)n, 1u, 1u };
    return d;
}

/* The range of a kernel's threads that pass the bounds test it opens with. */
static inline long long __yosegi_max_ll(long long a, long long b) { return a > b ? a : b; }
static inline long long __yosegi_min_ll(long long a, long long b) { return a < b ? a : b; }

/* A kernel with __shared__ arrays or __syncthreads() was compiled for one block shape. */
static inline void __yosegi_cuda_block_mismatch(const char *kernel, dim3 block, unsigned x, unsigned y, unsigned z) {
    fprintf(stderr, "error: kernel `%s` was launched with blocks of %ux%ux%u threads, but it uses __shared__ or "
                    "__syncthreads() and was compiled for %ux%ux%u\n",
            kernel, block.x, block.y, block.z, x, y, z);
    exit(1);
}

/* A kernel that never reads an axis's index runs its threads along that axis as one. */
static inline void __yosegi_cuda_unused_axes(const char *kernel, const char *axes, unsigned long long threads) {
    fprintf(stderr, "error: kernel `%s` was launched with %llu threads along %s, but it never reads "
                    "threadIdx or blockIdx there; Yosegi runs one thread per index the kernel reads\n"
                    "help: launch it with 1 block of 1 thread along %s, or use the index\n",
            kernel, threads, axes, axes);
    exit(1);
}
