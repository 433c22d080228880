//! The mapping pass: a [`Kernel`] (an iteration space plus the body of one iteration) becomes a
//! [`GridKernel`] (a body run by every thread of a grid of blocks).
//!
//! How threads, blocks and guards relate: each parallel dim gets a grid axis, the innermost dim
//! `X` (consecutive threads take consecutive iterations, so their accesses coalesce), the next
//! `Y`, the next `Z`; with more than three dims, `Z` covers the product of all the outer ones
//! and each thread recovers their variables by division and remainder. A block is a fixed
//! power-of-two shape (in 1-D `block_threads`, or the dim's size hint unless the dim is
//! gang-level, where the hint is `num_gangs`; 32x8 in 2-D; 32x4x2 in 3-D and beyond) and the
//! grid has `ceil(trip / block)` blocks per axis, so the last block of an axis may have threads
//! past the end. Every thread computes its global position
//! `g = blockIdx * blockDim + threadIdx` per axis (in `long long`), and runs the original body
//! only when `g < trip` on every axis (the *guard*), after setting each dim variable to
//! `start + g * step`.
//!
//! Reductions: each thread starts its accumulator at the operator's identity before the guard
//! (`-0.0` for a floating `+`, which leaves every value as it is), so threads past the end
//! contribute nothing. After the guarded body, *outside* the guard so that every thread of the
//! block reaches the same barriers, the block combines its threads' values in a shared array
//! with a tree (halving the active threads each step, a barrier after each) and thread 0 writes
//! the block's value to `Partials(n)[linear block id]`; the runtime folds the partials, in
//! order, after the host variable's value. A launch of one block skips the tree: every thread
//! writes its value to `Partials(n)[linear thread id]`. Thread order is iteration order there
//! (the innermost dim runs along `x`), so when each iteration updates the variable once
//! (`sum += a[i]`), the runtime's fold `((h + a[0]) + a[1]) + ...` is the sequential program's
//! own sum, to the bit: small floating-point reductions give the sequential answer.
//!
//! The two parts of a complex `*` reduction (`Reduction::part`) share one tree, which
//! multiplies their pairs as complex numbers.
//!
//! A kernel with no parallel dims, or one that must run sequentially (`sequential_reason`, or
//! scalar outputs the host reads back), becomes a one-thread grid; a sequential kernel's dims
//! become counted loops around its body.
//!
//! Grid-level expressions (`ThreadIdx`, `BlockIdx`, `BlockDim`, `GridDim`) are typed `int`.

use crate::ir::*;
use crate::opt::PassConfig;

/// The grid kernel that runs `kernel` (which must be in `module.kernels`).
pub fn map_kernel(module: &Module, kernel: Handle<Kernel>, config: &PassConfig) -> GridKernel {
    let k = &module.kernels[kernel];
    let mut m = Mapper { body: k.body.clone(), span: k.span };
    let mut grid = GridKernel {
        name: k.name.clone(),
        span: k.span,
        source: kernel,
        params: k.params.clone(),
        body: Body::default(),
        shared: Vec::new(),
        launch: LaunchShape { block: [1, 1, 1], grid: [Handle::new(0); 3] },
        reductions: k
            .reductions
            .iter()
            .map(|r| GridReduction { op: r.op, ty: r.ty, target_arg: r.target_arg, part: r.part })
            .collect(),
        scalar_outputs: k.scalar_outputs.clone(),
        axes: Vec::new(),
        variant: VariantInfo::global(),
    };
    let one = m.int64(1);
    grid.launch.grid = [one, one, one];

    // Written per thread: its body and launch are the program's.
    if let Some(explicit) = &k.explicit_grid {
        grid.launch = LaunchShape { block: explicit.block, grid: explicit.grid };
        grid.shared = explicit.shared.clone();
        grid.body = k.body.clone();
        return grid;
    }

    // Scalar outputs are read from the one thread that ran, so their kernels run in one.
    if k.space.is_empty() || k.sequential_reason.is_some() || !k.scalar_outputs.is_empty() {
        let mut block = m.reduction_inits(&k.reductions);
        block.extend(m.sequential_loops(&k.space, k.body.block.clone()));
        for (n, r) in k.reductions.iter().enumerate() {
            let zero = m.int64(0);
            let value = m.expr(ExprKind::Local(r.local), r.ty);
            block.push(Stmt::Store { array: ArrayRef::Partials(n as u32), indices: vec![zero], value, span: r.span });
        }
        m.body.block = block;
        grid.body = m.body;
        return grid;
    }

    let block_shape = block_shape(k, config);
    grid.launch.block = block_shape;
    let axes = m.axes(k);
    let mut block = m.reduction_inits(&k.reductions);
    let mut guard: Option<Handle<Expr>> = None;
    let mut inner = Vec::new();
    for (a, axis) in axes.iter().enumerate() {
        let ax = AXES[a];
        let g = m.local(&format!("_g{}", ax.name()), ScalarType::I64);
        let bid = m.grid_index(ExprKind::BlockIdx(ax));
        let bdim = m.grid_index(ExprKind::BlockDim(ax));
        let tid = m.grid_index(ExprKind::ThreadIdx(ax));
        let prod = m.bin(BinaryOp::Mul, bid, bdim);
        let pos = m.bin(BinaryOp::Add, prod, tid);
        block.push(Stmt::Assign { local: g, value: pos });
        let ge = m.expr(ExprKind::Local(g), ScalarType::I64);
        let lt = m.bin(BinaryOp::Lt, ge, axis.trip);
        guard = Some(match guard {
            None => lt,
            Some(prev) => m.bin(BinaryOp::LogAnd, prev, lt),
        });
        // Blocks per axis: ceil(trip / block), and none when the trip count is not positive.
        let b = m.int64(block_shape[a] as i64);
        let bm1 = m.int64(block_shape[a] as i64 - 1);
        let padded = m.bin(BinaryOp::Add, axis.trip, bm1);
        let blocks = m.bin(BinaryOp::Div, padded, b);
        let zero = m.int64(0);
        grid.launch.grid[a] = m.bin(BinaryOp::Max, blocks, zero);
        if let [d] = axis.dims[..] {
            let dim = &k.space[d];
            let start = m.cast(dim.start, ScalarType::I64);
            grid.axes.push(AxisBinding { var: dim.var, axis: ax, start, step: dim.step, trip: axis.trip });
        }
        inner.extend(m.dim_assignments(k, &axis.dims, g));
    }
    inner.extend(k.body.block.iter().cloned());
    block.push(Stmt::If { cond: guard.expect("a non-empty space has an axis"), then: inner, otherwise: Vec::new() });

    if !k.reductions.is_empty() {
        let threads = block_shape.iter().product::<u32>();
        block.extend(m.block_reductions(&k.reductions, &mut grid.shared, block_shape, threads));
    }
    m.body.block = block;
    grid.body = m.body;
    grid
}

const AXES: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

/// The reduction code of another pass's grid kernel with body `body` and blocks of `block`
/// threads, for `reductions` (their accumulators locals of `body`, their partials numbered in
/// order): the statements that start every accumulator at its operator's identity, to run
/// before the threads' work, and the per-block combination described in the module doc, to
/// run after it where every thread of the block reaches it. The fusion pass uses it.
pub fn reduction_code(body: &mut Body, reductions: &[Reduction], shared: &mut Vec<SharedArray>, block: [u32; 3]) -> (Block, Block) {
    let mut m = Mapper { body: std::mem::take(body), span: crate::diag::Span::default() };
    let inits = m.reduction_inits(reductions);
    let threads = block.iter().product::<u32>();
    let combine = m.block_reductions(reductions, shared, block, threads);
    *body = m.body;
    (inits, combine)
}


/// The block shape: powers of two so the reduction tree halves evenly.
pub fn block_shape(kernel: &Kernel, config: &PassConfig) -> [u32; 3] {
    match kernel.space.len() {
        0 => [1, 1, 1],
        1 => {
            // On a gang-level dim the hint is `num_gangs`, a grid size, not a block size.
            let dim = &kernel.space[0];
            let hint = dim.size_hint.filter(|_| dim.level != LoopLevel::Gang);
            let wanted = hint.unwrap_or(config.block_threads).clamp(1, 1024);
            [wanted.next_power_of_two().min(1024), 1, 1]
        }
        2 => [config.block_2d[0], config.block_2d[1], 1],
        _ => config.block_3d,
    }
}

/// One grid axis: the dims it covers (outermost first) and its trip count (`long long`).
struct AxisPlan {
    dims: Vec<usize>,
    trip: Handle<Expr>,
}

struct Mapper {
    body: Body,
    span: crate::diag::Span,
}

impl Mapper {
    fn expr(&mut self, kind: ExprKind, ty: ScalarType) -> Handle<Expr> {
        self.body.add_expr(kind, ty, crate::diag::Span::default())
    }
    fn int64(&mut self, v: i64) -> Handle<Expr> {
        self.expr(ExprKind::ConstInt(v), ScalarType::I64)
    }
    fn int32(&mut self, v: i64) -> Handle<Expr> {
        self.expr(ExprKind::ConstInt(v), ScalarType::I32)
    }
    fn bin(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.body.add_binary(op, lhs, rhs)
    }
    fn cast(&mut self, arg: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        if self.body.exprs[arg].ty == ty {
            arg
        } else {
            self.expr(ExprKind::Cast { arg }, ty)
        }
    }
    /// A grid index widened to `long long`.
    fn grid_index(&mut self, kind: ExprKind) -> Handle<Expr> {
        let e = self.expr(kind, ScalarType::I32);
        self.cast(e, ScalarType::I64)
    }
    fn local(&mut self, name: &str, ty: ScalarType) -> Handle<Local> {
        self.body.locals.append(Local { name: name.to_string(), ty, array_dims: None, kind: LocalKind::Var, span: self.span })
    }

    /// Axis X takes the innermost dim, Y the next, Z all the others.
    fn axes(&mut self, k: &Kernel) -> Vec<AxisPlan> {
        let n = k.space.len();
        let mut plans = Vec::new();
        for (a, take) in [(0, n - 1), (1, n.wrapping_sub(2))] {
            if a < n && take < n {
                let trip = self.cast(k.space[take].trip_count, ScalarType::I64);
                plans.push(AxisPlan { dims: vec![take], trip });
            }
        }
        if n >= 3 {
            let dims: Vec<usize> = (0..n - 2).collect();
            let mut trip = self.cast(k.space[0].trip_count, ScalarType::I64);
            for &d in &dims[1..] {
                let t = self.cast(k.space[d].trip_count, ScalarType::I64);
                trip = self.bin(BinaryOp::Mul, trip, t);
            }
            plans.push(AxisPlan { dims, trip });
        }
        plans
    }

    /// `var = start + index * step` for each dim of an axis; with several dims (outermost
    /// first) the axis position is split by remainder and division, innermost first.
    fn dim_assignments(&mut self, k: &Kernel, dims: &[usize], g: Handle<Local>) -> Vec<Stmt> {
        let mut stmts = Vec::new();
        let mut rest = self.expr(ExprKind::Local(g), ScalarType::I64);
        for (pos, &d) in dims.iter().enumerate().rev() {
            let dim = &k.space[d];
            let index = if pos == 0 {
                rest
            } else {
                let trip = self.cast(dim.trip_count, ScalarType::I64);
                let index = self.bin(BinaryOp::Rem, rest, trip);
                rest = self.bin(BinaryOp::Div, rest, trip);
                index
            };
            let start = self.cast(dim.start, ScalarType::I64);
            let offset = if dim.step == 1 {
                index
            } else {
                let step = self.int64(dim.step);
                self.bin(BinaryOp::Mul, index, step)
            };
            let value = self.bin(BinaryOp::Add, start, offset);
            let var_ty = self.body.locals[dim.var].ty;
            let value = self.cast(value, var_ty);
            stmts.push(Stmt::Assign { local: dim.var, value });
        }
        stmts.reverse();
        stmts
    }

    /// The dims as counted sequential loops (outermost first) around `body`.
    fn sequential_loops(&mut self, space: &[ParallelDim], body: Block) -> Block {
        let mut block = body;
        for dim in space.iter().rev() {
            let ty = self.body.locals[dim.var].ty;
            let start = self.cast(dim.start, ty);
            let trip = self.cast(dim.trip_count, ty);
            let step = self.expr(ExprKind::ConstInt(dim.step), ty);
            let span = self.mul(trip, step);
            let end = self.bin(BinaryOp::Add, start, span);
            let var = self.expr(ExprKind::Local(dim.var), ty);
            let cond = self.bin(if dim.step > 0 { BinaryOp::Lt } else { BinaryOp::Gt }, var, end);
            let next = self.bin(BinaryOp::Add, var, step);
            block = vec![
                Stmt::Assign { local: dim.var, value: start },
                Stmt::Loop {
                    cond: Some(cond),
                    test_first: true,
                    body: block,
                    continuing: vec![Stmt::Assign { local: dim.var, value: next }],
                    range: Some(LoopRange { var: dim.var, start, end, step: dim.step }),
                },
            ];
        }
        block
    }
    fn mul(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
        self.bin(BinaryOp::Mul, a, b)
    }

    fn reduction_inits(&mut self, reductions: &[Reduction]) -> Block {
        reductions
            .iter()
            .map(|r| {
                let value = if r.op == ReductionOp::Mul && r.part == Some(ComplexPart::Imag) {
                    // `1 + 0i`: the imaginary part of a complex product starts at 0.
                    self.expr(ExprKind::ConstFloat(0.0), r.ty)
                } else {
                    self.identity(r.op, r.ty)
                };
                Stmt::Assign { local: r.local, value }
            })
            .collect()
    }

    /// The value `x` with `x op v == v` for every `v` of type `ty`.
    fn identity(&mut self, op: ReductionOp, ty: ScalarType) -> Handle<Expr> {
        let float = ty.is_float();
        let (kind, int_value) = match op {
            // -0.0, not 0.0: `-0.0 + x` is `x` for every `x`, negative zero included.
            ReductionOp::Add if float => (Some(-0.0), 0),
            ReductionOp::Add | ReductionOp::BitOr | ReductionOp::BitXor | ReductionOp::LogOr => (None, 0),
            ReductionOp::Mul | ReductionOp::LogAnd => (None, 1),
            ReductionOp::BitAnd => (None, -1),
            ReductionOp::Max if float => (Some(f64::NEG_INFINITY), 0),
            ReductionOp::Min if float => (Some(f64::INFINITY), 0),
            ReductionOp::Max => (None, if ty.is_signed() { signed_min(ty) } else { 0 }),
            ReductionOp::Min => (None, if ty.is_signed() { signed_min(ty).wrapping_sub(1) } else { -1 }),
        };
        match kind {
            Some(f) => self.expr(ExprKind::ConstFloat(f), ty),
            None if float => self.expr(ExprKind::ConstFloat(int_value as f64), ty),
            None => self.expr(ExprKind::ConstInt(crate::analysis::uniform::wrap_int(int_value, ty)), ty),
        }
    }

    fn combine(&mut self, op: ReductionOp, ty: ScalarType, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
        let bop = crate::ir::reduction_combiner(op);
        let v = self.bin(bop, a, b);
        self.cast(v, ty)
    }

    /// The per-block combination of every reduction, run by all threads of the block: with
    /// one block, each thread hands its own value back (partials indexed by thread); with more,
    /// a tree per block in shared memory, and thread 0 writes the block's value.
    fn block_reductions(&mut self, reductions: &[Reduction], shared: &mut Vec<SharedArray>, block: [u32; 3], threads: u32) -> Block {
        let mut out = Vec::new();
        // tid = threadIdx.x + threadIdx.y * bx + threadIdx.z * bx * by
        let tid = self.local("_tid", ScalarType::I32);
        let tx = self.expr(ExprKind::ThreadIdx(Axis::X), ScalarType::I32);
        let ty_ = self.expr(ExprKind::ThreadIdx(Axis::Y), ScalarType::I32);
        let tz = self.expr(ExprKind::ThreadIdx(Axis::Z), ScalarType::I32);
        let bx = self.int32(block[0] as i64);
        let bxy = self.int32((block[0] * block[1]) as i64);
        let y_part = self.bin(BinaryOp::Mul, ty_, bx);
        let z_part = self.bin(BinaryOp::Mul, tz, bxy);
        let sum = self.bin(BinaryOp::Add, tx, y_part);
        let linear_tid = self.bin(BinaryOp::Add, sum, z_part);
        out.push(Stmt::Assign { local: tid, value: linear_tid });
        // block id = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y
        let bid_x = self.grid_index(ExprKind::BlockIdx(Axis::X));
        let bid_y = self.grid_index(ExprKind::BlockIdx(Axis::Y));
        let bid_z = self.grid_index(ExprKind::BlockIdx(Axis::Z));
        let gx = self.grid_index(ExprKind::GridDim(Axis::X));
        let gy = self.grid_index(ExprKind::GridDim(Axis::Y));
        let y_part = self.bin(BinaryOp::Mul, bid_y, gx);
        let gxy = self.bin(BinaryOp::Mul, gx, gy);
        let z_part = self.bin(BinaryOp::Mul, bid_z, gxy);
        let sum = self.bin(BinaryOp::Add, bid_x, y_part);
        let block_id = self.bin(BinaryOp::Add, sum, z_part);

        let mut per_thread = Vec::new();
        let mut tree = Vec::new();
        let mut n = 0;
        while n < reductions.len() {
            let r = &reductions[n];
            let imag = (r.op == ReductionOp::Mul && r.part == Some(ComplexPart::Real))
                .then(|| reductions.get(n + 1).filter(|i| i.part == Some(ComplexPart::Imag)))
                .flatten();
            let parts: Vec<(u32, &Reduction)> = match imag {
                Some(i) => vec![(n as u32, r), (n as u32 + 1, i)],
                None => vec![(n as u32, r)],
            };
            for &(m, part) in &parts {
                let tid_e = self.expr(ExprKind::Local(tid), ScalarType::I32);
                let acc = self.expr(ExprKind::Local(part.local), part.ty);
                per_thread.push(Stmt::Store { array: ArrayRef::Partials(m), indices: vec![tid_e], value: acc, span: part.span });
            }
            tree.extend(self.tree(&parts, shared, tid, block_id, threads));
            n += parts.len();
        }
        // One block: every thread's value goes back, and the runtime folds them after the
        // host's value in thread order, which is iteration order (see the module doc).
        let one = self.int32(1);
        let mut single: Option<Handle<Expr>> = None;
        for a in AXES {
            let g = self.expr(ExprKind::GridDim(a), ScalarType::I32);
            let is_one = self.bin(BinaryOp::Eq, g, one);
            single = Some(match single {
                None => is_one,
                Some(prev) => self.bin(BinaryOp::LogAnd, prev, is_one),
            });
        }
        let single = single.expect("three axes");
        out.push(Stmt::If { cond: single, then: per_thread, otherwise: tree });
        out
    }

    /// The tree of one reduction, or of the two parts of a complex product (`parts` of length
    /// 2: real, imaginary), which combine together: `(a + bi)(c + di)`.
    fn tree(&mut self, parts: &[(u32, &Reduction)], shared: &mut Vec<SharedArray>, tid: Handle<Local>, block_id: Handle<Expr>, threads: u32) -> Block {
        let mut out = Vec::new();
        let (n, first) = parts[0];
        let arrays: Vec<ArrayRef> = parts
            .iter()
            .map(|&(m, r)| {
                let sh = shared.len() as u32;
                shared.push(SharedArray { name: format!("_red{m}"), elem: r.ty, dims: vec![threads] });
                ArrayRef::Shared(sh)
            })
            .collect();
        for (&(_, r), &arr) in parts.iter().zip(&arrays) {
            let tid_e = self.expr(ExprKind::Local(tid), ScalarType::I32);
            let acc = self.expr(ExprKind::Local(r.local), r.ty);
            out.push(Stmt::Store { array: arr, indices: vec![tid_e], value: acc, span: r.span });
        }
        out.push(Stmt::Barrier);
        // for (s = threads/2; s > 0; s >>= 1) { if (tid < s) red[tid] = op(red[tid], red[tid+s]); barrier }
        let s = self.local(&format!("_s{n}"), ScalarType::I32);
        let half = self.int32((threads / 2) as i64);
        out.push(Stmt::Assign { local: s, value: half });
        let s_e = self.expr(ExprKind::Local(s), ScalarType::I32);
        let tid_e = self.expr(ExprKind::Local(tid), ScalarType::I32);
        let zero = self.int32(0);
        let more = self.bin(BinaryOp::Gt, s_e, zero);
        let active = self.bin(BinaryOp::Lt, tid_e, s_e);
        let partner_idx = self.bin(BinaryOp::Add, tid_e, s_e);
        let ty = first.ty;
        let mine: Vec<Handle<Expr>> = arrays.iter().map(|&a| self.expr(ExprKind::Load { array: a, indices: vec![tid_e] }, ty)).collect();
        let partner: Vec<Handle<Expr>> =
            arrays.iter().map(|&a| self.expr(ExprKind::Load { array: a, indices: vec![partner_idx] }, ty)).collect();
        let step = match (&mine[..], &partner[..]) {
            ([a, b], [c, d]) => {
                // Both parts from the old values, then both stores.
                let (ac, bd) = (self.bin(BinaryOp::Mul, *a, *c), self.bin(BinaryOp::Mul, *b, *d));
                let (ad, bc) = (self.bin(BinaryOp::Mul, *a, *d), self.bin(BinaryOp::Mul, *b, *c));
                let (re, im) = (self.bin(BinaryOp::Sub, ac, bd), self.bin(BinaryOp::Add, ad, bc));
                let (t_re, t_im) = (self.local(&format!("_re{n}"), ty), self.local(&format!("_im{n}"), ty));
                let (v_re, v_im) = (self.expr(ExprKind::Local(t_re), ty), self.expr(ExprKind::Local(t_im), ty));
                vec![
                    Stmt::Assign { local: t_re, value: re },
                    Stmt::Assign { local: t_im, value: im },
                    Stmt::Store { array: arrays[0], indices: vec![tid_e], value: v_re, span: first.span },
                    Stmt::Store { array: arrays[1], indices: vec![tid_e], value: v_im, span: first.span },
                ]
            }
            _ => {
                let combined = self.combine(first.op, ty, mine[0], partner[0]);
                vec![Stmt::Store { array: arrays[0], indices: vec![tid_e], value: combined, span: first.span }]
            }
        };
        let one = self.int32(1);
        let halved = self.bin(BinaryOp::Shr, s_e, one);
        out.push(Stmt::Loop {
            cond: Some(more),
            test_first: true,
            body: vec![Stmt::If { cond: active, then: step, otherwise: Vec::new() }, Stmt::Barrier],
            continuing: vec![Stmt::Assign { local: s, value: halved }],
            range: None,
        });
        let is_first = self.bin(BinaryOp::Eq, tid_e, zero);
        let writes = parts
            .iter()
            .zip(&arrays)
            .map(|(&(m, r), &arr)| {
                let first_value = self.expr(ExprKind::Load { array: arr, indices: vec![zero] }, r.ty);
                Stmt::Store { array: ArrayRef::Partials(m), indices: vec![block_id], value: first_value, span: r.span }
            })
            .collect();
        out.push(Stmt::If { cond: is_first, then: writes, otherwise: Vec::new() });
        out
    }
}

fn signed_min(ty: ScalarType) -> i64 {
    match ty.size_bytes() {
        1 => i8::MIN as i64,
        2 => i16::MIN as i64,
        4 => i32::MIN as i64,
        _ => i64::MIN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::analysis::uniform::eval_uniform;

    /// `sum += a[i]` over `i in 0..n` with `reduction(+:sum)`.
    pub(crate) fn sum_kernel() -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let sum = b.new_local("sum", ScalarType::F64, LocalKind::Reduction(0));
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(i, zero, n);
        let ie = b.local(i);
        let ld = b.load(1, vec![ie]);
        let acc = b.local(sum);
        let add = b.add(acc, ld);
        b.body.block.push(Stmt::Assign { local: sum, value: add });
        let mut k = kernel("sum_l3", vec![scalar_param("n", 0), array_param("a", vec![None], 1)], vec![d], b.body);
        k.reductions.push(Reduction { op: ReductionOp::Add, ty: ScalarType::F64, local: sum, target_arg: 2, span: Default::default(), part: None });
        k
    }

    fn map(k: Kernel) -> (Module, GridKernel) {
        let mut m = Module::default();
        let h = m.kernels.append(k);
        let g = map_kernel(&m, h, &PassConfig::default());
        (m, g)
    }

    fn count_barriers(block: &[Stmt]) -> usize {
        block
            .iter()
            .map(|s| match s {
                Stmt::Barrier => 1,
                Stmt::If { then, otherwise, .. } => count_barriers(then) + count_barriers(otherwise),
                Stmt::Loop { body, continuing, .. } => count_barriers(body) + count_barriers(continuing),
                _ => 0,
            })
            .sum()
    }

    #[test]
    fn one_dimensional_reduction_has_guard_and_tree_outside_it() {
        let (mut m, g) = map(sum_kernel());
        assert_eq!(g.launch.block, [256, 1, 1]);
        assert_eq!(eval_uniform(&g.body, g.launch.grid[0], &[ParamValue::Int(1000)]), Ok(ParamValue::Int(4)));
        assert_eq!(eval_uniform(&g.body, g.launch.grid[0], &[ParamValue::Int(0)]), Ok(ParamValue::Int(0)));
        assert_eq!(eval_uniform(&g.body, g.launch.grid[1], &[]), Ok(ParamValue::Int(1)));
        assert_eq!(g.shared, vec![SharedArray { name: "_red0".into(), elem: ScalarType::F64, dims: vec![256] }]);
        assert_eq!(g.reductions, vec![GridReduction { op: ReductionOp::Add, ty: ScalarType::F64, target_arg: 2, part: None }]);
        // Identity first, then the guard, with no barrier inside it.
        assert!(matches!(g.body.block[0], Stmt::Assign { value, .. } if g.body.exprs[value].kind == ExprKind::ConstFloat(0.0)));
        let guard = g.body.block.iter().position(|s| matches!(s, Stmt::If { .. })).unwrap();
        let Stmt::If { then, .. } = &g.body.block[guard] else { unreachable!() };
        assert_eq!(count_barriers(then), 0);
        assert_eq!(count_barriers(&g.body.block[guard + 1..]), 2, "one after the store, one per tree step");
        let last = g.body.block.last().unwrap();
        assert!(matches!(last, Stmt::If { then, .. } if matches!(then[0], Stmt::Store { array: ArrayRef::Partials(0), .. })));
        m.grid_kernels.append(g);
        assert_eq!(crate::valid::verify_module(&m), Ok(()));
    }

    fn two_d() -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let j = b.loop_var("j");
        let zero = b.int(0);
        let one = b.int(1);
        let n = b.param(0);
        let m = b.param(1);
        let di = b.dim(i, one, n);
        let dj = b.dim(j, zero, m);
        let ie = b.local(i);
        let je = b.local(j);
        let v = b.float(0.0, ScalarType::F64);
        let st = b.store(2, vec![ie, je], v);
        b.body.block.push(st);
        kernel("zero2d", vec![scalar_param("n", 0), scalar_param("m", 1), array_param("a", vec![None, Some(m)], 2)], vec![di, dj], b.body)
    }

    #[test]
    fn inner_dim_maps_to_x() {
        let (m, g) = map(two_d());
        assert_eq!(g.launch.block, [32, 8, 1]);
        let params = [ParamValue::Int(20), ParamValue::Int(100), ParamValue::Pointer(0)];
        assert_eq!(eval_uniform(&g.body, g.launch.grid[0], &params), Ok(ParamValue::Int(4)));
        assert_eq!(eval_uniform(&g.body, g.launch.grid[1], &params), Ok(ParamValue::Int(3)));
        let Some(Stmt::If { then, .. }) = g.body.block.iter().find(|s| matches!(s, Stmt::If { .. })) else { panic!("no guard") };
        let text = crate::ir::text::grid_kernel_text(&m, &g);
        assert!(text.contains("j = (int)((long long)0 + _gx);"), "{text}");
        assert!(text.contains("i = (int)((long long)1 + _gy);"), "{text}");
        assert!(text.contains("if ((_gx < (long long)m) && (_gy < (long long)n))"), "{text}");
        assert_eq!(then.len(), 3);
    }

    #[test]
    fn size_hints_round_up_to_a_power_of_two() {
        let mut k = sum_kernel();
        k.space[0].size_hint = Some(100);
        assert_eq!(block_shape(&k, &PassConfig::default()), [128, 1, 1]);
        k.space[0].level = LoopLevel::Gang;
        assert_eq!(block_shape(&k, &PassConfig::default()), [256, 1, 1], "num_gangs is not a block size");
    }

    #[test]
    fn empty_space_is_one_thread_with_the_body_unchanged() {
        let mut b = B::new();
        let x = b.new_local("x", ScalarType::I32, LocalKind::Var);
        let seven = b.int(7);
        b.body.block.push(Stmt::Assign { local: x, value: seven });
        let mut k = kernel("serial", vec![], vec![], b.body);
        k.scalar_outputs.push((x, 0));
        let (_, g) = map(k.clone());
        assert_eq!(g.launch.block, [1, 1, 1]);
        assert_eq!(eval_uniform(&g.body, g.launch.grid[0], &[]), Ok(ParamValue::Int(1)));
        assert_eq!(g.body.block, k.body.block);
        assert_eq!(g.scalar_outputs, vec![(x, 0)]);
    }

    #[test]
    fn sequential_kernels_loop_in_one_thread() {
        let mut k = sum_kernel();
        k.sequential_reason = Some(SequentialReason { message: "test".into(), span: Default::default() });
        let (mut m, g) = map(k);
        assert_eq!(g.launch.block, [1, 1, 1]);
        assert!(g.body.block.iter().any(|s| matches!(s, Stmt::Loop { range: Some(_), .. })));
        assert!(matches!(g.body.block.last(), Some(Stmt::Store { array: ArrayRef::Partials(0), .. })));
        m.grid_kernels.append(g);
        assert_eq!(crate::valid::verify_module(&m), Ok(()));
    }

    #[test]
    fn four_dims_fold_the_outer_ones_onto_z_and_verify() {
        let mut b = B::new();
        let vars: Vec<Handle<Local>> = ["a", "b", "c", "d"].iter().map(|n| b.loop_var(n)).collect();
        let zero = b.int(0);
        let n = b.param(0);
        let dims: Vec<ParallelDim> = vars.iter().map(|v| b.dim(*v, zero, n)).collect();
        let idx: Vec<Handle<Expr>> = vars.iter().map(|v| b.local(*v)).collect();
        let v = b.float(1.0, ScalarType::F64);
        let st = b.store(1, idx, v);
        b.body.block.push(st);
        let k = kernel("four", vec![scalar_param("n", 0), array_param("x", vec![None, Some(n), Some(n), Some(n)], 1)], dims, b.body);
        let mut module = Module::default();
        module.kernels.append(k);
        assert_eq!(crate::opt::run_passes(&mut module, &PassConfig::default()), Ok(()));
        let g = &module.grid_kernels[Handle::new(0)];
        assert_eq!(g.launch.block, [32, 4, 2]);
        // Z covers n*n positions: 5*5 = 25 over blocks of 2.
        assert_eq!(eval_uniform(&g.body, g.launch.grid[2], &[ParamValue::Int(5), ParamValue::Pointer(0)]), Ok(ParamValue::Int(13)));
    }

    /// Runs a mapped kernel on the simulator with `f64` arrays; returns the arrays and partials.
    fn simulate(m: &Module, g: &GridKernel, ints: &[i64], arrays: &[Vec<f64>]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let run = crate::runtime::testing::simulate_f64(m, g, ints, arrays);
        (run.arrays, run.partials)
    }

    #[test]
    fn mapped_reduction_sums_on_the_simulator() {
        let (m, g) = map(sum_kernel());
        let a: Vec<f64> = (0..1000).map(|x| x as f64).collect();
        let (_, partials) = simulate(&m, &g, &[1000], &[a]);
        assert_eq!(partials[0].len(), 4);
        assert_eq!(partials[0].iter().sum::<f64>(), 499_500.0);
        // Threads past the end contribute the identity.
        assert_eq!(partials[0][3], (768..1000).map(|x| x as f64).sum::<f64>());
    }

    #[test]
    fn mapped_two_d_kernel_writes_exactly_its_space_on_the_simulator() {
        let (m, g) = map(two_d());
        // n = 5 rows from i = 1 (trip n), m = 40 columns: rows 1..=5 of a 7x40 array are zeroed.
        let a = vec![1.0; 7 * 40];
        let (out, _) = simulate(&m, &g, &[5, 40], &[a]);
        for (k, v) in out[0].iter().enumerate() {
            let row = k / 40;
            assert_eq!(*v, if (1..=5).contains(&row) { 0.0 } else { 1.0 }, "element {k}");
        }
    }

    #[test]
    fn sequential_kernel_sums_in_one_thread_on_the_simulator() {
        let mut k = sum_kernel();
        k.sequential_reason = Some(SequentialReason { message: "test".into(), span: Default::default() });
        let (m, g) = map(k);
        let a: Vec<f64> = (0..10).map(|x| x as f64).collect();
        let (_, partials) = simulate(&m, &g, &[10], &[a]);
        assert_eq!(partials, vec![vec![45.0]]);
    }
}
