//! Test helper shared by this crate's CUDA C tests and the `yosegi` crate's (which compile C
//! programs through the front end): a syntax and type check of emitted CUDA C without a GPU.

/// Plain C stand-ins for what CUDA provides, so that gcc can check that the emitted text is
/// syntactically valid and type-correct C (the atomics become expressions of the same shape).
const C_PRELUDE: &str = r#"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#define __global__
#define __device__
#define __shared__ static
#define __restrict__ restrict
struct yosegi_dim3 { unsigned int x, y, z; };
static const struct yosegi_dim3 threadIdx, blockIdx, blockDim, gridDim;
static void __syncthreads(void) {}
#define atomicAdd(p, v) (*(p) += (v))
#define atomicSub(p, v) (*(p) -= (v))
#define atomicMax(p, v) (*(p) < (v) ? (*(p) = (v)) : *(p))
#define atomicMin(p, v) (*(p) > (v) ? (*(p) = (v)) : *(p))
#define atomicAnd(p, v) (*(p) &= (v))
#define atomicOr(p, v) (*(p) |= (v))
#define atomicXor(p, v) (*(p) ^= (v))
#define atomicExch(p, v) (*(p) = (v))
#define atomicCAS(p, c, v) (*(p) == (c) ? (*(p) = (v), (c)) : *(p))
static float __uint_as_float(unsigned int x) { float f; memcpy(&f, &x, 4); return f; }
static unsigned int __float_as_uint(float f) { unsigned int x; memcpy(&x, &f, 4); return x; }
static double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
static long long __double_as_longlong(double f) { long long x; memcpy(&x, &f, 8); return x; }
static double __ull2double_rn(unsigned long long x) { return (double)x; }
static int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
"#;

/// C++ stand-ins with CUDA's own signatures: overload resolution then checks that every
/// atomic is called with pointer and operand types CUDA has (no `long long *` to
/// `atomicAdd`, which CUDA lacks).
const CXX_PRELUDE: &str = r#"
#include <cmath>
#include <cstdlib>
#define __global__
#define __device__
#define __shared__ static
struct yosegi_dim3 { unsigned int x, y, z; };
static const yosegi_dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
void __syncthreads();
int atomicAdd(int *, int); unsigned int atomicAdd(unsigned int *, unsigned int);
unsigned long long atomicAdd(unsigned long long *, unsigned long long);
float atomicAdd(float *, float); double atomicAdd(double *, double);
int atomicSub(int *, int); unsigned int atomicSub(unsigned int *, unsigned int);
int atomicMax(int *, int); unsigned int atomicMax(unsigned int *, unsigned int);
long long atomicMax(long long *, long long); unsigned long long atomicMax(unsigned long long *, unsigned long long);
int atomicMin(int *, int); unsigned int atomicMin(unsigned int *, unsigned int);
long long atomicMin(long long *, long long); unsigned long long atomicMin(unsigned long long *, unsigned long long);
int atomicAnd(int *, int); unsigned int atomicAnd(unsigned int *, unsigned int); unsigned long long atomicAnd(unsigned long long *, unsigned long long);
int atomicOr(int *, int); unsigned int atomicOr(unsigned int *, unsigned int); unsigned long long atomicOr(unsigned long long *, unsigned long long);
int atomicXor(int *, int); unsigned int atomicXor(unsigned int *, unsigned int); unsigned long long atomicXor(unsigned long long *, unsigned long long);
int atomicExch(int *, int); unsigned int atomicExch(unsigned int *, unsigned int);
unsigned long long atomicExch(unsigned long long *, unsigned long long); float atomicExch(float *, float);
int atomicCAS(int *, int, int); unsigned int atomicCAS(unsigned int *, unsigned int, unsigned int);
unsigned long long atomicCAS(unsigned long long *, unsigned long long, unsigned long long);
float __uint_as_float(unsigned int); unsigned int __float_as_uint(float);
double __longlong_as_double(long long); long long __double_as_longlong(double);
double __ull2double_rn(unsigned long long); int __clzll(long long);
"#;

fn tool_on_path(tool: &str) -> bool {
    std::process::Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// Compiles `cuda` with nvcc when it is on PATH; otherwise with gcc as C (after the prelude
/// and without `extern "C"`, which is C++) and, when g++ is there, as C++ against CUDA's
/// signatures. Panics with the compiler's messages and the numbered source on failure.
pub fn assert_compiles(cuda: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut checks: Vec<(String, Vec<String>, String)> = Vec::new();
    if tool_on_path("nvcc") {
        let path = dir.path().join("k.cu");
        std::fs::write(&path, cuda).expect("write");
        let args = vec!["-c", "-arch=sm_80", "-o", "/dev/null"].into_iter().map(String::from).collect::<Vec<_>>();
        let mut a = args;
        a.push(path.display().to_string());
        checks.push(("nvcc".into(), a, cuda.to_string()));
    } else {
        let c_text = format!("{C_PRELUDE}\n{}", cuda.replace("extern \"C\" ", ""));
        let path = dir.path().join("k.c");
        std::fs::write(&path, &c_text).expect("write");
        checks.push((
            "gcc".into(),
            vec!["-fsyntax-only".into(), "-std=c11".into(), "-Wall".into(), "-Werror=implicit-function-declaration".into(), "-Werror=int-conversion".into(), "-Werror=incompatible-pointer-types".into(), "-x".into(), "c".into(), path.display().to_string()],
            c_text,
        ));
        if tool_on_path("g++") {
            let cxx_text = format!("{CXX_PRELUDE}\n{cuda}");
            let path = dir.path().join("k.cpp");
            std::fs::write(&path, &cxx_text).expect("write");
            checks.push((
                "g++".into(),
                vec!["-fsyntax-only".into(), "-std=c++17".into(), "-x".into(), "c++".into(), path.display().to_string()],
                cxx_text,
            ));
        }
    }
    for (tool, args, text) in checks {
        let out = std::process::Command::new(&tool).args(&args).output().expect("run the compiler");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let numbered: String = text.lines().enumerate().map(|(i, l)| format!("{:4} {l}\n", i + 1)).collect();
        assert!(out.status.success(), "{tool} rejected the CUDA text:\n{stderr}\n{numbered}");
        // Warnings about unused variables are fine; anything else would hide a real mistake.
        for line in stderr.lines().filter(|l| l.contains("warning:")) {
            assert!(line.contains("unused") || line.contains("set but not used"), "{tool} warned: {line}\n{numbered}");
        }
    }
}
