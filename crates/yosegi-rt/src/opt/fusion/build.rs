//! The fused grid kernel of a legal chain: one block per tile of the iteration space, each
//! kernel of the chain run in turn by the block's threads over its tile widened by its
//! redundant iterations, its intermediate arrays kept in shared-memory exchange arrays, a
//! barrier between kernels.
//!
//! Coordinates: along every parallel dim the block covers the values `[lo, lo + T)` of the
//! loop variable, with `lo = O + blockIdx * T` and `O` the smallest start of the chain's
//! loops. Kernel `m` runs the values `[lo - L_m, lo + T + R_m)` that lie in its own loop's
//! range; its global stores happen only at the block's own values (`[lo, lo + T)`), so every
//! element is written by one block, the one the unfused kernel's thread would be in. A kernel
//! that reads an intermediate array at index `v + e` takes it from the exchange array when the
//! writer's loop ran the value `v + e - c` (the writer stores at `v + c`), and from global
//! memory otherwise: there the writer never stores, so global memory holds what the unfused
//! program would read.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::diag::Span;
use crate::ir::*;

use super::chain::ChainPlan;

/// Threads per block of a fused grid kernel (one-dimensional: they step through each kernel's
/// widened tile together).
pub const THREADS: u32 = 256;

/// Own iterations per block, outermost dim first: the candidates whose exchange arrays fit in
/// shared memory and whose tile is at least as wide as each kernel's redundant iterations are
/// compared by the iterations the chain runs per own iteration, and the first of the fewest is
/// used (a chain whose dependences run along `i` only wants a tile long in `i`).
pub fn tile_candidates(dims: usize) -> &'static [&'static [u32]] {
    match dims {
        1 => &[&[2048], &[1024], &[512], &[256]],
        2 => &[&[16, 64], &[32, 32], &[8, 128], &[4, 256], &[8, 64], &[16, 32], &[4, 64], &[8, 32], &[4, 32]],
        _ => &[
            &[4, 8, 32],
            &[2, 16, 32],
            &[1, 16, 64],
            &[1, 32, 32],
            &[4, 4, 64],
            &[2, 8, 32],
            &[1, 8, 64],
            &[1, 16, 32],
            &[2, 4, 32],
            &[1, 4, 32],
            // For chains that reach along every dim (the steps of a 3-D stencil).
            &[8, 8, 16],
            &[4, 8, 16],
        ],
    }
}

/// The tile and the exchange arrays of a fused chain.
#[derive(Clone, Debug)]
pub struct Layout {
    pub tile: Vec<u32>,
    /// Flat shared arrays; an array is reused by a later intermediate of the same element type
    /// once its last reader has passed (a free list ordered by last use).
    pub buffers: Vec<SharedArray>,
    /// Region arg of an intermediate array -> its buffer.
    pub buffer_of: BTreeMap<u32, usize>,
}

impl Layout {
    pub fn shared_bytes(&self) -> u64 {
        self.buffers.iter().map(SharedArray::bytes).sum()
    }
}

/// Extents of the widened tile member `m` runs, outermost dim first.
fn widened(plan: &ChainPlan, tile: &[u32], m: usize) -> Vec<u64> {
    tile.iter().zip(&plan.extension[m]).map(|(&t, &(l, r))| t as u64 + l as u64 + r as u64).collect()
}

/// The tile whose exchange arrays fit in `budget` bytes and that runs the fewest iterations per
/// own iteration (see [`tile_candidates`]), or why none fits.
pub fn choose_layout(module: &Module, plan: &ChainPlan, budget: u64) -> Result<Layout, String> {
    let mut smallest = u64::MAX;
    let mut best: Option<(f64, Layout)> = None;
    for &tile in tile_candidates(plan.dims) {
        if plan.extension.iter().any(|ext| ext.iter().zip(tile).any(|(&(l, r), &t)| l + r > t as i64)) {
            continue;
        }
        let layout = layout_for(module, plan, tile);
        if layout.shared_bytes() > budget {
            smallest = smallest.min(layout.shared_bytes());
            continue;
        }
        let own: f64 = tile.iter().map(|&t| t as f64).product();
        let work: f64 = (0..plan.members.len()).map(|m| widened(plan, tile, m).iter().product::<u64>() as f64 / own).sum();
        if best.as_ref().is_none_or(|(w, _)| work < *w - 1e-9) {
            best = Some((work, layout));
        }
    }
    match best {
        Some((_, layout)) => Ok(layout),
        None if smallest == u64::MAX => Err("the redundant iterations are wider than every tile".to_string()),
        None => Err(format!("its exchange arrays would take {smallest} bytes of shared memory, over the {budget} a block may use")),
    }
}

/// The exchange arrays of `plan` with this tile.
fn layout_for(module: &Module, plan: &ChainPlan, tile: &[u32]) -> Layout {
    let mut buffers: Vec<(SharedArray, usize)> = Vec::new();
    let mut buffer_of = BTreeMap::new();
    let mut by_producer: Vec<(&u32, &super::chain::Intermediate)> = plan.intermediates.iter().collect();
    by_producer.sort_by_key(|(arg, i)| (i.producer, **arg));
    for (&arg, inter) in by_producer {
        let elem = super::chain::elem_of(module, &plan.members[inter.producer..=inter.producer], plan.versions.real(arg))
            .expect("an intermediate is an array param of its writer");
        let len = widened(plan, tile, inter.producer).iter().product::<u64>() as u32;
        let free = buffers.iter().position(|(b, busy_until)| b.elem == elem && *busy_until < inter.producer);
        let n = match free {
            Some(n) => {
                buffers[n].0.dims[0] = buffers[n].0.dims[0].max(len);
                buffers[n].1 = inter.last_reader;
                n
            }
            None => {
                buffers.push((SharedArray { name: format!("_x{}", buffers.len()), elem, dims: vec![len] }, inter.last_reader));
                buffers.len() - 1
            }
        };
        buffer_of.insert(arg, n);
    }
    Layout { tile: tile.to_vec(), buffers: buffers.into_iter().map(|(b, _)| b).collect(), buffer_of }
}

/// The fused grid kernel. `without_stores` are intermediates whose global stores it leaves out.
pub fn build_fused(
    module: &Module,
    plan: &ChainPlan,
    layout: &Layout,
    without_stores: &BTreeSet<u32>,
    name: String,
    estimated_ratio: f64,
    notes: Vec<String>,
) -> GridKernel {
    build_steps(module, plan, layout, without_stores, &BTreeSet::new(), name, estimated_ratio, notes).0
}

/// The grid kernel of a chain (of steps, `plan.versions`): `without_stores` are the versions
/// whose global stores it leaves out, `outputs` those it stores through a second param of their
/// array (named `<array>_next`), which the runtime binds to a second buffer. Also returns the
/// `(output, input)` param pairs.
#[allow(clippy::too_many_arguments)]
pub fn build_steps(
    module: &Module,
    plan: &ChainPlan,
    layout: &Layout,
    without_stores: &BTreeSet<u32>,
    outputs: &BTreeSet<u32>,
    name: String,
    estimated_ratio: f64,
    notes: Vec<String>,
) -> (GridKernel, Vec<(u32, u32)>) {
    let first = &module.kernels[plan.members[0]];
    let narrow = plan.members.iter().all(|&h| {
        let k = &module.kernels[h];
        k.space.iter().all(|d| k.body.locals[d.var].ty.size_bytes() <= 4)
    });
    let ct = if narrow { ScalarType::I32 } else { ScalarType::I64 };
    let reduction_base = plan
        .members
        .iter()
        .scan(0u32, |next, &h| {
            let base = *next;
            *next += module.kernels[h].reductions.len() as u32;
            Some(base)
        })
        .collect();
    let mut b = Builder {
        module,
        plan,
        layout,
        body: Body::default(),
        params: Vec::new(),
        param_of_arg: HashMap::new(),
        domains: Vec::new(),
        lo: Vec::new(),
        reduction_base,
        ct,
        outputs: outputs.clone(),
        out_params: HashMap::new(),
    };
    let dims = plan.dims;

    // Each kernel's loop range per dim, from its whole trip (a partitioned kernel's source
    // start and trip: the fused kernel runs on one device).
    for (m, &h) in plan.members.iter().enumerate() {
        let k = &module.kernels[h];
        let mut import = Import::new(k, m, false);
        let mut ranges = Vec::new();
        for d in 0..dims {
            let (start, trip) = match k.partitions.iter().find(|p| p.dim as usize == d) {
                Some(p) => (p.start, p.trip),
                None => (k.space[d].start, k.space[d].trip_count),
            };
            let start = import.expr(&mut b, start);
            let start = b.cast(start, ScalarType::I64);
            let trip = import.expr(&mut b, trip);
            let trip = b.cast(trip, ScalarType::I64);
            let zero = b.int64(0);
            let trip = b.bin(BinaryOp::Max, trip, zero);
            let end = b.bin(BinaryOp::Add, start, trip);
            ranges.push((start, end));
        }
        b.domains.push(ranges);
    }

    // The grid: tiles of `T` values from the smallest start to the largest end of each dim.
    let one = b.int64(1);
    let mut grid = [one, one, one];
    let mut block = Vec::new();
    let tid = b.expr(ExprKind::ThreadIdx(Axis::X), ScalarType::I32);
    let tid = b.cast(tid, b.ct);
    for d in 0..dims {
        let axis = AXES[dims - 1 - d];
        let mut origin = b.domains[0][d].0;
        let mut end = b.domains[0][d].1;
        for m in 1..plan.members.len() {
            let (s, e) = b.domains[m][d];
            origin = b.bin(BinaryOp::Min, origin, s);
            end = b.bin(BinaryOp::Max, end, e);
        }
        let t = layout.tile[d] as i64;
        let extent = b.bin(BinaryOp::Sub, end, origin);
        let tm1 = b.int64(t - 1);
        let padded = b.bin(BinaryOp::Add, extent, tm1);
        let tc = b.int64(t);
        let blocks = b.bin(BinaryOp::Div, padded, tc);
        let zero = b.int64(0);
        grid[axis.index()] = b.bin(BinaryOp::Max, blocks, zero);
        let lo = b.local(&format!("_lo{d}"), b.ct);
        let bid = b.expr(ExprKind::BlockIdx(axis), ScalarType::I32);
        let bid = b.cast(bid, b.ct);
        let tile = b.int(t);
        let offset = b.bin(BinaryOp::Mul, bid, tile);
        let origin = b.cast(origin, b.ct);
        let value = b.bin(BinaryOp::Add, origin, offset);
        block.push(Stmt::Assign { local: lo, value });
        b.lo.push(lo);
    }
    // From here on the loop ranges are used in the coordinate type.
    let ct = b.ct;
    for m in 0..b.domains.len() {
        for d in 0..dims {
            let (start, end) = b.domains[m][d];
            let start = b.cast(start, ct);
            let end = b.cast(end, ct);
            b.domains[m][d] = (start, end);
        }
    }

    let t_local = b.local("_t", b.ct);
    let mut reductions: Vec<Reduction> = Vec::new();
    for (m, &h) in plan.members.iter().enumerate() {
        let k = &module.kernels[h];
        let ext = &plan.extension[m];
        let widths = widened(plan, &layout.tile, m);
        let total: u64 = widths.iter().product();
        let redundant = ext.iter().any(|&(l, r)| l != 0 || r != 0);
        let mut import = Import::new(k, m, true);

        // Point `_t` of the widened tile: its values `v` per dim, outermost first.
        let mut point = Vec::new();
        let mut values = Vec::new();
        let mut stride = 1u64;
        let mut per_dim = vec![None; dims];
        for d in (0..dims).rev() {
            let t = b.expr(ExprKind::Local(t_local), b.ct);
            let q = if stride == 1 {
                t
            } else {
                let s = b.int(stride as i64);
                b.bin(BinaryOp::Div, t, s)
            };
            let o = if d == 0 {
                q
            } else {
                let w = b.int(widths[d] as i64);
                b.bin(BinaryOp::Rem, q, w)
            };
            let lo = b.expr(ExprKind::Local(b.lo[d]), b.ct);
            let base = b.minus(lo, ext[d].0);
            let v = b.bin(BinaryOp::Add, base, o);
            let local = b.local(&format!("_v{m}_{d}"), b.ct);
            point.push(Stmt::Assign { local, value: v });
            per_dim[d] = Some(local);
            stride *= widths[d];
        }
        for local in per_dim.into_iter().flatten() {
            values.push(local);
        }
        let value_exprs: Vec<Handle<Expr>> = values.iter().map(|&v| b.expr(ExprKind::Local(v), b.ct)).collect();
        let inside = b.in_range(m, &value_exprs);
        let own = if redundant {
            let conds = value_exprs.iter().enumerate().map(|(d, &v)| b.near_own(d, v, 0, 0)).collect();
            b.all(conds)
        } else {
            None
        };
        for r in &k.reductions {
            let local = import.local(&mut b, r.local);
            reductions.push(Reduction { local, ..r.clone() });
        }
        import.values = values.clone();
        import.own = own;
        import.without_stores = without_stores.clone();

        let mut then = Vec::new();
        for (dim, &value) in k.space.iter().zip(&values) {
            let var = import.local(&mut b, dim.var);
            let v = b.expr(ExprKind::Local(value), b.ct);
            let ty = b.body.locals[var].ty;
            let value = b.cast(v, ty);
            then.push(Stmt::Assign { local: var, value });
        }
        // `firstprivate` copies start from the host value at every iteration, as each unfused
        // thread's did (a thread here runs several iterations).
        for (l, local) in k.body.locals.iter() {
            if let LocalKind::FirstPrivate(p) = local.kind
                && local.array_dims.is_none()
            {
                let mine = import.local(&mut b, l);
                let fp = b.param(k, p);
                let ty = match &b.params[fp as usize].kind {
                    ParamKind::Scalar(t) => *t,
                    _ => local.ty,
                };
                let value = b.expr(ExprKind::Param(fp), ty);
                let value = b.cast(value, local.ty);
                then.push(Stmt::Assign { local: mine, value });
            }
        }
        import.ranges = super::slice::statement_ranges(module, plan, m);
        then.extend(import.top_block(&mut b, &k.body.block));
        let mut body = point;
        body.push(Stmt::If { cond: inside, then, otherwise: Vec::new() });

        block.push(Stmt::Assign { local: t_local, value: tid });
        let t = b.expr(ExprKind::Local(t_local), b.ct);
        let n = b.int(total as i64);
        let cond = b.bin(BinaryOp::Lt, t, n);
        let step = b.int(THREADS as i64);
        let next = b.bin(BinaryOp::Add, t, step);
        block.push(Stmt::Loop {
            cond: Some(cond),
            test_first: true,
            body,
            continuing: vec![Stmt::Assign { local: t_local, value: next }],
            range: None,
        });
        if m + 1 < plan.members.len() {
            block.push(Stmt::Barrier);
        }
    }
    // Reductions: every accumulator starts at its identity before the kernels run, and each
    // block combines its threads' values after the last one (only kernels without redundant
    // iterations have reductions, so each iteration counts once).
    let mut shared = layout.buffers.clone();
    if !reductions.is_empty() {
        let (inits, combine) = crate::opt::mapping::reduction_code(&mut b.body, &reductions, &mut shared, [THREADS, 1, 1]);
        block.splice(0..0, inits);
        block.extend(combine);
    }
    b.body.block = block;
    let grid_reductions =
        reductions.iter().map(|r| GridReduction { op: r.op, ty: r.ty, target_arg: r.target_arg, part: r.part }).collect();

    let renamed: Vec<(u32, u32)> = b
        .out_params
        .iter()
        .map(|(arg, &out)| (out, b.param_of_arg.get(arg).copied().expect("a renamed array is read through its own param")))
        .collect();
    let grid = GridKernel {
        name,
        span: first.span,
        source: plan.members[0],
        params: b.params,
        body: b.body,
        shared,
        launch: LaunchShape { block: [THREADS, 1, 1], grid },
        reductions: grid_reductions,
        scalar_outputs: Vec::new(),
        axes: Vec::new(),
        variant: VariantInfo { kind: VariantKind::Fused, estimated_ratio, notes, staged_params: Vec::new() },
    };
    (grid, renamed)
}

const AXES: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

struct Builder<'m> {
    module: &'m Module,
    plan: &'m ChainPlan,
    layout: &'m Layout,
    body: Body,
    params: Vec<Param>,
    param_of_arg: HashMap<u32, u32>,
    /// Per member, per dim: its loop's first value and end (`long long`).
    domains: Vec<Vec<(Handle<Expr>, Handle<Expr>)>>,
    /// Per dim: the block's first own value.
    lo: Vec<Handle<Local>>,
    /// Per member: the index of its first reduction among the fused kernel's.
    reduction_base: Vec<u32>,
    /// The type of the coordinates the body computes with: `int` when every kernel's loop
    /// variables are (their values fit), else `long long` (64-bit integer arithmetic costs
    /// several instructions per operation on a GPU).
    ct: ScalarType,
    /// Versions stored through a second param of their array (`build_steps`); their arrays are
    /// read only through the first param, which is then read-only.
    outputs: BTreeSet<u32>,
    /// Region arg -> the second param.
    out_params: HashMap<u32, u32>,
}

impl Builder<'_> {
    fn expr(&mut self, kind: ExprKind, ty: ScalarType) -> Handle<Expr> {
        self.body.add_expr(kind, ty, Span::default())
    }
    /// `e - c` (`e` itself when `c` is 0), in the coordinate type.
    fn minus(&mut self, e: Handle<Expr>, c: i64) -> Handle<Expr> {
        if c == 0 {
            return e;
        }
        let c = self.int(c);
        self.bin(BinaryOp::Sub, e, c)
    }
    /// A constant of the coordinate type.
    fn int(&mut self, v: i64) -> Handle<Expr> {
        self.expr(ExprKind::ConstInt(v), self.ct)
    }
    fn int64(&mut self, v: i64) -> Handle<Expr> {
        self.expr(ExprKind::ConstInt(v), ScalarType::I64)
    }
    fn bin(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.body.add_binary(op, lhs, rhs)
    }
    fn cast(&mut self, arg: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        self.body.add_cast(arg, ty)
    }
    fn local(&mut self, name: &str, ty: ScalarType) -> Handle<Local> {
        self.body.locals.append(Local { name: name.to_string(), ty, array_dims: None, kind: LocalKind::Var, span: Span::default() })
    }

    /// Whether `values` (one per dim) lie in member `m`'s loop ranges.
    fn in_range(&mut self, m: usize, values: &[Handle<Expr>]) -> Handle<Expr> {
        let conds = values
            .iter()
            .enumerate()
            .map(|(d, &v)| {
                let (start, end) = self.domains[m][d];
                self.between(v, start, end)
            })
            .collect();
        self.all(conds).expect("a chain has dims")
    }

    /// `start <= v && v < end`.
    fn between(&mut self, v: Handle<Expr>, start: Handle<Expr>, end: Handle<Expr>) -> Handle<Expr> {
        let ge = self.bin(BinaryOp::Ge, v, start);
        let lt = self.bin(BinaryOp::Lt, v, end);
        self.bin(BinaryOp::LogAnd, ge, lt)
    }

    /// Whether value `v` of dim `d` lies among the block's own values widened by `left` before
    /// and `right` after.
    fn near_own(&mut self, d: usize, v: Handle<Expr>, left: i64, right: i64) -> Handle<Expr> {
        let lo = self.expr(ExprKind::Local(self.lo[d]), self.ct);
        let first = self.minus(lo, left);
        let lo = self.expr(ExprKind::Local(self.lo[d]), self.ct);
        let width = self.int(self.layout.tile[d] as i64 + right);
        let end = self.bin(BinaryOp::Add, lo, width);
        self.between(v, first, end)
    }

    /// The conjunction of `conds` (`None` when there are none).
    fn all(&mut self, conds: Vec<Handle<Expr>>) -> Option<Handle<Expr>> {
        conds.into_iter().reduce(|prev, c| self.bin(BinaryOp::LogAnd, prev, c))
    }

    /// The index (`int`) in member `m`'s exchange array of the iteration at `values`, one per
    /// dim: row-major over its widened tile, which starts `L_m` values before the block's.
    fn exchange_index(&mut self, m: usize, values: &[Handle<Expr>]) -> Handle<Expr> {
        let ext = self.plan.extension[m].clone();
        let widths = widened(self.plan, &self.layout.tile, m);
        let mut linear = None;
        for (d, &v) in values.iter().enumerate() {
            let lo = self.expr(ExprKind::Local(self.lo[d]), self.ct);
            let base = self.minus(lo, ext[d].0);
            let offset = self.bin(BinaryOp::Sub, v, base);
            linear = Some(match linear {
                None => offset,
                Some(prev) => {
                    let w = self.int(widths[d] as i64);
                    let scaled = self.bin(BinaryOp::Mul, prev, w);
                    self.bin(BinaryOp::Add, scaled, offset)
                }
            });
        }
        self.cast(linear.expect("a chain has dims"), ScalarType::I32)
    }

    /// The fused kernel's param for param `p` of member kernel `k` (one per region arg).
    fn param(&mut self, k: &Kernel, p: u32) -> u32 {
        self.param_as(k, p, k.params[p as usize].arg)
    }

    /// The fused kernel's param for region arg `arg`, which param `p` of `k` stands for (in a
    /// chain of steps whose loop swaps two arrays, each names the other's in every other step):
    /// its kind is `p`'s, its name that of a member's param bound to `arg`.
    fn param_as(&mut self, k: &Kernel, p: u32, arg: u32) -> u32 {
        if let Some(&fp) = self.param_of_arg.get(&arg) {
            return fp;
        }
        let own = &k.params[p as usize];
        let name = if own.arg == arg {
            own.name.clone()
        } else {
            super::chain::param_of(self.module, &self.plan.members, arg).map_or_else(|| format!("{}_{arg}", own.name), |q| q.name.clone())
        };
        let param = &Param { name, kind: own.kind.clone(), arg };
        let kind = match &param.kind {
            ParamKind::Array { elem, dims, restrict, read_only } => {
                let mut import = Import::new(k, usize::MAX, false);
                let dims = dims.iter().map(|d| d.map(|e| import.expr(self, e))).collect();
                // Every kernel of the chain that names the array sees it read-only only when
                // none of them writes it (in a chain of steps: no step makes a version of it).
                let written = self.plan.members.iter().any(|&m| {
                    let mk = &self.module.kernels[m];
                    mk.params.iter().any(|q| q.arg == param.arg && matches!(q.kind, ParamKind::Array { read_only: false, .. }))
                }) || self.plan.versions.real.values().any(|&r| r == param.arg);
                let renamed = self.outputs.iter().any(|&v| self.plan.versions.real(v) == param.arg);
                ParamKind::Array { elem: *elem, dims, restrict: *restrict, read_only: renamed || (*read_only && !written) }
            }
            other => other.clone(),
        };
        // `param` may have been made while importing the dims (an extent naming itself cannot
        // happen, but another param can): look again before adding.
        if let Some(&fp) = self.param_of_arg.get(&param.arg) {
            return fp;
        }
        self.params.push(Param { name: param.name.clone(), kind, arg: param.arg });
        let fp = (self.params.len() - 1) as u32;
        self.param_of_arg.insert(param.arg, fp);
        fp
    }

    /// The param a store of version `version` through param `p` of `k` goes to: `None` when
    /// its global store is left out, the array's second param for an output version.
    fn store_target(&mut self, k: &Kernel, p: u32, version: u32, without_stores: &BTreeSet<u32>) -> Option<u32> {
        if without_stores.contains(&version) {
            return None;
        }
        let arg = self.plan.versions.real(version);
        let fp = self.param_as(k, p, arg);
        if !self.outputs.contains(&version) {
            return Some(fp);
        }
        if let Some(&out) = self.out_params.get(&arg) {
            return Some(out);
        }
        let mut out = self.params[fp as usize].clone();
        out.name = format!("{}_next", out.name);
        if let ParamKind::Array { read_only, .. } = &mut out.kind {
            *read_only = false;
        }
        self.params.push(out);
        let out = (self.params.len() - 1) as u32;
        self.out_params.insert(arg, out);
        Some(out)
    }
}

/// Copies one member kernel's expressions, locals and statements into the fused body.
struct Import<'k> {
    k: &'k Kernel,
    member: usize,
    /// Whether loads of intermediates and stores are rewritten (the body), or copied as they
    /// are (loop bounds, array extents).
    rewrite: bool,
    exprs: HashMap<Handle<Expr>, Handle<Expr>>,
    locals: HashMap<Handle<Local>, Handle<Local>>,
    /// The iteration's values per dim (`long long` locals).
    values: Vec<Handle<Local>>,
    /// Whether the iteration is one of the block's own (`None`: the member runs no redundant
    /// iteration, so every one is).
    own: Option<Handle<Expr>>,
    without_stores: BTreeSet<u32>,
    /// Per top-level statement of the body: the redundant iterations it runs, where fewer than
    /// the member's (`super::slice`).
    ranges: Vec<Option<super::slice::Range>>,
}

impl<'k> Import<'k> {
    fn new(k: &'k Kernel, member: usize, rewrite: bool) -> Import<'k> {
        Import {
            k,
            member,
            rewrite,
            exprs: HashMap::new(),
            locals: HashMap::new(),
            values: Vec::new(),
            own: None,
            without_stores: BTreeSet::new(),
            ranges: Vec::new(),
        }
    }

    /// The member's body, each statement run only on the iterations its slice needs.
    fn top_block(&mut self, b: &mut Builder, block: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for (i, stmt) in block.iter().enumerate() {
            let mut mine = Vec::new();
            self.stmt(b, stmt, &mut mine);
            let range = self.ranges.get(i).cloned().flatten();
            match range.and_then(|range| self.within_needed(b, &range)) {
                Some(cond) => out.push(Stmt::If { cond, then: mine, otherwise: Vec::new() }),
                None => out.extend(mine),
            }
        }
        out
    }

    fn local(&mut self, b: &mut Builder, l: Handle<Local>) -> Handle<Local> {
        if let Some(&mine) = self.locals.get(&l) {
            return mine;
        }
        let mut local = self.k.body.locals[l].clone();
        match local.kind {
            LocalKind::FirstPrivate(p) => local.kind = LocalKind::FirstPrivate(b.param(self.k, p)),
            LocalKind::Reduction(n) => local.kind = LocalKind::Reduction(b.reduction_base[self.member] + n),
            _ => {}
        }
        local.name = format!("{}_k{}", local.name, self.member);
        let mine = b.body.locals.append(local);
        self.locals.insert(l, mine);
        mine
    }

    fn expr(&mut self, b: &mut Builder, h: Handle<Expr>) -> Handle<Expr> {
        if let Some(&mine) = self.exprs.get(&h) {
            return mine;
        }
        let e = &self.k.body.exprs[h];
        let (ty, span) = (e.ty, e.span);
        let operands: Vec<Handle<Expr>> = e.kind.operands().into_iter().map(|o| self.expr(b, o)).collect();
        let mine = match &e.kind {
            ExprKind::Param(p) => {
                let fp = b.param(self.k, *p);
                b.body.add_expr(ExprKind::Param(fp), ty, span)
            }
            ExprKind::Local(l) => {
                let l = self.local(b, *l);
                b.body.add_expr(ExprKind::Local(l), ty, span)
            }
            ExprKind::Load { array, .. } => {
                let array = self.array(b, *array);
                let global = b.body.add_expr(ExprKind::Load { array, indices: operands.clone() }, ty, span);
                match self.exchange_read(b, *array_of(&e.kind), &operands, ty) {
                    Some((inside, shared)) => b.body.add_expr(ExprKind::Select { cond: inside, then: shared, otherwise: global }, ty, span),
                    None => global,
                }
            }
            kind => b.body.add_expr(kind.with_operands(&operands), ty, span),
        };
        self.exprs.insert(h, mine);
        mine
    }

    fn array(&mut self, b: &mut Builder, array: ArrayRef) -> ArrayRef {
        match array {
            ArrayRef::Param(p) => {
                let role = b.plan.versions.role(self.member, self.k.params[p as usize].arg);
                ArrayRef::Param(b.param_as(self.k, p, role))
            }
            ArrayRef::Local(l) => ArrayRef::Local(self.local(b, l)),
            other => other,
        }
    }

    /// The intermediate written by an earlier member that a load of `array` reads, if any.
    fn intermediate(&self, b: &Builder, array: ArrayRef) -> Option<(u32, super::chain::Intermediate)> {
        let ArrayRef::Param(p) = array else { return None };
        let arg = b.plan.versions.read(self.member, self.k.params[p as usize].arg);
        b.plan.intermediates.get(&arg).map(|i| (arg, i.clone()))
    }

    /// For a load of an intermediate array another member wrote: whether the writer ran the
    /// value read (then it is in the exchange array) and the shared-memory load.
    fn exchange_read(
        &mut self,
        b: &mut Builder,
        array: ArrayRef,
        indices: &[Handle<Expr>],
        ty: ScalarType,
    ) -> Option<(Handle<Expr>, Handle<Expr>)> {
        if !self.rewrite {
            return None;
        }
        let (arg, inter) = self.intermediate(b, array)?;
        if inter.producer >= self.member {
            return None;
        }
        let q = inter.producer;
        let dims = b.plan.dims;
        // The writer's iteration values: index minus the writer's store offset, per dim.
        let mut writer_values = vec![None; dims];
        for (m, &(d, c)) in inter.store.dims.iter().enumerate() {
            let index = b.cast(indices[m], b.ct);
            writer_values[d] = Some(b.minus(index, c));
        }
        let writer_values: Vec<Handle<Expr>> = writer_values.into_iter().map(|v| v.expect("a unit access covers every dim")).collect();
        let inside = b.in_range(q, &writer_values);
        let index = b.exchange_index(q, &writer_values);
        let buffer = b.layout.buffer_of[&arg] as u32;
        let shared = b.expr(ExprKind::Load { array: ArrayRef::Shared(buffer), indices: vec![index] }, ty);
        Some((inside, shared))
    }

    /// Whether the current iteration lies within `needed` redundant iterations of the block's
    /// own (`None` when that is every iteration the member runs).
    fn within_needed(&self, b: &mut Builder, needed: &[(i64, i64)]) -> Option<Handle<Expr>> {
        let ext = b.plan.extension[self.member].clone();
        let mut conds = Vec::new();
        for (d, (&(l, r), &(el, er))) in needed.iter().zip(&ext).enumerate() {
            if l < el || r < er {
                let v = b.expr(ExprKind::Local(self.values[d]), b.ct);
                conds.push(b.near_own(d, v, l, r));
            }
        }
        b.all(conds)
    }

    /// The index into this member's exchange array of its current iteration.
    fn own_exchange_index(&self, b: &mut Builder) -> Handle<Expr> {
        let values: Vec<Handle<Expr>> = self.values.iter().map(|&v| b.expr(ExprKind::Local(v), b.ct)).collect();
        b.exchange_index(self.member, &values)
    }

    fn block(&mut self, b: &mut Builder, block: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for stmt in block {
            self.stmt(b, stmt, &mut out);
        }
        out
    }

    fn guarded(&self, stmt: Stmt) -> Stmt {
        match self.own {
            Some(own) => Stmt::If { cond: own, then: vec![stmt], otherwise: Vec::new() },
            None => stmt,
        }
    }

    fn stmt(&mut self, b: &mut Builder, stmt: &Stmt, out: &mut Vec<Stmt>) {
        match stmt {
            Stmt::Assign { local, value } => {
                let value = self.expr(b, *value);
                let local = self.local(b, *local);
                out.push(Stmt::Assign { local, value });
            }
            Stmt::Store { array: ArrayRef::Param(p), indices, value, span } => {
                let indices: Vec<Handle<Expr>> = indices.iter().map(|&i| self.expr(b, i)).collect();
                let value = self.expr(b, *value);
                let arg = b.plan.versions.write(self.member, self.k.params[*p as usize].arg);
                let target = b.store_target(self.k, *p, arg, &self.without_stores);
                let writes_exchange = b.plan.intermediates.get(&arg).is_some_and(|i| i.producer == self.member);
                if !writes_exchange {
                    // (A version no later member reads, of a step before the last: nothing
                    // reads it, the last step's store replaces it.)
                    if let Some(fp) = target {
                        out.push(self.guarded(Stmt::Store { array: ArrayRef::Param(fp), indices, value, span: *span }));
                    } else {
                        out.push(self.guarded(Stmt::Eval(value)));
                    }
                    return;
                }
                // The value goes to the exchange array at every iteration the member runs where
                // a reader needs it, and to global memory at the block's own ones (unless
                // nothing reads it there).
                let ty = b.body.exprs[value].ty;
                let tmp = b.local(&format!("_w{}_{}", self.member, arg), ty);
                let mut stores = vec![Stmt::Assign { local: tmp, value }];
                let read = b.expr(ExprKind::Local(tmp), ty);
                let index = self.own_exchange_index(b);
                let buffer = b.layout.buffer_of[&arg] as u32;
                stores.push(Stmt::Store { array: ArrayRef::Shared(buffer), indices: vec![index], value: read, span: *span });
                if let Some(fp) = target {
                    stores.push(self.guarded(Stmt::Store { array: ArrayRef::Param(fp), indices, value: read, span: *span }));
                }
                match self.within_needed(b, &b.plan.intermediates[&arg].needed.clone()) {
                    Some(cond) => out.push(Stmt::If { cond, then: stores, otherwise: Vec::new() }),
                    None => out.extend(stores),
                }
            }
            Stmt::Store { array, indices, value, span } => {
                let indices = indices.iter().map(|&i| self.expr(b, i)).collect();
                let value = self.expr(b, *value);
                let array = self.array(b, *array);
                out.push(Stmt::Store { array, indices, value, span: *span });
            }
            Stmt::Atomic { op, array, indices, value, capture, span } => {
                let indices = indices.iter().map(|&i| self.expr(b, i)).collect();
                let value = self.expr(b, *value);
                let array = self.array(b, *array);
                let capture = capture.map(|c| self.local(b, c));
                out.push(Stmt::Atomic { op: *op, array, indices, value, capture, span: *span });
            }
            Stmt::If { cond, then, otherwise } => {
                let cond = self.expr(b, *cond);
                let then = self.block(b, then);
                let otherwise = self.block(b, otherwise);
                out.push(Stmt::If { cond, then, otherwise });
            }
            Stmt::Loop { cond, test_first, body, continuing, range } => {
                let cond = cond.map(|c| self.expr(b, c));
                let range = range.as_ref().map(|r| LoopRange {
                    var: self.local(b, r.var),
                    start: self.expr(b, r.start),
                    end: self.expr(b, r.end),
                    step: r.step,
                });
                let body = self.block(b, body);
                let continuing = self.block(b, continuing);
                out.push(Stmt::Loop { cond, test_first: *test_first, body, continuing, range });
            }
            Stmt::Eval(e) => {
                let e = self.expr(b, *e);
                out.push(Stmt::Eval(e));
            }
            Stmt::Return(e) => {
                let e = e.map(|e| self.expr(b, e));
                out.push(Stmt::Return(e));
            }
            Stmt::Break => out.push(Stmt::Break),
            Stmt::Continue => out.push(Stmt::Continue),
            Stmt::Barrier => out.push(Stmt::Barrier),
        }
    }
}

fn array_of(kind: &ExprKind) -> &ArrayRef {
    match kind {
        ExprKind::Load { array, .. } => array,
        _ => unreachable!("called on loads"),
    }
}
