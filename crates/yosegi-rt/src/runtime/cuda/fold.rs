//! The fold kernels that finish reductions on the GPU: a grid kernel leaves one partial per
//! block, and instead of copying them all back and folding them on the host, one block of
//! [`FOLD_THREADS`] threads combines them and writes a single value, the only one the host
//! reads.
//!
//! The order of combination is fixed (thread `t` folds partials `t`, `t + N`, `t + 2N`, ...
//! in that order, N the block's threads, so that a warp's loads are coalesced; then a tree
//! in shared memory halves the threads' values), so a floating `+` gives the same bits at
//! every run, though not the bits of a left-to-right fold.

use crate::back::cuda::cuda_type;
use crate::ir::ReductionOp;
use crate::ir::ScalarType;

/// Threads of the fold kernel's one block (a power of two: the tree halves it). The most a
/// block may have: the fold runs between a time step's kernels, and its time is a thread's
/// run of loads (with 256 threads and batches of 8, the 65,000 partials of a Himeno XL
/// quarter took 85 us and the 260,000 of the whole grid 270 us; bench/NOTES.md, run 17).
pub const FOLD_THREADS: u32 = 1024;

/// Partials a thread loads before it combines them (in the same order as one at a time): a
/// thread's run is a chain of dependent loads otherwise, about 0.5 us each (120 us for the
/// Himeno XL quarter, run 16).
pub const FOLD_BATCH: u32 = 16;

/// The name of the fold kernel for `op` at `ty` (`yosegi_fold_add_double`).
pub fn fold_symbol(op: ReductionOp, ty: ScalarType) -> String {
    let op = match op {
        ReductionOp::Add => "add",
        ReductionOp::Mul => "mul",
        ReductionOp::Max => "max",
        ReductionOp::Min => "min",
        ReductionOp::BitAnd => "bitand",
        ReductionOp::BitOr => "bitor",
        ReductionOp::BitXor => "bitxor",
        ReductionOp::LogAnd => "and",
        ReductionOp::LogOr => "or",
    };
    format!("yosegi_fold_{op}_{}", cuda_type(ty).replace(' ', "_"))
}

/// `a op b` at type `ty`, as the grid kernels' block reductions combine (`fmax` for floating
/// max, the result converted back to `ty` where C promotes small integers).
fn combine(op: ReductionOp, ty: ScalarType, a: &str, b: &str) -> String {
    let t = cuda_type(ty);
    let f = if ty == ScalarType::F32 { "f" } else { "" };
    match op {
        ReductionOp::Add => format!("({t})({a} + {b})"),
        ReductionOp::Mul => format!("({t})({a} * {b})"),
        ReductionOp::Max if ty.is_float() => format!("fmax{f}({a}, {b})"),
        ReductionOp::Min if ty.is_float() => format!("fmin{f}({a}, {b})"),
        ReductionOp::Max => format!("({a} > {b} ? {a} : {b})"),
        ReductionOp::Min => format!("({a} < {b} ? {a} : {b})"),
        // Refused on floating types by lowering; the simulator keeps the left operand.
        ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor if ty.is_float() => a.to_string(),
        ReductionOp::BitAnd => format!("({t})({a} & {b})"),
        ReductionOp::BitOr => format!("({t})({a} | {b})"),
        ReductionOp::BitXor => format!("({t})({a} ^ {b})"),
        ReductionOp::LogAnd => format!("({t})(({a} != 0) && ({b} != 0))"),
        ReductionOp::LogOr => format!("({t})(({a} != 0) || ({b} != 0))"),
    }
}

/// CUDA C of the fold kernel: `out[0]` = the fold of `partials[0..count]` (`count >= 1`).
/// Threads past `count` hold no value (no identity is needed), and the tree only combines
/// slots below the number of threads that had one.
pub fn fold_kernel_source(op: ReductionOp, ty: ScalarType) -> String {
    let t = cuda_type(ty);
    let name = fold_symbol(op, ty);
    let n = FOLD_THREADS;
    let step = combine(op, ty, "acc", "v[u]");
    let tree = combine(op, ty, "tree[t]", "tree[t + s]");
    format!(
        "// Finishes a reduction: the fold of one partial per block of a grid kernel.\n\
         extern \"C\" __global__ void __launch_bounds__({n}) {name}(const {t} *__restrict__ partials, unsigned long long count, {t} *__restrict__ out) {{\n\
         \x20   __shared__ {t} tree[{n}];\n\
         \x20   const unsigned int t = threadIdx.x;\n\
         \x20   const unsigned int active = count < {n} ? (unsigned int)count : {n};\n\
         \x20   if (t < active) {{\n\
         \x20       {t} acc = partials[t];\n\
         \x20       for (unsigned long long i = t + {n}; i < count; i += {batch} * {n}) {{\n\
         \x20           {t} v[{batch}];\n\
         \x20           #pragma unroll\n\
         \x20           for (unsigned int u = 0; u < {batch}; u++) if (i + u * {n} < count) v[u] = partials[i + u * {n}];\n\
         \x20           #pragma unroll\n\
         \x20           for (unsigned int u = 0; u < {batch}; u++) if (i + u * {n} < count) acc = {step};\n\
         \x20       }}\n\
         \x20       tree[t] = acc;\n\
         \x20   }}\n\
         \x20   __syncthreads();\n\
         \x20   for (unsigned int s = {half}; s > 0; s >>= 1) {{\n\
         \x20       if (t < s && t + s < active) tree[t] = {tree};\n\
         \x20       __syncthreads();\n\
         \x20   }}\n\
         \x20   if (t == 0) out[0] = tree[0];\n\
         }}\n",
        half = n / 2,
        batch = FOLD_BATCH,
    )
}

/// The order in which the fold kernel combines `count` partials, run on the host: each
/// thread's strided run, then the tree. The tests compare it with the GPU's result bit for bit.
#[cfg(test)]
pub fn fold_in_kernel_order(values: &[u64], mut combine: impl FnMut(u64, u64) -> u64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let n = FOLD_THREADS as usize;
    let active = values.len().min(n);
    let mut tree: Vec<u64> =
        (0..active).map(|t| values[t..].iter().skip(n).step_by(n).fold(values[t], |acc, &v| combine(acc, v))).collect();
    let mut s = n / 2;
    while s > 0 {
        for t in 0..s {
            if t + s < active {
                tree[t] = combine(tree[t], tree[t + s]);
            }
        }
        s >>= 1;
    }
    Some(tree[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::value;

    #[test]
    fn every_partial_is_combined_once_whatever_the_count() {
        for count in [1usize, 2, 3, 255, 256, 257, 511, 1000, 4097, 100_003] {
            let values: Vec<u64> = (1..=count as u64).collect();
            let total = fold_in_kernel_order(&values, |a, b| a + b).expect("non-empty");
            assert_eq!(total, (count as u64) * (count as u64 + 1) / 2, "count {count}");
        }
        assert_eq!(fold_in_kernel_order(&[], |a, b| a + b), None);
    }

    #[test]
    fn floating_sums_in_kernel_order_are_close_to_the_sequential_fold() {
        let values: Vec<u64> = (0..5000).map(|i| ((i as f64).sqrt() * 0.1).to_bits()).collect();
        let add = |a: u64, b: u64| value::reduce(ReductionOp::Add, ScalarType::F64, a, b);
        let tree = f64::from_bits(fold_in_kernel_order(&values, add).expect("non-empty"));
        let sequential = f64::from_bits(values.iter().copied().fold(0f64.to_bits(), add));
        assert!((tree - sequential).abs() <= 1e-12 * sequential.abs(), "{tree} vs {sequential}");
    }

    #[test]
    fn the_source_combines_with_the_reduction_operator() {
        let sum = fold_kernel_source(ReductionOp::Add, ScalarType::F64);
        assert!(sum.contains("for (unsigned long long i = t + 1024; i < count; i += 16 * 1024) {"), "{sum}");
        assert!(sum.contains("if (i + u * 1024 < count) v[u] = partials[i + u * 1024];"), "{sum}");
        assert!(sum.contains("if (i + u * 1024 < count) acc = (double)(acc + v[u]);"), "{sum}");
        assert!(!sum.contains('\\'), "one C statement per line: {sum}");
        assert_eq!(sum.matches('{').count(), sum.matches('}').count(), "{sum}");
        let max = fold_kernel_source(ReductionOp::Max, ScalarType::F32);
        assert!(max.contains("void __launch_bounds__(1024) yosegi_fold_max_float(const float *__restrict__ partials"), "{max}");
        assert!(max.contains("acc = fmaxf(acc, v[u]);"), "{max}");
        assert!(max.contains("tree[t] = fmaxf(tree[t], tree[t + s]);"), "{max}");
        let xor = fold_kernel_source(ReductionOp::BitXor, ScalarType::U8);
        assert!(xor.contains("acc = (unsigned char)(acc ^ v[u]);"), "{xor}");
        let min = fold_kernel_source(ReductionOp::Min, ScalarType::I64);
        assert!(min.contains("(acc < v[u] ? acc : v[u])"), "{min}");
        assert_ne!(fold_symbol(ReductionOp::Add, ScalarType::F64), fold_symbol(ReductionOp::Add, ScalarType::F32));
    }
}
