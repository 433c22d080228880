use super::*;
use crate::diag::Span;
use crate::ir::{ArrayRef, AtomicOp, Axis, BinaryOp, ExprKind, Local, LocalKind, ReductionOp, ScalarType, Stmt};
use crate::runtime::testing::GridBuilder;
use super::testing::assert_compiles;

fn module_with(kernel: crate::ir::GridKernel) -> Module {
    let mut module = Module::default();
    module.grid_kernels.append(kernel);
    module
}

fn emit(module: &Module) -> String {
    let kernel = &module.grid_kernels[Handle::new(0)];
    grid_kernel_cuda(module, kernel)
}

pub(crate) fn vector_add() -> Module {
    let mut g = GridBuilder::new("vadd_l12", [128, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let b = g.array_param("b", ScalarType::F32, &[]);
    let c = g.array_param("c", ScalarType::F32, &[]);
    let (i, guard) = g.one_thread_per_point(np);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, Span::default());
    let lb = g.load(ArrayRef::Param(b), &[i], ScalarType::F32, Span::default());
    let s = g.bin(BinaryOp::Add, la, lb);
    let half = g.float(0.5, ScalarType::F32);
    let scaled = g.bin(BinaryOp::Mul, s, half);
    let store = g.store(ArrayRef::Param(c), &[i], scaled);
    let mut kernel = g.finish(vec![Stmt::If { cond: guard, then: vec![store], otherwise: vec![] }]);
    for p in [1, 2] {
        if let ParamKind::Array { read_only, restrict, .. } = &mut kernel.params[p].kind {
            *read_only = true;
            *restrict = true;
        }
    }
    module_with(kernel)
}

#[test]
fn vector_add_with_guard() {
    let module = vector_add();
    let text = emit(&module);
    insta::assert_snapshot!(text);
    assert!(text.contains("extern \"C\" __global__ void vadd_l12(int n_p0, const float *__restrict__ a_p1"));
    assert!(text.contains("c_p3[") && text.contains("0.5f"));
    assert_compiles(&text);
}

/// `b[i] = a[i] * 2` on `long double` arrays: the host's x87 format in memory, `double` values.
pub(crate) fn long_double_scale() -> Module {
    let mut g = GridBuilder::new("scale_l7", [128, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F80, &[]);
    let b = g.array_param("b", ScalarType::F80, &[]);
    let nv = g.param(np);
    g.grid_x(nv);
    let i = g.global_id();
    let guard = g.bin(BinaryOp::Lt, i, nv);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F64, Span::default());
    let two = g.float(2.0, ScalarType::F64);
    let scaled = g.bin(BinaryOp::Mul, la, two);
    let store = g.store(ArrayRef::Param(b), &[i], scaled);
    module_with(g.finish(vec![Stmt::If { cond: guard, then: vec![store], otherwise: vec![] }]))
}

#[test]
fn long_double_elements_are_converted_at_each_access() {
    let mut module = long_double_scale();
    let grid = module.grid_kernels[Handle::new(0)].clone();
    let source = crate::analysis::testing::kernel("scale", grid.params.clone(), vec![], crate::ir::Body::default());
    module.kernels.append(source);
    crate::valid::verify_module(&module).expect("loads and stores of F80 elements carry F64 values");
    let text = emit(&module);
    assert!(text.contains("typedef struct yosegi_f80"), "{text}");
    assert!(text.contains("const yosegi_f80 *a_p1, yosegi_f80 *b_p2"), "{text}");
    assert!(text.contains("= yosegi_f80_from_double(yosegi_f80_to_double(a_p1["), "{text}");
    // The struct comes before the kernel that names it, once.
    assert_eq!(text.matches("} yosegi_f80;").count(), 1);
    assert!(text.find("} yosegi_f80;") < text.find("__global__"));
    assert_compiles(&text);
}

/// The tree reduction the mapping pass writes: shared array, barriers, a halving loop whose
/// step runs in `continuing`, and thread 0 storing the block's partial.
pub(crate) fn block_reduction() -> Module {
    let mut g = GridBuilder::new("sum_l30", [64, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I64);
    let a = g.array_param("a", ScalarType::F64, &[]);
    let s = g.shared("red", ScalarType::F64, &[64]);
    let red = g.reduction(ReductionOp::Add, ScalarType::F64, 1);
    let acc = g.body.locals.append(Local {
        name: "sum".into(),
        ty: ScalarType::F64,
        array_dims: None,
        kind: LocalKind::Reduction(red),
        span: Span::default(),
    });
    let nv = g.param(np);
    let k64 = g.i64c(64);
    let k63 = g.i64c(63);
    let padded = g.bin(BinaryOp::Add, nv, k63);
    let blocks = g.bin(BinaryOp::Div, padded, k64);
    g.grid_x(blocks);
    let gid = g.global_id();
    let i = g.cast(gid, ScalarType::I64);
    let t = g.tid();
    let zero = g.int(0);
    let one = g.int(1);
    let guard = g.bin(BinaryOp::Lt, i, nv);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F64, Span::default());
    let accv = g.get(acc);
    let added = g.bin(BinaryOp::Add, accv, la);
    let init = g.store(ArrayRef::Shared(s), &[t], accv);
    let stride = g.local("stride", ScalarType::I32);
    let k32 = g.int(32);
    let sv = g.get(stride);
    let cond = g.bin(BinaryOp::Gt, sv, zero);
    let step = g.bin(BinaryOp::Shr, sv, one);
    let active = g.bin(BinaryOp::Lt, t, sv);
    let t_plus = g.bin(BinaryOp::Add, t, sv);
    let mine = g.load(ArrayRef::Shared(s), &[t], ScalarType::F64, Span::default());
    let other = g.load(ArrayRef::Shared(s), &[t_plus], ScalarType::F64, Span::default());
    let both = g.bin(BinaryOp::Add, mine, other);
    let fold = g.store(ArrayRef::Shared(s), &[t], both);
    let is_first = g.bin(BinaryOp::Eq, t, zero);
    let s0 = g.load(ArrayRef::Shared(s), &[zero], ScalarType::F64, Span::default());
    let bid = g.body.add_expr(ExprKind::BlockIdx(Axis::X), ScalarType::I32, Span::default());
    let write_partial = g.store(ArrayRef::Partials(red), &[bid], s0);
    let kernel = g.finish(vec![
        Stmt::If { cond: guard, then: vec![Stmt::Assign { local: acc, value: added }], otherwise: vec![] },
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
    module_with(kernel)
}

#[test]
fn block_reduction_with_shared_memory_and_barriers() {
    let module = block_reduction();
    let text = emit(&module);
    insta::assert_snapshot!(text);
    assert!(text.contains("__shared__ double red_s0[64];"));
    assert!(text.contains("double *__partials_0)"));
    // The accumulator starts at the identity of `+` (-0.0: adding it changes no value).
    assert!(text.contains("sum_0 = (-0.0);"));
    assert_eq!(text.matches("__syncthreads();").count(), 2);
    assert_compiles(&text);
}

/// `out[i][j] = 0.25 * (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1])` on an `n x m` mesh,
/// with `m` a param (the arrays' inner dimension) and a 2-D grid.
pub(crate) fn stencil() -> Module {
    let mut g = GridBuilder::new("jacobi_l40", [32, 8, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let mp = g.scalar_param("m", ScalarType::I32);
    let u = g.array_param("u", ScalarType::F64, &[]);
    let out = g.array_param("mesh->out", ScalarType::F64, &[]);
    let mdim = g.param(mp);
    let mdim64 = g.cast(mdim, ScalarType::I64);
    let nv = g.param(np);
    let mv = g.param(mp);
    let i = g.local("i", ScalarType::I32);
    let j = g.local("j", ScalarType::I32);
    let by = g.body.add_expr(ExprKind::BlockIdx(Axis::Y), ScalarType::I32, Span::default());
    let dy = g.body.add_expr(ExprKind::BlockDim(Axis::Y), ScalarType::I32, Span::default());
    let ty_ = g.body.add_expr(ExprKind::ThreadIdx(Axis::Y), ScalarType::I32, Span::default());
    let byd = g.bin(BinaryOp::Mul, by, dy);
    let row = g.bin(BinaryOp::Add, byd, ty_);
    let one = g.int(1);
    let row1 = g.bin(BinaryOp::Add, row, one);
    let col = g.global_id();
    let col1 = g.bin(BinaryOp::Add, col, one);
    let iv = g.get(i);
    let jv = g.get(j);
    let n1 = g.bin(BinaryOp::Sub, nv, one);
    let m1 = g.bin(BinaryOp::Sub, mv, one);
    let gi = g.bin(BinaryOp::Lt, iv, n1);
    let gj = g.bin(BinaryOp::Lt, jv, m1);
    let guard = g.bin(BinaryOp::LogAnd, gi, gj);
    let im = g.bin(BinaryOp::Sub, iv, one);
    let ip = g.bin(BinaryOp::Add, iv, one);
    let jm = g.bin(BinaryOp::Sub, jv, one);
    let jp = g.bin(BinaryOp::Add, jv, one);
    let n_ = g.load(ArrayRef::Param(u), &[im, jv], ScalarType::F64, Span::default());
    let s_ = g.load(ArrayRef::Param(u), &[ip, jv], ScalarType::F64, Span::default());
    let w_ = g.load(ArrayRef::Param(u), &[iv, jm], ScalarType::F64, Span::default());
    let e_ = g.load(ArrayRef::Param(u), &[iv, jp], ScalarType::F64, Span::default());
    let s1 = g.bin(BinaryOp::Add, n_, s_);
    let s2 = g.bin(BinaryOp::Add, s1, w_);
    let s3 = g.bin(BinaryOp::Add, s2, e_);
    let quarter = g.float(0.25, ScalarType::F64);
    let v = g.bin(BinaryOp::Mul, quarter, s3);
    let store = g.store(ArrayRef::Param(out), &[iv, jv], v);
    let mut kernel = g.finish(vec![
        Stmt::Assign { local: i, value: row1 },
        Stmt::Assign { local: j, value: col1 },
        Stmt::If { cond: guard, then: vec![store], otherwise: vec![] },
    ]);
    for p in [2, 3] {
        if let ParamKind::Array { dims, .. } = &mut kernel.params[p].kind {
            *dims = vec![None, Some(mdim64)];
        }
    }
    module_with(kernel)
}

#[test]
fn stencil_2d_linearises_with_the_param_dimension() {
    let module = stencil();
    let text = emit(&module);
    insta::assert_snapshot!(text);
    // Row-major in 64-bit arithmetic: `u[(i-1)*m + j]`.
    assert!(text.contains("u_p2[(long long)(i_0 - 1) * ((long long)m_p1) + (long long)j_1]"), "{text}");
    assert!(text.contains("double *mesh_out_p3"));
    assert_compiles(&text);
}

/// `#pragma acc atomic` on a histogram, plus the atomics CUDA lacks (float multiply, double
/// max, byte add) and a capture, which go through compare-and-swap helpers.
pub(crate) fn histogram() -> Module {
    let mut g = GridBuilder::new("hist_l55", [256, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let data = g.array_param("data", ScalarType::I32, &[]);
    let bins = g.array_param("bins", ScalarType::I32, &[]);
    let prod = g.array_param("prod", ScalarType::F32, &[]);
    let big = g.array_param("big", ScalarType::F64, &[]);
    let bytes = g.array_param("bytes", ScalarType::U8, &[]);
    let total = g.array_param("total", ScalarType::I64, &[]);
    let old = g.local("old", ScalarType::I32);
    let nv = g.param(np);
    let i = g.global_id();
    let guard = g.bin(BinaryOp::Lt, i, nv);
    let d = g.load(ArrayRef::Param(data), &[i], ScalarType::I32, Span::default());
    let k16 = g.int(16);
    let bin = g.bin(BinaryOp::Rem, d, k16);
    let one = g.int(1);
    let zero = g.int(0);
    let onef = g.float(1.0001, ScalarType::F32);
    let dd = g.cast(d, ScalarType::F64);
    let one_u8 = g.body.add_expr(ExprKind::ConstInt(1), ScalarType::U8, Span::default());
    let d64 = g.cast(d, ScalarType::I64);
    let atomic = |op, array, indices: Vec<_>, value, capture| Stmt::Atomic { op, array, indices, value, capture, span: Span::default() };
    let kernel = g.finish(vec![Stmt::If {
        cond: guard,
        then: vec![
            atomic(AtomicOp::Add, ArrayRef::Param(bins), vec![bin], one, Some(old)),
            atomic(AtomicOp::Mul, ArrayRef::Param(prod), vec![zero], onef, None),
            atomic(AtomicOp::Max, ArrayRef::Param(big), vec![zero], dd, None),
            atomic(AtomicOp::Add, ArrayRef::Param(bytes), vec![bin], one_u8, None),
            atomic(AtomicOp::Add, ArrayRef::Param(total), vec![zero], d64, None),
            atomic(AtomicOp::Write, ArrayRef::Param(big), vec![one], dd, None),
        ],
        otherwise: vec![],
    }]);
    module_with(kernel)
}

#[test]
fn atomic_histogram() {
    let module = histogram();
    let text = emit(&module);
    insta::assert_snapshot!(text);
    assert!(text.contains("old_0 = atomicAdd(&bins_p2[data_p1["), "{text}");
    assert!(text.contains("yosegi_atomic_mul_f32(&prod_p3[0], 1.0001f);"), "{text}");
    assert!(text.contains("yosegi_atomic_max_f64(&big_p4[0], ((double)data_p1["), "{text}");
    assert!(text.contains("yosegi_atomic_add_u8(&bytes_p5["), "{text}");
    assert!(text.contains("\n        atomicAdd((unsigned long long *)&total_p6[0], (unsigned long long)((long long)data_p1["), "{text}");
    assert!(text.contains("\n        atomicExch((unsigned long long *)&big_p4[1], (unsigned long long)__double_as_longlong("), "{text}");
    assert_compiles(&text);
}

/// The OpenACC 3.3 atomic forms CUDA has no instruction for (division, shifts, reversed
/// operands, logical and/or) and updates whose operand is wider than the element (C computes
/// in the wider type): all compare-and-swap loops on the element's bits, with the operand in
/// its own type, returning the old value for a capture.
#[test]
fn atomic_forms_without_instructions_use_compare_and_swap() {
    let mut g = GridBuilder::new("forms_l9", [128, 1, 1]);
    let ints = g.array_param("ints", ScalarType::I32, &[]);
    let longs = g.array_param("longs", ScalarType::I64, &[]);
    let floats = g.array_param("floats", ScalarType::F32, &[]);
    let bytes = g.array_param("bytes", ScalarType::I8, &[]);
    let units = g.array_param("units", ScalarType::U32, &[]);
    let doubles = g.array_param("doubles", ScalarType::F64, &[]);
    let old_l = g.local("old_l", ScalarType::I64);
    let old_f = g.local("old_f", ScalarType::F32);
    let i = g.global_id();
    let zero = g.int(0);
    let one = g.int(1);
    let two = g.int(2);
    let three = g.int(3);
    let seven = g.i64c(7);
    let eight = g.float(8.0, ScalarType::F32);
    let half = g.float(0.5, ScalarType::F64);
    let k4096 = g.body.add_expr(ExprKind::ConstInt(4096), ScalarType::U32, Span::default());
    let x = ArrayRef::Param;
    let atomic = |op, array, indices: Vec<_>, value, capture| Stmt::Atomic { op, array, indices, value, capture, span: Span::default() };
    let kernel = g.finish(vec![
        atomic(AtomicOp::Div, x(ints), vec![zero], two, None),
        atomic(AtomicOp::ShlRev, x(ints), vec![i], three, None),
        atomic(AtomicOp::Shr, x(ints), vec![one], one, None),
        atomic(AtomicOp::SubRev, x(longs), vec![zero], seven, Some(old_l)),
        atomic(AtomicOp::DivRev, x(floats), vec![zero], eight, Some(old_f)),
        atomic(AtomicOp::Shl, x(bytes), vec![zero], one, None),
        atomic(AtomicOp::LogAnd, x(bytes), vec![one], i, None),
        atomic(AtomicOp::ShrRev, x(units), vec![i], k4096, None),
        atomic(AtomicOp::Add, x(ints), vec![two], half, None),
        atomic(AtomicOp::Mul, x(doubles), vec![zero], half, None),
        atomic(AtomicOp::Add, x(doubles), vec![one], half, None),
    ]);
    let module = module_with(kernel);
    let text = emit(&module);
    for (helper, next) in [
        ("__device__ static int yosegi_atomic_div_i32(int *address, int operand)", "(int)(current / operand)"),
        ("__device__ static int yosegi_atomic_rshl_i32(int *address, int operand)", "(int)(operand << current)"),
        ("__device__ static int yosegi_atomic_shr_i32(int *address, int operand)", "(int)(current >> operand)"),
        ("__device__ static long long yosegi_atomic_rsub_i64(long long *address, long long operand)", "(long long)(operand - current)"),
        ("__device__ static float yosegi_atomic_rdiv_f32(float *address, float operand)", "__float_as_uint((float)(operand / current))"),
        ("__device__ static signed char yosegi_atomic_shl_i8_i32(signed char *address, int operand)", "(signed char)(current << operand)"),
        ("__device__ static signed char yosegi_atomic_land_i8_i32(signed char *address, int operand)", "(signed char)(current && operand)"),
        ("__device__ static unsigned int yosegi_atomic_rshr_u32(unsigned int *address, unsigned int operand)", "(unsigned int)(operand >> current)"),
        ("__device__ static int yosegi_atomic_add_i32_f64(int *address, double operand)", "(int)(current + operand)"),
        ("__device__ static double yosegi_atomic_mul_f64(double *address, double operand)", "(double)(current * operand)"),
    ] {
        assert!(text.contains(helper), "{helper}\n{text}");
        assert!(text.contains(next), "{next}\n{text}");
    }
    // 64-bit elements swap 64-bit words; sub-word elements swap the word that holds them.
    assert!(text.contains("unsigned long long *word = (unsigned long long *)address;"), "{text}");
    assert!(text.contains("unsigned int *word = (unsigned int *)((unsigned long long)address & ~3ull);"), "{text}");
    assert!(text.contains("yosegi_atomic_div_i32(&ints_p0[0], 2);"), "{text}");
    assert!(text.contains("old_l_0 = yosegi_atomic_rsub_i64(&longs_p1[0], 7ll);"), "{text}");
    assert!(text.contains("old_f_1 = yosegi_atomic_rdiv_f32(&floats_p2[0], 8.0f);"), "{text}");
    assert!(text.contains("yosegi_atomic_add_i32_f64(&ints_p0[2], 0.5);"), "the operand keeps its type\n{text}");
    // A double add has an instruction.
    assert!(text.contains("atomicAdd(&doubles_p5[1], 0.5);"), "{text}");
    assert_compiles(&text);
}

/// A loop with `continue` and `break` nested in an `if`, a do-while, and a recursive device
/// function; checks the control-flow scheme and that the text compiles.
#[test]
fn loops_with_continue_and_break_and_device_functions() {
    let mut module = Module::default();
    // int fact(int x) { if (x <= 1) return 1; return x * fact(x - 1); }
    let mut fbody = Body::default();
    let x = fbody.locals.append(Local { name: "x".into(), ty: ScalarType::I32, array_dims: None, kind: LocalKind::Var, span: Span::default() });
    let xv = fbody.add_expr(ExprKind::Local(x), ScalarType::I32, Span::default());
    let one = fbody.add_expr(ExprKind::ConstInt(1), ScalarType::I32, Span::default());
    let le = fbody.add_expr(ExprKind::Binary { op: BinaryOp::Le, lhs: xv, rhs: one }, ScalarType::Bool, Span::default());
    let xm1 = fbody.add_expr(ExprKind::Binary { op: BinaryOp::Sub, lhs: xv, rhs: one }, ScalarType::I32, Span::default());
    let rec = fbody.add_expr(ExprKind::Call { func: Handle::new(0), args: vec![xm1] }, ScalarType::I32, Span::default());
    let mul = fbody.add_expr(ExprKind::Binary { op: BinaryOp::Mul, lhs: xv, rhs: rec }, ScalarType::I32, Span::default());
    fbody.block = vec![
        Stmt::If { cond: le, then: vec![Stmt::Return(Some(one))], otherwise: vec![] },
        Stmt::Return(Some(mul)),
    ];
    module.functions.append(Function { name: "fact".into(), params: vec![x], result: Some(ScalarType::I32), body: fbody, span: Span::default() });

    let mut g = GridBuilder::new("loops_l70", [1, 1, 1]);
    let out = g.array_param("out", ScalarType::I32, &[]);
    let k = g.local("k", ScalarType::I32);
    let s = g.local("s", ScalarType::I8);
    let zero = g.int(0);
    let one = g.int(1);
    let ten = g.int(10);
    let three = g.int(3);
    let seven = g.int(7);
    let kv = g.get(k);
    let sv = g.get(s);
    let lt = g.bin(BinaryOp::Lt, kv, ten);
    let next = g.bin(BinaryOp::Add, kv, one);
    let rem = g.bin(BinaryOp::Rem, kv, three);
    let skip = g.bin(BinaryOp::Eq, rem, zero);
    let stop = g.bin(BinaryOp::Eq, kv, seven);
    let kv8 = g.cast(kv, ScalarType::I8);
    let s_plus = g.bin(BinaryOp::Add, sv, kv8);
    let call = g.body.add_expr(ExprKind::Call { func: Handle::new(0), args: vec![kv] }, ScalarType::I32, Span::default());
    let sv32 = g.cast(sv, ScalarType::I32);
    let shifted = g.bin(BinaryOp::Shl, sv32, kv);
    let s_zero = g.body.add_expr(ExprKind::ConstInt(0), ScalarType::I8, Span::default());
    let kernel = g.finish(vec![
        Stmt::Assign { local: s, value: s_zero },
        Stmt::Assign { local: k, value: zero },
        Stmt::Loop {
            cond: Some(lt),
            test_first: true,
            body: vec![
                Stmt::If { cond: skip, then: vec![Stmt::Continue], otherwise: vec![] },
                Stmt::If { cond: stop, then: vec![Stmt::Break], otherwise: vec![] },
                Stmt::Assign { local: s, value: s_plus },
            ],
            continuing: vec![Stmt::Assign { local: k, value: next }],
            range: None,
        },
        Stmt::Loop {
            cond: Some(lt),
            test_first: false,
            body: vec![Stmt::Assign { local: k, value: next }],
            continuing: vec![],
            range: None,
        },
        Stmt::Store { array: ArrayRef::Param(out), indices: vec![zero], value: call, span: Span::default() },
        Stmt::Store { array: ArrayRef::Param(out), indices: vec![one], value: shifted, span: Span::default() },
    ]);
    module.grid_kernels.append(kernel);
    let text = emit(&module);
    insta::assert_snapshot!(text);
    // `continue` jumps to the label before the step; `break` leaves the `for (;;)`.
    let label = text.find("continue_1:;").expect("a continue label");
    let step = text.find("k_0 = k_0 + 1;").expect("the step");
    assert!(text.contains("goto continue_1;") && label < step, "{text}");
    assert!(text.contains("__device__ static int fact_f0(int x_0);"), "{text}");
    assert!(text.contains("return x_0 * fact_f0(x_0 - 1);"), "{text}");
    // i8 arithmetic is narrowed back; the variable shift count is masked.
    assert!(text.contains("s_1 = (signed char)(s_1 + ((signed char)k_0));"), "{text}");
    assert!(text.contains("out_p0[1] = ((int)s_1) << (k_0 & 31);"), "{text}");
    assert_compiles(&text);
}

#[test]
fn literals_read_back_exactly() {
    assert_eq!(int_literal(ScalarType::I32, i32::MIN as i64), "(-2147483647 - 1)");
    assert_eq!(int_literal(ScalarType::I64, i64::MIN), "(-9223372036854775807ll - 1ll)");
    assert_eq!(int_literal(ScalarType::U32, -1), "4294967295u");
    assert_eq!(int_literal(ScalarType::U64, -1), "18446744073709551615ull");
    assert_eq!(int_literal(ScalarType::I8, 200), "((signed char)(-56))");
    assert_eq!(int_literal(ScalarType::Bool, 5), "true");
    assert_eq!(float_literal(ScalarType::F32, 0.1), "0.1f");
    assert_eq!(float_literal(ScalarType::F32, 1.0), "1.0f");
    assert_eq!(float_literal(ScalarType::F64, -2.5e-300), "(-2.5e-300)");
    assert_eq!(float_literal(ScalarType::F64, f64::INFINITY), "(1.0 / 0.0)");
    for f in [0.1f64, 1.0 / 3.0, 1e300, 5e-324, 123456789.125, f64::MAX] {
        let text = float_literal(ScalarType::F64, f);
        assert_eq!(text.parse::<f64>().ok(), Some(f), "{text}");
    }
    for f in [0.1f32, 1.0 / 3.0, f32::MAX, 1e-45] {
        let text = float_literal(ScalarType::F32, f as f64);
        assert_eq!(text.trim_end_matches('f').parse::<f32>().ok(), Some(f), "{text}");
    }
}

#[test]
fn module_text_has_every_kernel_and_shared_helpers_once() {
    let mut module = histogram();
    let second = histogram().grid_kernels[Handle::new(0)].clone();
    module.grid_kernels.append(crate::ir::GridKernel { name: "hist_l90".into(), ..second });
    let text = module_cuda(&module);
    assert!(text.contains("void hist_l55(") && text.contains("void hist_l90("));
    assert_eq!(text.matches("__device__ static float yosegi_atomic_mul_f32(").count(), 1);
    assert_compiles(&text);
}

#[test]
fn identifiers_are_valid_c() {
    assert_eq!(identifier("mt->mrows"), "mt_mrows");
    assert_eq!(identifier("__red"), "red");
    assert_eq!(identifier("3d"), "v3d");
    assert_eq!(identifier("*p"), "p");
    assert_eq!(identifier(""), "v");
}

/// One block of 32 threads through the less common paths: a firstprivate local, a local
/// array filled by a loop and updated by (non-atomic) atomics with capture, `Select`, math
/// calls at both precisions, integer `abs`, `Not`/`BitNot`, unsigned shifts, narrowing
/// stores, a device function, integer `max`, a `Max` reduction's partial and a scalar output.
/// Params: n (int), fp (float), out_f (double[32]), out_i (long long[32]), out_s (short[32]).
pub(crate) fn miscellany() -> Module {
    let mut module = Module::default();
    // int twice(int x) { return x + x; }
    let mut fbody = Body::default();
    let x = fbody.locals.append(Local { name: "x".into(), ty: ScalarType::I32, array_dims: None, kind: LocalKind::Var, span: Span::default() });
    let xv = fbody.add_expr(ExprKind::Local(x), ScalarType::I32, Span::default());
    let sum = fbody.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: xv, rhs: xv }, ScalarType::I32, Span::default());
    fbody.block = vec![Stmt::Return(Some(sum))];
    let twice = module.functions.append(Function { name: "twice".into(), params: vec![x], result: Some(ScalarType::I32), body: fbody, span: Span::default() });

    let mut g = GridBuilder::new("misc_l90", [32, 1, 1]);
    let _n = g.scalar_param("n", ScalarType::I32);
    let fp = g.scalar_param("fp", ScalarType::F32);
    let out_f = g.array_param("out_f", ScalarType::F64, &[]);
    let out_i = g.array_param("out_i", ScalarType::I64, &[]);
    let out_s = g.array_param("out_s", ScalarType::I16, &[]);
    let red = g.reduction(ReductionOp::Max, ScalarType::I32, 0);
    let local = |g: &mut GridBuilder, name: &str, ty, dims: Option<Vec<u32>>, kind| {
        g.body.locals.append(Local { name: name.into(), ty, array_dims: dims, kind, span: Span::default() })
    };
    let t = g.local("t", ScalarType::I32);
    let fpl = local(&mut g, "fp", ScalarType::F32, None, LocalKind::FirstPrivate(fp));
    let arr = local(&mut g, "arr", ScalarType::I32, Some(vec![4]), LocalKind::Private);
    let j = local(&mut g, "j", ScalarType::I32, None, LocalKind::LoopIndex);
    let m = local(&mut g, "m", ScalarType::I32, None, LocalKind::Reduction(red));
    let cap = g.local("cap", ScalarType::I32);
    let so = g.local("so", ScalarType::F64);
    g.scalar_output(so, 1);
    let e = |g: &mut GridBuilder, kind, ty| g.body.add_expr(kind, ty, Span::default());

    let tid = g.tid();
    let tv = g.get(t);
    let jv = g.get(j);
    let zero = g.int(0);
    let one = g.int(1);
    let two = g.int(2);
    let four = g.int(4);
    let five = g.int(5);
    let hundred = g.int(100);
    // for (j = 0; j < 4; j++) arr[j] = t * j + 1;
    let j_lt = g.bin(BinaryOp::Lt, jv, four);
    let j_next = g.bin(BinaryOp::Add, jv, one);
    let tj = g.bin(BinaryOp::Mul, tv, jv);
    let tj1 = g.bin(BinaryOp::Add, tj, one);
    let fill = g.store(ArrayRef::Local(arr), &[jv], tj1);
    // out_f[t] = sqrt((double)arr[0]) + pow((double)fp, 2.0) + (t % 2 == 0 ? 1.5 : -2.25)
    //            + fabs(-(double)t) + (double)expf(fp * 0.5f) + (double)erff(fp)
    let a0 = g.load(ArrayRef::Local(arr), &[zero], ScalarType::I32, Span::default());
    let a0d = g.cast(a0, ScalarType::F64);
    let sq = e(&mut g, ExprKind::Math { func: MathFn::Sqrt, args: vec![a0d] }, ScalarType::F64);
    let fpv = g.get(fpl);
    let fpd = g.cast(fpv, ScalarType::F64);
    let twof = g.float(2.0, ScalarType::F64);
    let pw = e(&mut g, ExprKind::Math { func: MathFn::Pow, args: vec![fpd, twof] }, ScalarType::F64);
    let t2 = g.bin(BinaryOp::Rem, tv, two);
    let even = g.bin(BinaryOp::Eq, t2, zero);
    let a = g.float(1.5, ScalarType::F64);
    let b = g.float(-2.25, ScalarType::F64);
    let sel = e(&mut g, ExprKind::Select { cond: even, then: a, otherwise: b }, ScalarType::F64);
    let td = g.cast(tv, ScalarType::F64);
    let neg = e(&mut g, ExprKind::Unary { op: UnaryOp::Neg, arg: td }, ScalarType::F64);
    let fa = e(&mut g, ExprKind::Math { func: MathFn::Fabs, args: vec![neg] }, ScalarType::F64);
    let halff = g.float(0.5, ScalarType::F32);
    let fph = g.bin(BinaryOp::Mul, fpv, halff);
    let ex = e(&mut g, ExprKind::Math { func: MathFn::Exp, args: vec![fph] }, ScalarType::F32);
    let exd = g.cast(ex, ScalarType::F64);
    let er = e(&mut g, ExprKind::Math { func: MathFn::Erf, args: vec![fpv] }, ScalarType::F32);
    let erd = g.cast(er, ScalarType::F64);
    let s1 = g.bin(BinaryOp::Add, sq, pw);
    let s2 = g.bin(BinaryOp::Add, s1, sel);
    let s3 = g.bin(BinaryOp::Add, s2, fa);
    let s4 = g.bin(BinaryOp::Add, s3, exd);
    let s5 = g.bin(BinaryOp::Add, s4, erd);
    let store_f = g.store(ArrayRef::Param(out_f), &[tv], s5);
    // out_i[t] = llabs((long long)(t - 16)) + (long long)~t + cap + (long long)(t > 3 && !(t >= 10)) + twice(t)
    let k16 = g.int(16);
    let tm16 = g.bin(BinaryOp::Sub, tv, k16);
    let tm16l = g.cast(tm16, ScalarType::I64);
    let ab = e(&mut g, ExprKind::Math { func: MathFn::Abs, args: vec![tm16l] }, ScalarType::I64);
    let nt = e(&mut g, ExprKind::Unary { op: UnaryOp::BitNot, arg: tv }, ScalarType::I32);
    let ntl = g.cast(nt, ScalarType::I64);
    let capv = g.get(cap);
    let capl = g.cast(capv, ScalarType::I64);
    let three = g.int(3);
    let ten = g.int(10);
    let gt3 = g.bin(BinaryOp::Gt, tv, three);
    let ge10 = g.bin(BinaryOp::Ge, tv, ten);
    let not10 = e(&mut g, ExprKind::Unary { op: UnaryOp::Not, arg: ge10 }, ScalarType::Bool);
    let both = g.bin(BinaryOp::LogAnd, gt3, not10);
    let bothl = g.cast(both, ScalarType::I64);
    let call = e(&mut g, ExprKind::Call { func: twice, args: vec![tv] }, ScalarType::I32);
    let calll = g.cast(call, ScalarType::I64);
    let i1 = g.bin(BinaryOp::Add, ab, ntl);
    let i2 = g.bin(BinaryOp::Add, i1, capl);
    let i3 = g.bin(BinaryOp::Add, i2, bothl);
    let i4 = g.bin(BinaryOp::Add, i3, calll);
    let store_i = g.store(ArrayRef::Param(out_i), &[tv], i4);
    // out_s[t] = t * 1000 + (((unsigned)t << 31) >> 30)   (stored into a short: wraps)
    let k1000 = g.int(1000);
    let t1000 = g.bin(BinaryOp::Mul, tv, k1000);
    let tu = g.cast(tv, ScalarType::U32);
    let k31 = e(&mut g, ExprKind::ConstInt(31), ScalarType::U32);
    let k30 = e(&mut g, ExprKind::ConstInt(30), ScalarType::U32);
    let shl = g.bin(BinaryOp::Shl, tu, k31);
    let shr = g.bin(BinaryOp::Shr, shl, k30);
    let shri = g.cast(shr, ScalarType::I32);
    let sv = g.bin(BinaryOp::Add, t1000, shri);
    let store_s = g.store(ArrayRef::Param(out_s), &[tv], sv);
    // m = max(m, arr[2]); every thread of the one block writes its partial; so = (double)fp * 3.0
    let mv = g.get(m);
    let a2 = g.load(ArrayRef::Local(arr), &[two], ScalarType::I32, Span::default());
    let mx = g.bin(BinaryOp::Max, mv, a2);
    let write_partial = g.store(ArrayRef::Partials(red), &[tv], mv);
    let threed = g.float(3.0, ScalarType::F64);
    let so_v = g.bin(BinaryOp::Mul, fpd, threed);
    let atomic = |op, array, indices: Vec<_>, value, capture| Stmt::Atomic { op, array, indices, value, capture, span: Span::default() };
    let kernel = g.finish(vec![
        Stmt::Assign { local: t, value: tid },
        Stmt::Assign { local: j, value: zero },
        Stmt::Loop { cond: Some(j_lt), test_first: true, body: vec![fill], continuing: vec![Stmt::Assign { local: j, value: j_next }], range: None },
        atomic(AtomicOp::Add, ArrayRef::Local(arr), vec![one], five, Some(cap)),
        atomic(AtomicOp::Max, ArrayRef::Local(arr), vec![two], hundred, None),
        store_f,
        store_i,
        store_s,
        Stmt::Assign { local: m, value: mx },
        write_partial,
        Stmt::Assign { local: so, value: so_v },
    ]);
    module.grid_kernels.append(kernel);
    module
}

#[test]
fn miscellany_compiles_and_says_what_it_means() {
    let module = miscellany();
    let text = emit(&module);
    insta::assert_snapshot!(text);
    assert!(text.contains("fp_1 = fp_p1;"), "firstprivate starts at the param\n{text}");
    assert!(text.contains("m_4 = (-2147483647 - 1);"), "max starts at INT_MIN\n{text}");
    assert!(text.contains("cap_5 = arr_2[1];") && text.contains("arr_2[1] = (int)(arr_2[1] + 5);"), "{text}");
    assert!(text.contains("arr_2[2] = yosegi_max_i32(arr_2[2], 100);"), "{text}");
    assert!(text.contains("expf(fp_1 * 0.5f)") && text.contains("erff(fp_1)") && text.contains("llabs("), "{text}");
    assert!(text.contains("out_s_p4[t_0] = (short)"), "{text}");
    assert!(text.contains("__scalar_out_0[0] = so_6;"), "{text}");
    assert_compiles(&text);
}

// ---------------------------------------------------------------------------------------------
// Variants

/// `gx = (long long)blockIdx.x * (long long)blockDim.x + (long long)threadIdx.x; if (gx < n)
/// a[gx * m] = 1.0f` with a 2-D array `a[][m]`: a `long long` thread position, a trip count and
/// a dimension from params.
fn strided_fill() -> Module {
    let mut g = GridBuilder::new("fill_l7", [256, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let mp = g.scalar_param("m", ScalarType::I32);
    let sp = g.scalar_param("scale", ScalarType::F32);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let mv = g.param(mp);
    let mdim = g.cast(mv, ScalarType::I64);
    let nv = g.param(np);
    let n64 = g.cast(nv, ScalarType::I64);
    let k255 = g.int(255);
    let k256 = g.int(256);
    let sum = g.bin(BinaryOp::Add, nv, k255);
    let blocks = g.bin(BinaryOp::Div, sum, k256);
    g.grid_x(blocks);
    let regs: Vec<_> = [ExprKind::BlockIdx(Axis::X), ExprKind::BlockDim(Axis::X), ExprKind::ThreadIdx(Axis::X)]
        .into_iter()
        .map(|k| {
            let r = g.body.add_expr(k, ScalarType::I32, Span::default());
            g.cast(r, ScalarType::I64)
        })
        .collect();
    let prod = g.bin(BinaryOp::Mul, regs[0], regs[1]);
    let pos = g.bin(BinaryOp::Add, prod, regs[2]);
    let gx = g.local("gx", ScalarType::I64);
    let gxv = g.get(gx);
    let guard = g.bin(BinaryOp::Lt, gxv, n64);
    let zero = g.i64c(0);
    let scale = g.param(sp);
    let store = g.store(ArrayRef::Param(a), &[gxv, zero], scale);
    let mut kernel = g.finish(vec![
        Stmt::Assign { local: gx, value: pos },
        Stmt::If { cond: guard, then: vec![store], otherwise: vec![] },
    ]);
    if let ParamKind::Array { dims, .. } = &mut kernel.params[3].kind {
        *dims = vec![None, Some(mdim)];
    }
    module_with(kernel)
}

#[test]
fn the_iteration_space_params_are_specialisable_and_others_are_not() {
    let module = strided_fill();
    let kernel = &module.grid_kernels[Handle::new(0)];
    // n (grid and guard) and m (dimension), not the float coefficient.
    assert_eq!(specialisable_params(kernel), vec![0, 1]);
    let module = vector_add();
    assert_eq!(specialisable_params(&module.grid_kernels[Handle::new(0)]), vec![0]);
}

#[test]
fn a_specialised_variant_has_the_values_as_constants() {
    let module = strided_fill();
    let kernel = &module.grid_kernels[Handle::new(0)];
    let values = [ParamValue::Int(1000), ParamValue::Int(3), ParamValue::Float(2.0), ParamValue::Pointer(0)];
    let options = CudaOptions { specialise: Some(&values), index_width: IndexWidth::Bits64, aliasing: ParamAliasing::Unknown, sources: None };
    let text = grid_kernel_cuda_with(&module, kernel, &options);
    let body = &text[text.find('{').unwrap()..];
    assert!(!body.contains("n_p0") && !body.contains("m_p1"), "{text}");
    assert!(body.contains("1000") && body.contains("3"), "{text}");
    // The float param stays a param, and the signature is the generic one (same arguments).
    assert!(body.contains("scale_p2"), "{text}");
    let generic = grid_kernel_cuda(&module, kernel);
    assert_eq!(text.lines().find(|l| l.contains("__global__")), generic.lines().find(|l| l.contains("__global__")));
    assert!(generic.contains("long long gx_0;"));
    assert_compiles(&text);
}

#[test]
fn a_32_bit_variant_indexes_in_int() {
    let module = strided_fill();
    let kernel = &module.grid_kernels[Handle::new(0)];
    let values = [ParamValue::Int(1000), ParamValue::Int(3), ParamValue::Float(2.0), ParamValue::Pointer(0)];
    let options = CudaOptions { specialise: Some(&values), index_width: IndexWidth::Bits32, aliasing: ParamAliasing::Unknown, sources: None };
    let text = grid_kernel_cuda_with(&module, kernel, &options);
    assert!(text.contains("int gx_0;"), "{text}");
    assert!(text.contains("gx_0 = (((int)blockIdx.x) * ((int)blockDim.x)) + ((int)threadIdx.x);"), "{text}");
    // The element index is computed in `int`: no `long long` arithmetic feeds it.
    let store = text.lines().find(|l| l.contains("a_p3[")).expect("the store");
    assert!(store.contains("a_p3[gx_0 * 3 + 0]"), "{store}");
    assert_compiles(&text);
    // The generic kernel of the same IR is unchanged by the options machinery.
    assert!(!grid_kernel_cuda(&module, kernel).contains("int gx_0;"));
}

/// The signature line of the kernel written with `aliasing`.
fn stencil_signature(aliasing: ParamAliasing) -> String {
    let module = stencil();
    let options = CudaOptions { aliasing, ..CudaOptions::GENERIC };
    let text = grid_kernel_cuda_with(&module, &module.grid_kernels[Handle::new(0)], &options);
    assert_compiles(&text);
    text.lines().find(|l| l.contains("__global__")).expect("a kernel").to_string()
}

#[test]
fn read_only_params_are_const_and_disjoint_launches_restrict_every_array() {
    // `u` is only read, `mesh_out` is stored to.
    let unknown = stencil_signature(ParamAliasing::Unknown);
    assert!(unknown.contains("const double *u_p2") && unknown.contains(", double *mesh_out_p3"), "{unknown}");
    assert!(!unknown.contains("__restrict__"), "{unknown}");
    let disjoint = stencil_signature(ParamAliasing::Disjoint);
    assert!(disjoint.contains("const double *__restrict__ u_p2"), "{disjoint}");
    assert!(disjoint.contains(", double *__restrict__ mesh_out_p3"), "{disjoint}");
    // Scalars are untouched.
    assert!(disjoint.contains("int n_p0, int m_p1"), "{disjoint}");
}

#[test]
fn params_sharing_an_allocation_are_disjoint_only_when_none_is_written() {
    let module = stencil();
    let kernel = &module.grid_kernels[Handle::new(0)];
    assert_eq!(kernel.written_array_params().into_iter().collect::<Vec<_>>(), vec![3]);
    // n, m, u, mesh_out
    assert_eq!(param_aliasing(kernel, &[None, None, Some(1), Some(2)]), ParamAliasing::Disjoint);
    assert_eq!(param_aliasing(kernel, &[None, None, Some(1), Some(1)]), ParamAliasing::Unknown);
    // Histogram: `data` (read) and `bins` (atomically updated) in one allocation.
    let hist = histogram();
    let kernel = &hist.grid_kernels[Handle::new(0)];
    let written = kernel.written_array_params();
    assert!(!written.contains(&1) && written.contains(&2), "{written:?}");
    let mut bound: Vec<Option<u64>> = (0..kernel.params.len() as u64).map(Some).collect();
    bound[0] = None;
    assert_eq!(param_aliasing(kernel, &bound), ParamAliasing::Disjoint);
    bound[2] = Some(1);
    assert_eq!(param_aliasing(kernel, &bound), ParamAliasing::Unknown);
}

#[test]
fn read_only_params_may_share_an_allocation() {
    // vector add: c = a + b, with a and b the same array.
    let module = vector_add();
    let kernel = &module.grid_kernels[Handle::new(0)];
    let written = kernel.written_array_params();
    let read: Vec<u32> = (0..kernel.params.len() as u32)
        .filter(|p| matches!(kernel.params[*p as usize].kind, ParamKind::Array { .. }) && !written.contains(p))
        .collect();
    assert_eq!(read.len(), 2, "{:?}", kernel.params);
    let mut bound: Vec<Option<u64>> = kernel
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| matches!(p.kind, ParamKind::Array { .. }).then_some(k as u64))
        .collect();
    bound[read[1] as usize] = Some(read[0] as u64);
    assert_eq!(param_aliasing(kernel, &bound), ParamAliasing::Disjoint);
}

#[test]
fn a_kernel_with_a_row_table_promises_no_disjoint_params() {
    let mut g = GridBuilder::new("rows_l3", [32, 1, 1]);
    let a = g.array_param("a", ScalarType::F64, &[]);
    let t = g.row_table_param("t", ScalarType::F64);
    let i = g.global_id();
    let zero = g.int(0);
    let load = g.load(ArrayRef::Param(a), &[i], ScalarType::F64, Span::default());
    let store = g.store(ArrayRef::Param(t), &[i, zero], load);
    let kernel = g.finish(vec![store]);
    // Distinct allocations would make every other kernel `Disjoint`: a row may be `a` itself.
    assert_eq!(param_aliasing(&kernel, &[Some(1), Some(2)]), ParamAliasing::Unknown);
    let text = grid_kernel_cuda(&module_with(kernel.clone()), &kernel);
    assert!(text.contains("const double *a_p0, double *const *t_p1"), "{text}");
    assert!(text.contains("t_p1[(long long)"), "{text}");
    assert_compiles(&text);
}
