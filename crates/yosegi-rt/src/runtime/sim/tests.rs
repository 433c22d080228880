//! Simulator tests: grid kernels built by hand, run on `SimDevice`, checked for results,
//! C semantics, faults and counters.

use super::*;
use crate::diag::Span;
use crate::ir::{ArrayRef, AtomicOp, BinaryOp, Expr, GridKernel, Handle, Module, ParamValue, ScalarType, Stmt};
use crate::runtime::testing::{GridBuilder, f32_bytes, f32_values, i32_values};

enum Arg {
    Int(i64),
    Array(Vec<u8>),
}

/// Runs `kernel` with host arrays copied in and back; returns the arrays and the outcome.
fn run(kernel: GridKernel, args: Vec<Arg>) -> (Vec<Vec<u8>>, Result<LaunchOutcome, KernelFault>) {
    let mut module = Module::default();
    module.grid_kernels.append(kernel);
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let mut device = SimDevice::new();
    let mut params = Vec::new();
    let mut allocs = Vec::new();
    for arg in &args {
        match arg {
            Arg::Int(i) => params.push(DeviceParam::Value(ParamValue::Int(*i))),
            Arg::Array(bytes) => {
                let a = device.allocate(bytes.len() as u64);
                device.copy_to_device(a, 0, bytes);
                allocs.push((a, bytes.len()));
                params.push(DeviceParam::Array { alloc: a, offset: 0 });
            }
        }
    }
    let outcome = device.launch(&Launch::new(&module, kernel, params));
    let arrays = allocs
        .into_iter()
        .map(|(a, len)| {
            let mut out = vec![0; len];
            device.copy_to_host(a, 0, &mut out);
            out
        })
        .collect();
    (arrays, outcome)
}

fn load_span() -> Span {
    Span::new(0, 40, 44)
}

#[test]
fn vector_add_with_a_partial_last_block() {
    let n = 1000;
    let mut g = GridBuilder::new("vadd", [128, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let b = g.array_param("b", ScalarType::F32, &[]);
    let c = g.array_param("c", ScalarType::F32, &[]);
    let (i, guard) = g.one_thread_per_point(np);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, load_span());
    let lb = g.load(ArrayRef::Param(b), &[i], ScalarType::F32, load_span());
    let s = g.bin(BinaryOp::Add, la, lb);
    let store = g.store(ArrayRef::Param(c), &[i], s);
    let kernel = g.finish(vec![Stmt::If { cond: guard, then: vec![store], otherwise: vec![] }]);
    let av: Vec<f32> = (0..n).map(|x| x as f32).collect();
    let bv: Vec<f32> = (0..n).map(|x| 0.5 * x as f32).collect();
    let (arrays, outcome) = run(
        kernel,
        vec![Arg::Int(n as i64), Arg::Array(f32_bytes(&av)), Arg::Array(f32_bytes(&bv)), Arg::Array(vec![0; 4 * n])],
    );
    let outcome = outcome.expect("no fault");
    let cv = f32_values(&arrays[2]);
    assert!(cv.iter().enumerate().all(|(k, &v)| v == 1.5 * k as f32));
    assert_eq!(outcome.counters.global_loads, 2 * n as u64);
    assert_eq!(outcome.counters.global_stores, n as u64);
}

#[test]
fn shared_memory_tree_reduction_writes_partials() {
    let n = 300i64;
    let mut g = GridBuilder::new("sum", [64, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::I32, &[]);
    let s = g.shared("s", ScalarType::I32, &[64]);
    let red = g.reduction(crate::ir::ReductionOp::Add, ScalarType::I32, 0);
    let nv = g.param(np);
    let k64 = g.int(64);
    let k63 = g.int(63);
    let padded = g.bin(BinaryOp::Add, nv, k63);
    let blocks = g.bin(BinaryOp::Div, padded, k64);
    g.grid_x(blocks);
    let i = g.global_id();
    let t = g.tid();
    let zero = g.int(0);
    let one = g.int(1);
    let guard = g.bin(BinaryOp::Lt, i, nv);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::I32, load_span());
    let value = g.body.add_expr(
        crate::ir::ExprKind::Select { cond: guard, then: la, otherwise: zero },
        ScalarType::I32,
        Span::default(),
    );
    let init = g.store(ArrayRef::Shared(s), &[t], value);
    let stride = g.local("stride", ScalarType::I32);
    let k32 = g.int(32);
    let sv = g.get(stride);
    let cond = g.bin(BinaryOp::Gt, sv, zero);
    let step = g.bin(BinaryOp::Shr, sv, one);
    let active = g.bin(BinaryOp::Lt, t, sv);
    let t_plus = g.bin(BinaryOp::Add, t, sv);
    let mine = g.load(ArrayRef::Shared(s), &[t], ScalarType::I32, Span::default());
    let other = g.load(ArrayRef::Shared(s), &[t_plus], ScalarType::I32, Span::default());
    let both = g.bin(BinaryOp::Add, mine, other);
    let fold = g.store(ArrayRef::Shared(s), &[t], both);
    let is_first = g.bin(BinaryOp::Eq, t, zero);
    let s0 = g.load(ArrayRef::Shared(s), &[zero], ScalarType::I32, Span::default());
    let bid = g.body.add_expr(crate::ir::ExprKind::BlockIdx(crate::ir::Axis::X), ScalarType::I32, Span::default());
    let write_partial = g.store(ArrayRef::Partials(red), &[bid], s0);
    let kernel = g.finish(vec![
        init,
        Stmt::Barrier,
        Stmt::Assign { local: stride, value: k32 },
        Stmt::Loop {
            cond: Some(cond),
            test_first: true,
            body: vec![Stmt::If { cond: active, then: vec![fold], otherwise: vec![] }, Stmt::Barrier],
            continuing: vec![Stmt::Assign { local: stride, value: step }],
            range: None,
        },
        Stmt::If { cond: is_first, then: vec![write_partial], otherwise: vec![] },
    ]);
    let values: Vec<i32> = (0..n as i32).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let (_, outcome) = run(kernel, vec![Arg::Int(n), Arg::Array(bytes)]);
    let outcome = outcome.expect("no fault");
    let partials: Vec<i64> = outcome.partials[0].iter().map(|&r| r as i64).collect();
    let expected: Vec<i64> = (0..5).map(|b| (b * 64..((b + 1) * 64).min(n)).sum()).collect();
    assert_eq!(partials, expected);
    // One barrier after the initial store and one per tree level (32, 16, 8, 4, 2, 1).
    assert_eq!(outcome.counters.barriers, 5 * 7);
}

#[test]
fn f32_rounding_and_int_wrap() {
    let mut g = GridBuilder::new("sem", [1, 1, 1]);
    let f = g.array_param("f", ScalarType::F32, &[]);
    let i = g.array_param("i", ScalarType::I32, &[]);
    let big = g.float(16777216.0, ScalarType::F32);
    let one = g.float(1.0, ScalarType::F32);
    let sum = g.bin(BinaryOp::Add, big, one);
    let max = g.int(i32::MAX as i64);
    let k1 = g.int(1);
    let wrapped = g.bin(BinaryOp::Add, max, k1);
    let tenth = g.float(0.1, ScalarType::F64);
    let third = g.float(3.0, ScalarType::F64);
    let product = g.bin(BinaryOp::Mul, tenth, third);
    let narrowed = g.cast(product, ScalarType::F32);
    let zero = g.int(0);
    let k1i = g.int(1);
    let s1 = g.store(ArrayRef::Param(f), &[zero], sum);
    let s2 = g.store(ArrayRef::Param(i), &[zero], wrapped);
    let s3 = g.store(ArrayRef::Param(f), &[k1i], narrowed);
    let kernel = g.finish(vec![s1, s2, s3]);
    let (arrays, outcome) = run(kernel, vec![Arg::Array(vec![0; 8]), Arg::Array(vec![0; 4])]);
    outcome.expect("no fault");
    assert_eq!(f32_values(&arrays[0]), vec![16777216.0, (0.1f64 * 3.0) as f32]);
    assert_eq!(i32_values(&arrays[1]), vec![i32::MIN]);
}

#[test]
fn out_of_bounds_access_is_a_fault_naming_the_kernel_and_the_access() {
    let mut g = GridBuilder::new("oob_l7", [32, 1, 1]);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let out = g.array_param("out", ScalarType::F32, &[]);
    let i = g.tid();
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, load_span());
    let s = g.store(ArrayRef::Param(out), &[i], la);
    let kernel = g.finish(vec![s]);
    let (_, outcome) = run(kernel, vec![Arg::Array(vec![0; 40]), Arg::Array(vec![0; 128])]);
    let fault = outcome.expect_err("a[10..32] is out of bounds");
    assert_eq!(fault.kernel, "oob_l7");
    assert_eq!(fault.span, load_span());
    assert!(fault.message.contains("out-of-bounds read of `a` in thread 10"), "{}", fault.message);
}

#[test]
fn barrier_under_divergence_is_reported() {
    let mut g = GridBuilder::new("div", [32, 1, 1]);
    let t = g.tid();
    let k16 = g.int(16);
    let c = g.bin(BinaryOp::Lt, t, k16);
    let kernel = g.finish(vec![Stmt::If { cond: c, then: vec![Stmt::Barrier], otherwise: vec![] }]);
    let (_, outcome) = run(kernel, vec![]);
    let fault = outcome.expect_err("divergent barrier");
    assert!(fault.message.contains("barrier reached by 16 of the 32 threads"), "{}", fault.message);
}

#[test]
fn integer_division_by_zero_is_a_fault() {
    let mut g = GridBuilder::new("divzero", [4, 1, 1]);
    let out = g.array_param("out", ScalarType::I32, &[]);
    let t = g.tid();
    let k1 = g.int(1);
    let k3 = g.int(3);
    let m = g.bin(BinaryOp::Rem, t, k3);
    let q = g.bin(BinaryOp::Div, k1, m);
    let s = g.store(ArrayRef::Param(out), &[t], q);
    let kernel = g.finish(vec![s]);
    let (_, outcome) = run(kernel, vec![Arg::Array(vec![0; 16])]);
    assert!(outcome.expect_err("1 / 0").message.contains("division by zero"));
}

/// A one-warp kernel loading `a[tid * stride]` (f32) into a local.
fn load_transactions(stride: i64) -> u64 {
    let mut g = GridBuilder::new("ld", [32, 1, 1]);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let x = g.local("x", ScalarType::F32);
    let t = g.tid();
    let k = g.int(stride);
    let idx = g.bin(BinaryOp::Mul, t, k);
    let la = g.load(ArrayRef::Param(a), &[idx], ScalarType::F32, Span::default());
    let kernel = g.finish(vec![Stmt::Assign { local: x, value: la }]);
    let (_, outcome) = run(kernel, vec![Arg::Array(vec![0; 4 * 32 * 32])]);
    outcome.expect("no fault").counters.global_transactions
}

#[test]
fn global_transactions_count_distinct_sectors() {
    assert_eq!(load_transactions(1), 4);
    assert_eq!(load_transactions(32), 32);
    assert_eq!(load_transactions(2), 8);
}

/// Degree of `s[tid][0] = 1` on `float s[32][columns]`.
fn column_store_degree(columns: u32) -> (u64, u64) {
    let mut g = GridBuilder::new("bank", [32, 1, 1]);
    let s = g.shared("s", ScalarType::F32, &[32, columns]);
    let t = g.tid();
    let zero = g.int(0);
    let one = g.float(1.0, ScalarType::F32);
    let st = g.store(ArrayRef::Shared(s), &[t, zero], one);
    let kernel = g.finish(vec![st]);
    let (_, outcome) = run(kernel, vec![]);
    let c = outcome.expect("no fault").counters;
    (c.bank_conflict_max_degree, c.shared_accesses)
}

#[test]
fn bank_conflicts_of_column_accesses() {
    assert_eq!(column_store_degree(32), (32, 1));
    assert_eq!(column_store_degree(33), (1, 1));
}

/// (conflict degree, passes) of one warp's store `s[row(t)][col(t)] = 1` on `double s[32][32]`.
fn double_store_passes(row: impl Fn(&mut GridBuilder, Handle<Expr>) -> Handle<Expr>, col: impl Fn(&mut GridBuilder, Handle<Expr>) -> Handle<Expr>) -> (u64, u64) {
    let mut g = GridBuilder::new("passes", [32, 1, 1]);
    let s = g.shared("s", ScalarType::F64, &[32, 32]);
    let t = g.tid();
    let r = row(&mut g, t);
    let c = col(&mut g, t);
    let one = g.float(1.0, ScalarType::F64);
    let st = g.store(ArrayRef::Shared(s), &[r, c], one);
    let (_, outcome) = run(g.finish(vec![st]), vec![]);
    let counters = outcome.expect("no fault").counters;
    assert_eq!(counters.shared_accesses, 1);
    (counters.bank_conflict_max_degree, counters.shared_wavefronts)
}

#[test]
fn a_warps_doubles_take_a_pass_per_128_bytes_and_a_broadcast_one() {
    let zero = |g: &mut GridBuilder, _: Handle<Expr>| g.int(0);
    let same = |_: &mut GridBuilder, t: Handle<Expr>| t;
    // A row: 256 bytes, no half-warp conflict, two passes.
    assert_eq!(double_store_passes(zero, same), (1, 2));
    // One element for every lane: one pass.
    assert_eq!(double_store_passes(zero, zero), (1, 1));
    // A column of 32 doubles a row apart (256 bytes): every lane in banks 0 and 1.
    assert_eq!(double_store_passes(same, zero), (16, 32));
}

#[test]
fn atomics_from_many_blocks_give_the_exact_sum() {
    let mut g = GridBuilder::new("count", [128, 1, 1]);
    let counter = g.array_param("counter", ScalarType::I32, &[]);
    let total = g.array_param("total", ScalarType::F64, &[]);
    let blocks = g.int(64);
    g.grid_x(blocks);
    let zero = g.int(0);
    let one = g.int(1);
    let half = g.float(0.5, ScalarType::F64);
    let kernel = g.finish(vec![
        Stmt::Atomic {
            op: AtomicOp::Add,
            array: ArrayRef::Param(counter),
            indices: vec![zero],
            value: one,
            capture: None,
            span: Span::default(),
        },
        Stmt::Atomic {
            op: AtomicOp::Add,
            array: ArrayRef::Param(total),
            indices: vec![zero],
            value: half,
            capture: None,
            span: Span::default(),
        },
    ]);
    let (arrays, outcome) = run(kernel, vec![Arg::Array(vec![0; 4]), Arg::Array(vec![0; 8])]);
    outcome.expect("no fault");
    assert_eq!(i32_values(&arrays[0]), vec![64 * 128]);
    assert_eq!(f64::from_le_bytes(arrays[1].clone().try_into().expect("8 bytes")), 64.0 * 128.0 * 0.5);
}

#[test]
fn short_circuit_guards_loads_and_loops_retire_lanes() {
    // out[t] = (t > 0 && a[t-1] > 0) ? 1 : 0 over a 4-element `a`; then a per-lane loop that
    // breaks at t: out[t] += number of iterations (= t).
    let mut g = GridBuilder::new("guard", [4, 1, 1]);
    let a = g.array_param("a", ScalarType::I32, &[]);
    let out = g.array_param("out", ScalarType::I32, &[]);
    let t = g.tid();
    let zero = g.int(0);
    let one = g.int(1);
    let pos = g.bin(BinaryOp::Gt, t, zero);
    let tm1 = g.bin(BinaryOp::Sub, t, one);
    let prev = g.load(ArrayRef::Param(a), &[tm1], ScalarType::I32, load_span());
    let prev_pos = g.bin(BinaryOp::Gt, prev, zero);
    let both = g.bin(BinaryOp::LogAnd, pos, prev_pos);
    let flag = g.cast(both, ScalarType::I32);
    let k = g.local("k", ScalarType::I32);
    let kv = g.get(k);
    let done = g.bin(BinaryOp::Ge, kv, t);
    let inc = g.bin(BinaryOp::Add, kv, one);
    let sum = g.bin(BinaryOp::Add, flag, kv);
    let st = g.store(ArrayRef::Param(out), &[t], sum);
    let kernel = g.finish(vec![
        Stmt::Assign { local: k, value: zero },
        Stmt::Loop {
            cond: None,
            test_first: true,
            body: vec![Stmt::If { cond: done, then: vec![Stmt::Break], otherwise: vec![] }],
            continuing: vec![Stmt::Assign { local: k, value: inc }],
            range: None,
        },
        st,
    ]);
    let a_values: Vec<u8> = [5i32, 0, 7, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (arrays, outcome) = run(kernel, vec![Arg::Array(a_values), Arg::Array(vec![0; 16])]);
    outcome.expect("the guarded load never reads a[-1]");
    assert_eq!(i32_values(&arrays[1]), vec![0, 2, 2, 4]);
}

/// A 2-D Jacobi step on an `n x n` grid of doubles: `b[i][j]` = mean of `a`'s four neighbours
/// inside the boundary.
fn jacobi_kernel(n: i64) -> GridKernel {
    use crate::ir::{Axis, ExprKind};
    let mut g = GridBuilder::new("jacobi", [16, 16, 1]);
    let a = g.array_param("a", ScalarType::F64, &[n]);
    let b = g.array_param("b", ScalarType::F64, &[n]);
    let blocks = g.int((n + 15) / 16);
    let one = g.int(1);
    g.grid_x(blocks);
    let idx = |g: &mut GridBuilder, axis: Axis| {
        let bi = g.body.add_expr(ExprKind::BlockIdx(axis), ScalarType::I32, Span::default());
        let ti = g.body.add_expr(ExprKind::ThreadIdx(axis), ScalarType::I32, Span::default());
        let k16 = g.int(16);
        let base = g.bin(BinaryOp::Mul, bi, k16);
        g.bin(BinaryOp::Add, base, ti)
    };
    let i = idx(&mut g, Axis::Y);
    let j = idx(&mut g, Axis::X);
    let last = g.int(n - 1);
    let c1 = g.bin(BinaryOp::Ge, i, one);
    let c2 = g.bin(BinaryOp::Lt, i, last);
    let c3 = g.bin(BinaryOp::Ge, j, one);
    let c4 = g.bin(BinaryOp::Lt, j, last);
    let c12 = g.bin(BinaryOp::LogAnd, c1, c2);
    let c34 = g.bin(BinaryOp::LogAnd, c3, c4);
    let inside = g.bin(BinaryOp::LogAnd, c12, c34);
    let im1 = g.bin(BinaryOp::Sub, i, one);
    let ip1 = g.bin(BinaryOp::Add, i, one);
    let jm1 = g.bin(BinaryOp::Sub, j, one);
    let jp1 = g.bin(BinaryOp::Add, j, one);
    let up = g.load(ArrayRef::Param(a), &[im1, j], ScalarType::F64, Span::default());
    let down = g.load(ArrayRef::Param(a), &[ip1, j], ScalarType::F64, Span::default());
    let left = g.load(ArrayRef::Param(a), &[i, jm1], ScalarType::F64, Span::default());
    let right = g.load(ArrayRef::Param(a), &[i, jp1], ScalarType::F64, Span::default());
    let s1 = g.bin(BinaryOp::Add, up, down);
    let s2 = g.bin(BinaryOp::Add, s1, left);
    let s3 = g.bin(BinaryOp::Add, s2, right);
    let quarter = g.float(0.25, ScalarType::F64);
    let mean = g.bin(BinaryOp::Mul, quarter, s3);
    let st = g.store(ArrayRef::Param(b), &[i, j], mean);
    let rows = g.int((n + 15) / 16);
    let mut kernel = g.finish(vec![Stmt::If { cond: inside, then: vec![st], otherwise: vec![] }]);
    kernel.launch.grid[1] = rows;
    kernel
}

/// Runs `steps` Jacobi steps on the simulator; returns the final grid and the time taken.
fn jacobi_on_sim(n: usize, steps: usize) -> (Vec<f64>, std::time::Duration) {
    let mut module = Module::default();
    let kernel = module.grid_kernels.append(jacobi_kernel(n as i64));
    let kernel = &module.grid_kernels[kernel];
    let init: Vec<f64> = (0..n * n).map(|k| if k < n { 1.0 } else { (k % 7) as f64 * 0.1 }).collect();
    let bytes: Vec<u8> = init.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut device = SimDevice::new();
    let x = device.allocate(bytes.len() as u64);
    let y = device.allocate(bytes.len() as u64);
    device.copy_to_device(x, 0, &bytes);
    device.copy_to_device(y, 0, &bytes);
    let started = std::time::Instant::now();
    let (mut from, mut to) = (x, y);
    for _ in 0..steps {
        let params = vec![DeviceParam::Array { alloc: from, offset: 0 }, DeviceParam::Array { alloc: to, offset: 0 }];
        device.launch(&Launch::new(&module, kernel, params)).expect("no fault");
        std::mem::swap(&mut from, &mut to);
    }
    let elapsed = started.elapsed();
    let mut out = vec![0u8; bytes.len()];
    device.copy_to_host(from, 0, &mut out);
    (out.chunks(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect(), elapsed)
}

fn jacobi_on_host(n: usize, steps: usize) -> Vec<f64> {
    let mut a: Vec<f64> = (0..n * n).map(|k| if k < n { 1.0 } else { (k % 7) as f64 * 0.1 }).collect();
    let mut b = a.clone();
    for _ in 0..steps {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
            }
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

#[test]
fn jacobi_matches_the_host_computation() {
    let (n, steps) = (40, 5);
    let (sim, _) = jacobi_on_sim(n, steps);
    assert_eq!(sim, jacobi_on_host(n, steps));
}

/// The speed target is 100 steps of 512x512 in a few seconds in a release build: run with
/// `YOSEGI_SIM_BENCH=1 cargo test --release --lib jacobi_speed -- --nocapture`. Without the
/// variable a small size keeps the debug test suite fast.
#[test]
fn jacobi_speed() {
    let full = std::env::var_os("YOSEGI_SIM_BENCH").is_some();
    let (n, steps) = if full { (512, 100) } else { (64, 2) };
    let (sim, elapsed) = jacobi_on_sim(n, steps);
    assert_eq!(sim, jacobi_on_host(n, steps));
    if full {
        eprintln!("jacobi {n}x{n}, {steps} steps: {:.2} s", elapsed.as_secs_f64());
        assert!(elapsed.as_secs_f64() < 10.0);
    }
}

#[test]
fn device_function_returns_early_per_lane_and_local_arrays_are_per_thread() {
    use crate::ir::{ExprKind, Function, Local, LocalKind};
    // int isqrt_ceil(int x) { int k = 0; while (1) { if (k * k >= x) return k; k = k + 1; } }
    let mut f = crate::ir::Body::default();
    let x = f.locals.append(Local {
        name: "x".into(),
        ty: ScalarType::I32,
        array_dims: None,
        kind: LocalKind::Var,
        span: Span::default(),
    });
    let k = f.locals.append(Local {
        name: "k".into(),
        ty: ScalarType::I32,
        array_dims: None,
        kind: LocalKind::Var,
        span: Span::default(),
    });
    let zero = f.add_expr(ExprKind::ConstInt(0), ScalarType::I32, Span::default());
    let one = f.add_expr(ExprKind::ConstInt(1), ScalarType::I32, Span::default());
    let kv = f.add_expr(ExprKind::Local(k), ScalarType::I32, Span::default());
    let xv = f.add_expr(ExprKind::Local(x), ScalarType::I32, Span::default());
    let kk = f.add_expr(ExprKind::Binary { op: BinaryOp::Mul, lhs: kv, rhs: kv }, ScalarType::I32, Span::default());
    let done = f.add_expr(ExprKind::Binary { op: BinaryOp::Ge, lhs: kk, rhs: xv }, ScalarType::Bool, Span::default());
    let next = f.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: kv, rhs: one }, ScalarType::I32, Span::default());
    f.block = vec![
        Stmt::Assign { local: k, value: zero },
        Stmt::Loop {
            cond: None,
            test_first: true,
            body: vec![
                Stmt::If { cond: done, then: vec![Stmt::Return(Some(kv))], otherwise: vec![] },
                Stmt::Assign { local: k, value: next },
            ],
            continuing: vec![],
            range: None,
        },
    ];
    let mut module = Module::default();
    let func = module.functions.append(Function {
        name: "isqrt_ceil".into(),
        params: vec![x],
        result: Some(ScalarType::I32),
        body: f,
        span: Span::default(),
    });
    // tmp[2] per thread: tmp[0] = f(t), tmp[1] = t; out[t] = tmp[0] * 100 + tmp[1].
    let mut g = GridBuilder::new("calls", [32, 1, 1]);
    let out = g.array_param("out", ScalarType::I32, &[]);
    let tmp = g.body.locals.append(Local {
        name: "tmp".into(),
        ty: ScalarType::I32,
        array_dims: Some(vec![2]),
        kind: LocalKind::Private,
        span: Span::default(),
    });
    let t = g.tid();
    let zero = g.int(0);
    let one = g.int(1);
    let call = g.body.add_expr(ExprKind::Call { func, args: vec![t] }, ScalarType::I32, Span::default());
    let s0 = g.store(ArrayRef::Local(tmp), &[zero], call);
    let s1 = g.store(ArrayRef::Local(tmp), &[one], t);
    let t0 = g.load(ArrayRef::Local(tmp), &[zero], ScalarType::I32, Span::default());
    let t1 = g.load(ArrayRef::Local(tmp), &[one], ScalarType::I32, Span::default());
    let hundred = g.int(100);
    let scaled = g.bin(BinaryOp::Mul, t0, hundred);
    let combined = g.bin(BinaryOp::Add, scaled, t1);
    let st = g.store(ArrayRef::Param(out), &[t], combined);
    let kernel = g.finish(vec![s0, s1, st]);
    let kernel = module.grid_kernels.append(kernel);
    let mut device = SimDevice::new();
    let buffer = device.allocate(4 * 32);
    let launch = Launch::new(&module, &module.grid_kernels[kernel], vec![DeviceParam::Array { alloc: buffer, offset: 0 }]);
    device.launch(&launch).expect("no fault");
    let mut bytes = vec![0; 4 * 32];
    device.copy_to_host(buffer, 0, &mut bytes);
    let expected: Vec<i32> = (0..32).map(|t: i32| (0..).find(|k: &i32| k * k >= t).unwrap() * 100 + t).collect();
    assert_eq!(i32_values(&bytes), expected);
}

/// `*(double *)(addr + 8 t) = 2 t` for the 4 threads: stores at device addresses the kernel
/// computes, found by the buffer that holds them.
#[test]
fn stores_at_computed_addresses_reach_the_buffer_there_and_fault_elsewhere() {
    let mut g = GridBuilder::new("addr_l3", [4, 1, 1]);
    let base = g.scalar_param("addr", ScalarType::U64);
    let bv = g.param(base);
    let t = g.tid();
    let t64 = g.cast(t, ScalarType::U64);
    let eight = g.body.add_expr(crate::ir::ExprKind::ConstInt(8), ScalarType::U64, Span::default());
    let offset = g.bin(BinaryOp::Mul, t64, eight);
    let address = g.bin(BinaryOp::Add, bv, offset);
    let tf = g.cast(t, ScalarType::F64);
    let two = g.float(2.0, ScalarType::F64);
    let value = g.bin(BinaryOp::Mul, tf, two);
    let mut st = g.store(ArrayRef::Address(ScalarType::F64), &[address], value);
    if let Stmt::Store { span, .. } = &mut st {
        *span = load_span();
    }
    let mut module = Module::default();
    module.grid_kernels.append(g.finish(vec![st]));
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let mut device = SimDevice::new();
    let other = device.allocate(64);
    let a = device.allocate(32);
    let start = device.address(a);
    let launch = |at: u64| Launch::new(&module, kernel, vec![DeviceParam::Value(ParamValue::Int(at as i64))]);
    device.launch(&launch(start)).expect("every store lies in `a`");
    let mut bytes = vec![0u8; 32];
    device.copy_to_host(a, 0, &mut bytes);
    let values: Vec<f64> = bytes.chunks(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    assert_eq!(values, vec![0.0, 2.0, 4.0, 6.0]);
    let mut untouched = vec![1u8; 64];
    device.copy_to_host(other, 0, &mut untouched);
    assert!(untouched.iter().all(|&b| b == 0), "the other buffer is left alone");
    // From the last element of `a` on, thread 1 stores past its end: in no buffer.
    let fault = device.launch(&launch(start + 24)).expect_err("past the end of `a`");
    assert_eq!(fault.span, load_span());
    assert!(fault.message.contains("thread 1 of block [0, 0, 0] accesses address"), "{}", fault.message);
    assert!(fault.message.contains("which is no device memory"), "{}", fault.message);
}

#[test]
fn two_simulators_never_hand_out_the_same_address() {
    // Several devices of one runtime (and the acc_api, which maps an address back to its
    // device's memory) need addresses unique across devices, as a GPU's unified addresses are.
    let (mut first, mut second) = (SimDevice::new(), SimDevice::new());
    let a = first.allocate(1000);
    let b = second.allocate(1000);
    let (at_a, at_b) = (first.address(a), second.address(b));
    assert!(at_a >= SIM_ADDRESS_BASE && at_b >= SIM_ADDRESS_BASE, "{at_a:#x} {at_b:#x}");
    assert!(at_a.abs_diff(at_b) >= SIM_ADDRESS_SPACE, "separate ranges: {at_a:#x} {at_b:#x}");
    let later = first.allocate(8);
    assert!(first.address(later) > at_a + 1000, "within a device, addresses follow one another");
    // The ranges lie above the base and below the end of the address space, and wrap around.
    assert!(SIM_ADDRESS_BASE.checked_add(SIM_ADDRESS_SPACES * SIM_ADDRESS_SPACE).is_some());
    let last = sim_address_space(SIM_ADDRESS_SPACES - 1);
    assert!(last.start > SIM_ADDRESS_BASE && last.end > last.start);
    assert_eq!(sim_address_space(SIM_ADDRESS_SPACES), sim_address_space(0));
    assert_eq!(sim_address_space(0).start, SIM_ADDRESS_BASE);
}

#[test]
fn a_simulator_that_used_up_its_addresses_starts_its_range_again() {
    let mut device = SimDevice::new();
    let start = device.address_space.start;
    device.next_address = device.address_space.end - 512;
    let a = device.allocate(200);
    assert_eq!(device.address(a), device.address_space.end - 512, "256 bytes and a gap fit");
    let b = device.allocate(200);
    assert_eq!(device.address(b), start, "no room left: from the start of the range");
}

#[test]
fn the_watchdog_stops_a_launch_that_never_ends() {
    // `for (;;) ;`: no condition and no statement, so only the loop's iterations tick.
    let g = GridBuilder::new("forever", [32, 1, 1]);
    let kernel = g.finish(vec![Stmt::Loop { cond: None, test_first: true, body: Vec::new(), continuing: Vec::new(), range: None }]);
    let mut module = Module::default();
    module.grid_kernels.append(kernel);
    let kernel = &module.grid_kernels[Handle::new(0)];
    let mut device = SimDevice { timeout: Some(Duration::from_millis(50)), ..SimDevice::new() };
    let fault = device.launch(&Launch::new(&module, kernel, Vec::new())).expect_err("the watchdog stops it");
    assert_eq!(fault.kernel, "forever");
    assert!(fault.message.contains("time limit of 0.05 s (YOSEGI_SIM_TIMEOUT)"), "{}", fault.message);
    assert!(fault.help.as_deref().is_some_and(|h| h.contains("YOSEGI_SIM_TIMEOUT=SECONDS")), "{:?}", fault.help);
    // A launch that ends is not stopped.
    let mut g = GridBuilder::new("short", [32, 1, 1]);
    let out = g.array_param("out", ScalarType::I32, &[]);
    let t = g.tid();
    let store = g.store(ArrayRef::Param(out), &[t], t);
    let short = g.finish(vec![store]);
    let mut module = Module::default();
    module.grid_kernels.append(short);
    let short = &module.grid_kernels[Handle::new(0)];
    let mut device = SimDevice { timeout: Some(Duration::from_secs(60)), ..SimDevice::new() };
    let a = device.allocate(4 * 32);
    device.launch(&Launch::new(&module, short, vec![DeviceParam::Array { alloc: a, offset: 0 }])).expect("no fault");
}

#[test]
fn the_watchdog_takes_a_positive_number_of_seconds() {
    assert_eq!(parse_timeout(""), Ok(None));
    assert_eq!(parse_timeout("  "), Ok(None));
    assert_eq!(parse_timeout("2"), Ok(Some(Duration::from_secs(2))));
    assert_eq!(parse_timeout(" 0.5 "), Ok(Some(Duration::from_millis(500))));
    for bad in ["0", "-1", "ten", "inf", "NaN", "1e99", "5s"] {
        let why = parse_timeout(bad).expect_err(bad);
        assert!(why.contains(&format!("YOSEGI_SIM_TIMEOUT is `{bad}`")) && why.contains("positive number of seconds"), "{why}");
    }
}
