//! The SIMT interpreter: runs one block of a grid kernel with its threads in lockstep. The
//! statement tree is walked once per block; every expression is evaluated into a vector with
//! one value per thread (lane), under an active mask. `If` splits the mask, loops iterate while
//! any lane is active, `Break`/`Continue`/`Return` retire lanes, and short-circuit operators and
//! `Select` evaluate each side only on the lanes that need it (a guarded load never faults).
//! Value vectors come from a per-block pool, so evaluation does not allocate per node.

use std::sync::Arc;
use std::time::Instant;

use crate::analysis::promotion::Promoted;
use crate::diag::Span;
use crate::ir::{
    ArrayRef, AtomicOp, BinaryOp, Body, Expr, ExprKind, GridKernel, Handle, LocalKind, Module, ScalarType, Stmt,
};
use crate::runtime::stats::DeviceCounters;
use crate::ir::value::{self, ArithError};

use super::cache::{SECTORS_PER_LINE, SectorCache};
use super::memory::SimBuffer;
use super::rounds::RoundTally;

/// A kernel fault before the kernel's name is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub message: String,
    pub span: Span,
    pub help: Option<String>,
}

fn fault(span: Span, message: String) -> Fault {
    Fault { message, span, help: None }
}

/// A global array param bound to device memory.
pub struct ArrayBinding {
    pub buffer: Arc<SimBuffer>,
    /// Byte offset of the param's element 0 in the buffer.
    pub offset: i64,
    pub elem: ScalarType,
    /// Every dimension's length; the first is unused for addressing.
    pub dims: Vec<i64>,
    pub name: String,
    /// A row table (`ParamKind::RowTable`): `buffer` holds the rows' device addresses (8 bytes
    /// each, from `offset`), and `elem` is the rows' element type.
    pub row_table: bool,
}

/// Everything a launch shares between its blocks.
pub struct LaunchCtx<'a> {
    pub module: &'a Module,
    pub kernel: &'a GridKernel,
    /// Raw values of scalar params (0 for array params).
    pub scalars: Vec<u64>,
    pub arrays: Vec<Option<ArrayBinding>>,
    /// Every live buffer of the device by its device address, ascending: where the rows of row
    /// tables are found (empty when the kernel has no row table).
    pub memory: Vec<(u64, Arc<SimBuffer>)>,
    /// Per reduction: the partials buffer (one element per block).
    pub partials: Vec<Arc<SimBuffer>>,
    pub block_dim: [u32; 3],
    pub grid_dim: [u64; 3],
    /// The params the kernel's loops keep in registers on the GPU (`analysis::promotion`),
    /// counted once a loop entry.
    pub promoted: Promoted,
}

/// What one block hands back.
pub struct BlockResult {
    pub counters: DeviceCounters,
    /// Thread 0's final values of the kernel's scalar outputs (block 0 only).
    pub scalar_outputs: Vec<u64>,
}

struct LoopFrame {
    broke: Vec<bool>,
    continued: Vec<bool>,
}

/// The per-lane storage of one body's locals (kernel body or a device function call).
struct Frame {
    /// Scalars: one value per lane. Arrays: `len * lanes` values, element-major.
    locals: Vec<Vec<u64>>,
    loops: Vec<LoopFrame>,
    /// Device functions: the value each lane returned.
    returned: Vec<u64>,
}

const MAX_CALL_DEPTH: usize = 256;

pub struct BlockState<'a> {
    ctx: &'a LaunchCtx<'a>,
    lanes: usize,
    block_idx: [u64; 3],
    /// Reusable value vectors of length `lanes`.
    pool: Vec<Vec<u64>>,
    shared: Vec<Vec<u64>>,
    counters: DeviceCounters,
    call_depth: usize,
    /// Each lane's `threadIdx` per axis (the divisions are done once, not per evaluation).
    thread_idx: [Vec<u64>; 3],
    /// For an access to a row table: each lane's row buffer (an index into
    /// `LaunchCtx::memory`). `linear_index` fills it and the access that called it reads it.
    row_buffers: Vec<u32>,
    /// Statements a block may still execute before it stops with [`BUDGET_SPENT`]: unlimited
    /// on the simulator device; the performance model, which runs a few blocks to count what
    /// they do, gives up on blocks that would take long ([`BlockState::with_budget`]).
    budget: u64,
    budget_per_block: u64,
    /// When (on the host's clock) the blocks stop with [`DEADLINE_PASSED`], looked at every
    /// [`CLOCK_EVERY`] statements or loop iterations: for the performance model's sampled
    /// blocks, and for a launch on the simulator device under `YOSEGI_SIM_TIMEOUT`
    /// ([`BlockState::with_deadline`]); `None` otherwise.
    deadline: Option<Instant>,
    /// Statements and loop iterations run so far, for when to look at the clock.
    ticks: u64,
    /// For the performance model's sampled blocks ([`BlockState::with_budget`]): the sectors
    /// (by array and sector, read apart from written) the block has touched, for
    /// `DeviceCounters::block_sectors`.
    block_sectors: Option<std::collections::HashSet<(u32, u64, bool)>>,
    /// For the sampled blocks: the block's share of the L1 cache, for
    /// `DeviceCounters::l2_sectors`.
    l1: Option<SectorCache>,
    /// The promoted params of the loops being run, outermost first.
    promotions: Vec<PromotionFrame>,
    /// For the sampled blocks: the far loads of the loops being run, outermost first, for
    /// `DeviceCounters::load_rounds`.
    rounds: Vec<RoundTally>,
}

impl BlockState<'_> {
    /// Adds a finished tally's rounds to the counts.
    fn count_rounds(&mut self, mut tally: RoundTally) {
        self.counters.load_rounds += tally.rounds();
    }

    /// A store of the lanes in `mask`, to shared memory or to global memory (not of a param a
    /// loop keeps in a register), told to the running loop's tally: its iterations no longer
    /// overlap, and after a global store the storing warps' next loads wait anew.
    fn stored_in_loop(&mut self, mask: &[bool], to_shared: bool) {
        if any(mask) && let Some(tally) = self.rounds.last_mut() {
            if to_shared { tally.stored_to_shared() } else { tally.store(mask) }
        }
    }
}

/// A param a running loop keeps in a register: which lanes have loaded and stored its element
/// since the loop began (only those accesses are counted).
struct PromotionFrame {
    param: u32,
    loaded: Vec<bool>,
    stored: Vec<bool>,
}

/// Keys of the memory `count_global` counts besides params (whose key is their index): rows
/// reached through row tables (absolute addresses), the tables' pointers, reductions'
/// partials (plus the reduction), anything else.
const ROWS: u32 = u32::MAX;
const ROW_TABLES: u32 = u32::MAX - 1;
const OTHER: u32 = u32::MAX - 2;
const PARTIALS: u32 = 1 << 30;

/// The message of the fault a block that spent its statement budget stops with.
pub const BUDGET_SPENT: &str = "the block ran past its statement budget";

/// The message of the fault a block stops with once its deadline passed
/// ([`BlockState::with_budget`], [`BlockState::with_deadline`]).
pub const DEADLINE_PASSED: &str = "the block ran past its deadline";

/// Statements (and loop iterations) between two looks at the clock under a deadline: a
/// statement runs over a block's lanes (a microsecond or so for a block of 128), and a look
/// costs some 25 ns, so the clock costs well under 1% and the deadline is passed by some tens
/// of microseconds at most.
pub const CLOCK_EVERY: u64 = 64;

/// The value of the element of type `elem` at byte `at` of `buffer`.
#[inline]
fn load_element(buffer: &SimBuffer, at: usize, elem: ScalarType) -> u64 {
    if elem == ScalarType::F80 {
        // The significand word, then the sign and exponent: the 10 bytes of the x87 format.
        let mut bytes = [0u8; 10];
        bytes[..8].copy_from_slice(&buffer.load(at, 8).to_le_bytes());
        bytes[8..].copy_from_slice(&(buffer.load(at + 8, 2) as u16).to_le_bytes());
        return value::from_bytes(elem, &bytes);
    }
    value::from_memory(elem, buffer.load(at, elem.size_bytes()))
}

/// Stores `raw` (a value of type `elem`) as the element at byte `at` of `buffer`.
#[inline]
fn store_element(buffer: &SimBuffer, at: usize, elem: ScalarType, raw: u64) {
    if elem == ScalarType::F80 {
        let bytes = value::to_bytes(elem, raw);
        buffer.store(at, 8, u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")));
        buffer.store(at + 8, 8, u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes")));
        return;
    }
    buffer.store(at, elem.size_bytes(), value::to_memory(elem, raw));
}

fn any(mask: &[bool]) -> bool {
    mask.iter().any(|&m| m)
}

fn active_lanes(mask: &[bool]) -> u64 {
    mask.iter().filter(|&&m| m).count() as u64
}

impl<'a> BlockState<'a> {
    pub fn new(ctx: &'a LaunchCtx<'a>) -> BlockState<'a> {
        let lanes = (ctx.block_dim[0] * ctx.block_dim[1] * ctx.block_dim[2]) as usize;
        Self::with_lanes(ctx, lanes)
    }

    /// A one-lane state for launch-time uniform expressions (grid sizes, array dims).
    pub fn uniform(ctx: &'a LaunchCtx<'a>) -> BlockState<'a> {
        Self::with_lanes(ctx, 1)
    }

    fn with_lanes(ctx: &'a LaunchCtx<'a>, lanes: usize) -> BlockState<'a> {
        let shared =
            ctx.kernel.shared.iter().map(|s| vec![0u64; s.dims.iter().map(|&d| d as usize).product()]).collect();
        let [bx, by, _] = ctx.block_dim.map(|d| d.max(1) as u64);
        let lane_ids = || 0..lanes as u64;
        let thread_idx = [
            lane_ids().map(|l| l % bx).collect(),
            lane_ids().map(|l| (l / bx) % by).collect(),
            lane_ids().map(|l| l / (bx * by)).collect(),
        ];
        BlockState {
            ctx,
            lanes,
            block_idx: [0; 3],
            pool: Vec::new(),
            shared,
            counters: DeviceCounters::default(),
            call_depth: 0,
            thread_idx,
            row_buffers: vec![0; lanes],
            budget: u64::MAX,
            budget_per_block: u64::MAX,
            deadline: None,
            ticks: 0,
            block_sectors: None,
            l1: None,
            promotions: Vec::new(),
            rounds: Vec::new(),
        }
    }

    /// A state whose blocks stop with the fault [`BUDGET_SPENT`] after `statements` statement
    /// executions (each over the block's active lanes), and with [`DEADLINE_PASSED`] once the
    /// host's clock passes `deadline`, each block running against an L1 cache of `l1_bytes`.
    pub fn with_budget(ctx: &'a LaunchCtx<'a>, statements: u64, l1_bytes: u64, deadline: Option<Instant>) -> BlockState<'a> {
        BlockState {
            budget: statements,
            budget_per_block: statements,
            deadline,
            block_sectors: Some(Default::default()),
            l1: Some(SectorCache::new(l1_bytes)),
            ..Self::new(ctx)
        }
    }

    /// This state, its blocks stopping with [`DEADLINE_PASSED`] once the host's clock passes
    /// `deadline` (the simulator's watchdog, `YOSEGI_SIM_TIMEOUT`).
    pub fn with_deadline(mut self, deadline: Option<Instant>) -> BlockState<'a> {
        self.deadline = deadline;
        self
    }

    /// Evaluates an expression of params only, in the kernel's body.
    pub fn eval_uniform(&mut self, expr: Handle<Expr>) -> Result<u64, Fault> {
        let body = &self.ctx.kernel.body;
        let mut frame = self.new_frame(body);
        let mask = vec![true; self.lanes];
        let v = self.eval(body, &mut frame, expr, &mask)?;
        let out = v[0];
        self.give(v);
        Ok(out)
    }

    pub fn run_block(&mut self, linear_block: u64) -> Result<BlockResult, Fault> {
        let [gx, gy, _] = self.ctx.grid_dim;
        self.block_idx = [linear_block % gx, (linear_block / gx) % gy, linear_block / (gx * gy)];
        self.counters = DeviceCounters::default();
        self.budget = self.budget_per_block;
        // A block that starts after the deadline does not run at all (a grid of millions of
        // blocks would otherwise run each one's first statements).
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(fault(Span::default(), DEADLINE_PASSED.to_string()));
        }
        for s in &mut self.shared {
            s.fill(0);
        }
        let kernel = self.ctx.kernel;
        let body = &kernel.body;
        let mut frame = self.new_frame(body);
        for (h, local) in body.locals.iter() {
            let init = match local.kind {
                LocalKind::FirstPrivate(p) => self.ctx.scalars.get(p as usize).copied().unwrap_or(0),
                LocalKind::Reduction(r) => match kernel.reductions.get(r as usize) {
                    Some(red) => value::part_identity(red.op, red.ty, red.part),
                    None => 0,
                },
                _ => continue,
            };
            frame.locals[h.index()].fill(init);
        }
        let mut mask = vec![true; self.lanes];
        if self.l1.is_some() {
            self.rounds.push(RoundTally::body(self.lanes.div_ceil(32)));
        }
        let ran = self.exec_block(body, &mut frame, &body.block, &mut mask);
        if let Some(root) = self.rounds.pop() {
            self.count_rounds(root);
        }
        self.rounds.clear();
        ran?;
        let scalar_outputs = if linear_block == 0 {
            kernel.scalar_outputs.iter().map(|(l, _)| frame.locals[l.index()][0]).collect()
        } else {
            Vec::new()
        };
        if let Some(sectors) = &mut self.block_sectors {
            self.counters.block_sectors = sectors.len() as u64;
            sectors.clear();
        }
        if let Some(l1) = &mut self.l1 {
            l1.clear();
        }
        Ok(BlockResult { counters: std::mem::take(&mut self.counters), scalar_outputs })
    }

    fn new_frame(&self, body: &Body) -> Frame {
        let locals = body
            .locals
            .iter()
            .map(|(_, l)| {
                let len: usize = l.array_dims.as_ref().map(|d| d.iter().map(|&x| x as usize).product()).unwrap_or(1);
                vec![0u64; len * self.lanes]
            })
            .collect();
        Frame { locals, loops: Vec::new(), returned: vec![0; self.lanes] }
    }

    fn take(&mut self) -> Vec<u64> {
        self.pool.pop().unwrap_or_else(|| vec![0; self.lanes])
    }
    fn give(&mut self, v: Vec<u64>) {
        self.pool.push(v);
    }
    fn filled(&mut self, value: u64) -> Vec<u64> {
        let mut v = self.take();
        v.fill(value);
        v
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    fn eval(&mut self, body: &Body, frame: &mut Frame, e: Handle<Expr>, mask: &[bool]) -> Result<Vec<u64>, Fault> {
        let expr = &body.exprs[e];
        let ty = expr.ty;
        let n = self.lanes;
        Ok(match &expr.kind {
            ExprKind::ConstInt(v) => self.filled(value::wrap_int(ty, *v)),
            ExprKind::ConstFloat(f) => self.filled(value::from_f64(ty, *f)),
            ExprKind::Param(p) => {
                let raw = self.ctx.scalars.get(*p as usize).copied().unwrap_or(0);
                let pty = match self.ctx.kernel.params.get(*p as usize).map(|p| &p.kind) {
                    Some(crate::ir::ParamKind::Scalar(t)) => *t,
                    _ => ty,
                };
                self.filled(if pty == ty { raw } else { value::cast(pty, ty, raw) })
            }
            ExprKind::Local(l) => {
                let mut v = self.take();
                v.copy_from_slice(&frame.locals[l.index()][..n]);
                v
            }
            ExprKind::ThreadIdx(axis) => {
                let mut v = self.take();
                v.copy_from_slice(&self.thread_idx[*axis as usize]);
                if ty.size_bytes() < 2 {
                    for slot in v.iter_mut() {
                        *slot = value::wrap_int(ty, *slot as i64);
                    }
                }
                v
            }
            ExprKind::BlockIdx(axis) => self.filled(value::wrap_int(ty, self.block_idx[*axis as usize] as i64)),
            ExprKind::BlockDim(axis) => self.filled(value::wrap_int(ty, self.ctx.block_dim[*axis as usize] as i64)),
            ExprKind::GridDim(axis) => self.filled(value::wrap_int(ty, self.ctx.grid_dim[*axis as usize] as i64)),
            ExprKind::Load { array, indices } => {
                let idx = self.linear_index(body, frame, *array, indices, mask, expr.span)?;
                let out = self.load(body, frame, *array, &idx, mask, ty, expr.span);
                self.give(idx);
                out?
            }
            ExprKind::Unary { op, arg } => {
                let arg_ty = body.exprs[*arg].ty;
                let mut v = self.eval(body, frame, *arg, mask)?;
                for (slot, &m) in v.iter_mut().zip(mask) {
                    if m {
                        *slot = value::unary(*op, ty, arg_ty, *slot);
                    }
                }
                v
            }
            ExprKind::Binary { op: op @ (BinaryOp::LogAnd | BinaryOp::LogOr), lhs, rhs } => {
                let lty = body.exprs[*lhs].ty;
                let rty = body.exprs[*rhs].ty;
                let mut a = self.eval(body, frame, *lhs, mask)?;
                let is_and = *op == BinaryOp::LogAnd;
                let rhs_mask: Vec<bool> =
                    a.iter().zip(mask).map(|(&x, &m)| m && value::is_true(lty, x) == is_and).collect();
                for (slot, &m) in a.iter_mut().zip(mask) {
                    if m {
                        *slot = (value::is_true(lty, *slot)) as u64;
                    }
                }
                if any(&rhs_mask) {
                    let b = self.eval(body, frame, *rhs, &rhs_mask)?;
                    for lane in 0..n {
                        if rhs_mask[lane] {
                            a[lane] = value::is_true(rty, b[lane]) as u64;
                        }
                    }
                    self.give(b);
                }
                a
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let operand = body.exprs[*lhs].ty;
                let mut a = self.eval(body, frame, *lhs, mask)?;
                let b = self.eval(body, frame, *rhs, mask)?;
                if operand.is_float() {
                    let active = active_lanes(mask);
                    match operand {
                        ScalarType::F32 => self.counters.float_ops += active,
                        _ => self.counters.double_ops += active,
                    }
                }
                if value::binary_lanes(*op, operand, ty, &mut a, &b) {
                    self.give(b);
                    return Ok(a);
                }
                let mut error = None;
                for lane in 0..n {
                    if mask[lane] {
                        match value::binary(*op, operand, ty, a[lane], b[lane]) {
                            Ok(r) => a[lane] = r,
                            Err(why) => {
                                error = Some((lane, why));
                                break;
                            }
                        }
                    }
                }
                self.give(b);
                if let Some((lane, why)) = error {
                    let what = match why {
                        ArithError::DivisionByZero => "integer division by zero",
                        ArithError::DivisionOverflow => "integer division overflow (the most negative value divided by -1)",
                    };
                    return Err(fault(expr.span, format!("{what} (thread {} of block {:?})", lane, self.block_idx)));
                }
                a
            }
            ExprKind::Select { cond, then, otherwise } => {
                let cty = body.exprs[*cond].ty;
                let c = self.eval(body, frame, *cond, mask)?;
                let then_mask: Vec<bool> = c.iter().zip(mask).map(|(&x, &m)| m && value::is_true(cty, x)).collect();
                let else_mask: Vec<bool> = c.iter().zip(mask).map(|(&x, &m)| m && !value::is_true(cty, x)).collect();
                self.give(c);
                let mut out = self.take();
                for (sub_mask, sub) in [(&then_mask, *then), (&else_mask, *otherwise)] {
                    if any(sub_mask) {
                        let sub_ty = body.exprs[sub].ty;
                        let v = self.eval(body, frame, sub, sub_mask)?;
                        for lane in 0..n {
                            if sub_mask[lane] {
                                out[lane] = if sub_ty == ty { v[lane] } else { value::cast(sub_ty, ty, v[lane]) };
                            }
                        }
                        self.give(v);
                    }
                }
                out
            }
            ExprKind::Cast { arg } => {
                let from = body.exprs[*arg].ty;
                let mut v = self.eval(body, frame, *arg, mask)?;
                if from != ty {
                    for (slot, &m) in v.iter_mut().zip(mask) {
                        if m {
                            *slot = value::cast(from, ty, *slot);
                        }
                    }
                }
                v
            }
            ExprKind::Math { func, args } => {
                let mut vals = Vec::with_capacity(args.len());
                for &a in args {
                    let aty = body.exprs[a].ty;
                    let mut v = self.eval(body, frame, a, mask)?;
                    if aty != ty && !(*func == crate::ir::MathFn::Abs) {
                        for (slot, &m) in v.iter_mut().zip(mask) {
                            if m {
                                *slot = value::cast(aty, ty, *slot);
                            }
                        }
                    }
                    vals.push(v);
                }
                let calls = active_lanes(mask);
                self.counters.math_calls += calls;
                match func.cost() {
                    crate::ir::MathCost::Instruction => self.counters.math_instructions += calls,
                    crate::ir::MathCost::Pow => self.counters.math_pows += calls,
                    crate::ir::MathCost::Function => {}
                }
                let mut out = self.take();
                let mut lane_args = [0u64; 3];
                for lane in 0..n {
                    if mask[lane] {
                        for (k, v) in vals.iter().enumerate().take(3) {
                            lane_args[k] = v[lane];
                        }
                        out[lane] = value::math(*func, ty, &lane_args[..vals.len().min(3)]);
                    }
                }
                for v in vals {
                    self.give(v);
                }
                out
            }
            ExprKind::Call { func, args } => self.call(body, frame, *func, args, mask, expr.span)?,
        })
    }

    fn call(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        func: Handle<crate::ir::Function>,
        args: &[Handle<Expr>],
        mask: &[bool],
        span: Span,
    ) -> Result<Vec<u64>, Fault> {
        let function = &self.ctx.module.functions[func];
        if self.call_depth >= MAX_CALL_DEPTH {
            return Err(fault(
                span,
                format!("device function `{}` recursed deeper than {MAX_CALL_DEPTH} calls", function.name),
            ));
        }
        let mut callee = self.new_frame(&function.body);
        for (&arg, &param) in args.iter().zip(&function.params) {
            let aty = body.exprs[arg].ty;
            let pty = function.body.locals[param].ty;
            let v = self.eval(body, frame, arg, mask)?;
            let slot = &mut callee.locals[param.index()];
            for lane in 0..self.lanes {
                if mask[lane] {
                    slot[lane] = if aty == pty { v[lane] } else { value::cast(aty, pty, v[lane]) };
                }
            }
            self.give(v);
        }
        self.call_depth += 1;
        let mut callee_mask = mask.to_vec();
        let result = self.exec_block(&function.body, &mut callee, &function.body.block, &mut callee_mask);
        self.call_depth -= 1;
        result?;
        let mut out = self.take();
        out.copy_from_slice(&callee.returned);
        Ok(out)
    }

    // -----------------------------------------------------------------------------------------
    // Memory

    /// Each active lane's element of `array`: its linear index, or, for a row table, its byte
    /// offset in the lane's row buffer (see [`BlockState::row_elements`]).
    fn linear_index(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        array: ArrayRef,
        indices: &[Handle<Expr>],
        mask: &[bool],
        span: Span,
    ) -> Result<Vec<u64>, Fault> {
        let mut dims = [1i64; 8];
        match array {
            ArrayRef::Param(p) => {
                if let Some(Some(b)) = self.ctx.arrays.get(p as usize) {
                    if b.row_table {
                        return self.row_elements(body, frame, b, indices, mask, span);
                    }
                    for (slot, &d) in dims.iter_mut().zip(&b.dims) {
                        *slot = d;
                    }
                }
            }
            ArrayRef::Shared(s) => {
                for (slot, &d) in dims.iter_mut().zip(&self.ctx.kernel.shared[s as usize].dims) {
                    *slot = d as i64;
                }
            }
            ArrayRef::Local(l) => {
                for (slot, &d) in dims.iter_mut().zip(body.locals[l].array_dims.iter().flatten()) {
                    *slot = d as i64;
                }
            }
            ArrayRef::Partials(_) => {}
            ArrayRef::Address(elem) => {
                let [index] = indices else {
                    return Err(fault(span, format!("a computed address is indexed with {} subscripts", indices.len())));
                };
                let addresses = self.eval(body, frame, *index, mask)?;
                let found = self.find_buffers(&addresses, elem.size_bytes() as u64, mask);
                return match found {
                    Ok(offsets) => {
                        self.give(addresses);
                        Ok(offsets)
                    }
                    Err(lane) => {
                        let address = addresses[lane];
                        self.give(addresses);
                        let mut f = fault(
                            span,
                            format!("thread {lane} of block {:?} accesses address {address:#x}, which is no device memory", self.block_idx),
                        );
                        f.help = Some("a pointer a kernel makes from an integer must be a device address (from `host_data use_device`, acc_deviceptr or acc_malloc) of memory on the device".to_string());
                        Err(f)
                    }
                };
            }
        }
        // Integer values are kept sign- or zero-extended to 64 bits, so the raw value is the
        // index itself.
        let Some(&first) = indices.first() else { return Ok(self.filled(0)) };
        let mut acc = self.eval(body, frame, first, mask)?;
        for (k, &ix) in indices.iter().enumerate().skip(1) {
            let scale = dims.get(k).copied().unwrap_or(1);
            let v = self.eval(body, frame, ix, mask)?;
            for (slot, &i) in acc.iter_mut().zip(v.iter()) {
                *slot = (*slot as i64).wrapping_mul(scale).wrapping_add(i as i64) as u64;
            }
            self.give(v);
        }
        Ok(acc)
    }

    /// `a[i][j]` of a row table, per active lane: loads row `i`'s device address from the
    /// table (a global load), finds the buffer holding element `j` of that row, and returns
    /// the element's byte offset in it, with the buffer in `row_buffers`. A row outside the
    /// table, a null row, or an element outside the row's buffer faults here.
    fn row_elements(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        table: &'a ArrayBinding,
        indices: &[Handle<Expr>],
        mask: &[bool],
        span: Span,
    ) -> Result<Vec<u64>, Fault> {
        let [row_index, col_index] = indices else {
            return Err(fault(span, format!("the row table `{}` is indexed with {} subscripts", table.name, indices.len())));
        };
        let rows = self.eval(body, frame, *row_index, mask)?;
        let cols = self.eval(body, frame, *col_index, mask)?;
        let size = table.elem.size_bytes() as i64;
        let mut table_bytes = self.take();
        let mut addresses = self.take();
        let mut failure = None;
        for lane in 0..self.lanes {
            if !mask[lane] {
                continue;
            }
            let (r, c) = (rows[lane] as i64, cols[lane] as i64);
            let at = r.checked_mul(8).and_then(|b| b.checked_add(table.offset)).filter(|&b| b >= 0 && b + 8 <= table.buffer.len() as i64);
            let Some(at) = at else {
                failure = Some((lane, format!("row {r} is outside the table of row pointers ({} bytes)", table.buffer.len())));
                break;
            };
            table_bytes[lane] = at as u64;
            let entry = table.buffer.load(at as usize, 8);
            if entry == 0 {
                failure = Some((lane, format!("row {r} is a null pointer on the device")));
                break;
            }
            // An element index too large for an address lands at 0, in no buffer.
            addresses[lane] = c.checked_mul(size).map_or(0, |b| entry.wrapping_add_signed(b));
        }
        let offsets = match failure {
            Some(f) => Err(f),
            None => self.find_buffers(&addresses, size as u64, mask).map_err(|lane| {
                let (r, c) = (rows[lane] as i64, cols[lane] as i64);
                (lane, format!("element {c} of row {r} is outside the row's device memory"))
            }),
        };
        self.give(rows);
        self.give(cols);
        self.give(addresses);
        match offsets {
            Ok(offsets) => {
                self.counters.global_loads += mask.iter().filter(|&&m| m).count() as u64;
                self.count_global(ROW_TABLES, &table_bytes, mask, 8, false);
                self.give(table_bytes);
                Ok(offsets)
            }
            Err((lane, what)) => {
                self.give(table_bytes);
                let mut f = fault(span, format!("out-of-bounds access of `{}` in thread {lane} of block {:?}: {what}", table.name, self.block_idx));
                f.help = Some("check the loop bounds and the index expressions against the rows the data clauses put on the device".to_string());
                Err(f)
            }
        }
    }

    /// Each active lane's buffer holding `size` bytes at its device address, into
    /// `row_buffers`, and the byte offset there; `Err` with the first lane whose bytes lie in no
    /// buffer.
    fn find_buffers(&mut self, addresses: &[u64], size: u64, mask: &[bool]) -> Result<Vec<u64>, usize> {
        let memory = &self.ctx.memory;
        let mut out = self.take();
        for lane in 0..self.lanes {
            if !mask[lane] {
                continue;
            }
            let address = addresses[lane];
            let found = memory.partition_point(|(start, _)| *start <= address).checked_sub(1).and_then(|k| {
                let (start, buffer) = &memory[k];
                (address - start + size <= buffer.len() as u64).then_some((k, address - start))
            });
            let Some((k, byte)) = found else {
                self.give(out);
                return Err(lane);
            };
            self.row_buffers[lane] = k as u32;
            out[lane] = byte;
        }
        Ok(out)
    }

    /// Whether each lane's element of `array` lies in a buffer of its own (`row_buffers`): a
    /// row table's, or memory at a computed address.
    fn is_row_table(&self, array: ArrayRef) -> bool {
        match array {
            ArrayRef::Param(p) => matches!(self.ctx.arrays.get(p as usize), Some(Some(b)) if b.row_table),
            ArrayRef::Address(_) => true,
            _ => false,
        }
    }

    /// The global buffer holding `lane`'s element of a global array, once resolved.
    fn lane_buffer(&self, array: ArrayRef, lane: usize) -> &'a Arc<SimBuffer> {
        if self.is_row_table(array) {
            &self.ctx.memory[self.row_buffers[lane] as usize].1
        } else {
            self.global(array).expect("resolved before the access").0
        }
    }

    /// The lanes of `mask` whose access to `array` the GPU makes: all of them, unless a running
    /// loop keeps the param in a register, where only a lane's first load (or store) of it in
    /// the loop counts (the load before the loop, the store after it).
    fn counted_lanes(&mut self, array: ArrayRef, mask: &[bool], write: bool) -> Option<Vec<bool>> {
        let ArrayRef::Param(p) = array else { return None };
        let frame = self.promotions.iter_mut().find(|f| f.param == p)?;
        let mut counted = vec![false; mask.len()];
        for lane in (0..mask.len()).filter(|&lane| mask[lane]) {
            counted[lane] = !if write { frame.stored[lane] } else { frame.loaded[lane] };
            // A load after the lane's store reads the register too.
            frame.loaded[lane] = true;
            frame.stored[lane] |= write;
        }
        Some(counted)
    }

    /// Counts a warp-level access (a `write` or a read) to a global array: rows of a table are
    /// counted by their device addresses, since their elements lie in different buffers.
    fn count_param_access(&mut self, array: ArrayRef, at: &[u64], mask: &[bool], size: u64, write: bool) {
        if self.is_row_table(array) {
            let addresses: Vec<u64> = (0..self.lanes).map(|lane| if mask[lane] { self.ctx.memory[self.row_buffers[lane] as usize].0 + at[lane] } else { 0 }).collect();
            self.count_global(ROWS, &addresses, mask, size, write);
        } else {
            let key = match array {
                ArrayRef::Param(p) => p,
                ArrayRef::Partials(r) => PARTIALS + r,
                _ => OTHER,
            };
            self.count_global(key, at, mask, size, write);
        }
    }

    fn array_name(&self, body: &Body, array: ArrayRef) -> String {
        match array {
            ArrayRef::Param(p) => self.ctx.kernel.params.get(p as usize).map(|p| p.name.clone()).unwrap_or_default(),
            ArrayRef::Shared(s) => self.ctx.kernel.shared[s as usize].name.clone(),
            ArrayRef::Local(l) => body.locals[l].name.clone(),
            ArrayRef::Partials(r) => format!("<partials of reduction {r}>"),
            ArrayRef::Address(_) => "<memory at a computed address>".to_string(),
        }
    }

    /// The global buffer, the byte offset of element 0 and the element type of a global array.
    fn global(&self, array: ArrayRef) -> Option<(&'a Arc<SimBuffer>, i64, ScalarType)> {
        match array {
            ArrayRef::Param(p) => self.ctx.arrays.get(p as usize)?.as_ref().map(|b| (&b.buffer, b.offset, b.elem)),
            ArrayRef::Partials(r) => {
                let red = self.ctx.kernel.reductions.get(r as usize)?;
                Some((self.ctx.partials.get(r as usize)?, 0, red.ty))
            }
            _ => None,
        }
    }

    /// Checks every active lane's element and returns byte offsets (global arrays) or element
    /// indices (shared/local arrays) in `idx` (overwritten), with the element type.
    fn resolve(
        &mut self,
        body: &Body,
        array: ArrayRef,
        idx: &mut [u64],
        mask: &[bool],
        span: Span,
        access: &str,
    ) -> Result<ScalarType, Fault> {
        let lanes = self.lanes;
        let out_of_bounds = |this: &Self, lane: usize, what: String| -> Fault {
            let mut f = fault(
                span,
                format!(
                    "out-of-bounds {access} of `{}` in thread {} of block {:?}: {what}",
                    this.array_name(body, array),
                    lane,
                    this.block_idx
                ),
            );
            f.help = Some("check the loop bounds and the index expressions against the array's size".to_string());
            f
        };
        match array {
            // `row_elements` and `find_buffers` checked the element and left byte offsets.
            ArrayRef::Param(p) if self.is_row_table(array) => {
                Ok(self.ctx.arrays[p as usize].as_ref().expect("a row table").elem)
            }
            ArrayRef::Address(elem) => Ok(elem),
            ArrayRef::Param(_) | ArrayRef::Partials(_) => {
                let Some((buffer, offset, elem)) = self.global(array) else {
                    return Err(fault(
                        span,
                        format!("`{}` is not bound to device memory", self.array_name(body, array)),
                    ));
                };
                let size = elem.size_bytes() as i64;
                let len = buffer.len() as i64;
                for lane in 0..lanes {
                    if mask[lane] {
                        let element = idx[lane] as i64;
                        let byte = element.wrapping_mul(size).wrapping_add(offset);
                        if byte < 0 || byte + size > len || element.checked_mul(size).is_none() {
                            return Err(out_of_bounds(
                                self,
                                lane,
                                format!(
                                    "element {} is {} bytes from the start of a {}-byte object",
                                    element, byte, len
                                ),
                            ));
                        }
                        idx[lane] = byte as u64;
                    }
                }
                Ok(elem)
            }
            ArrayRef::Shared(s) => {
                let len = self.shared[s as usize].len() as u64;
                for lane in 0..lanes {
                    if mask[lane] && idx[lane] >= len {
                        return Err(out_of_bounds(
                            self,
                            lane,
                            format!("index {} of {} elements", idx[lane] as i64, len),
                        ));
                    }
                }
                Ok(self.ctx.kernel.shared[s as usize].elem)
            }
            ArrayRef::Local(l) => {
                let local = &body.locals[l];
                let len: u64 = local.array_dims.as_ref().map(|d| d.iter().map(|&x| x as u64).product()).unwrap_or(1);
                for lane in 0..lanes {
                    if mask[lane] && idx[lane] >= len {
                        return Err(out_of_bounds(
                            self,
                            lane,
                            format!("index {} of {} elements", idx[lane] as i64, len),
                        ));
                    }
                }
                Ok(local.ty)
            }
        }
    }

    /// Counts a warp-level global access (a `write`, or a read) of the lanes in `mask` at
    /// `byte_offsets` of the memory `key` names (a param, a reduction's partials, [`ROWS`],
    /// ...): the distinct 32-byte sectors its active lanes touch.
    fn count_global(&mut self, key: u32, byte_offsets: &[u64], mask: &[bool], elem_size: u64, write: bool) {
        let mut sectors = [0u64; 64];
        for (warp_index, (warp_offsets, warp_mask)) in byte_offsets.chunks(32).zip(mask.chunks(32)).enumerate() {
            let mut count = 0;
            for (&b, &m) in warp_offsets.iter().zip(warp_mask) {
                if m {
                    sectors[count] = b / 32;
                    count += 1;
                    let last = (b + elem_size - 1) / 32;
                    if last != b / 32 {
                        sectors[count] = last;
                        count += 1;
                    }
                }
            }
            if count == 0 {
                continue;
            }
            let s = &mut sectors[..count];
            if !s.windows(2).all(|w| w[0] <= w[1]) {
                s.sort_unstable();
            }
            // The distinct sectors, in order, to the front.
            let mut distinct = 1;
            for k in 1..s.len() {
                if s[k] != s[distinct - 1] {
                    s[distinct] = s[k];
                    distinct += 1;
                }
            }
            let s = &s[..distinct];
            self.counters.global_transactions += distinct as u64;
            if let Some(seen) = &mut self.block_sectors {
                seen.extend(s.iter().map(|&sector| (key, sector, write)));
            }
            // The L1 cache writes through (every sector written goes to L2) and keeps what
            // reads fetched. The sectors sent to L2 go as requests of one 128-byte line each.
            if let Some(l1) = &mut self.l1 {
                let mut line = None;
                let mut far = false;
                for &sector in s {
                    if write || l1.touch((key, sector)) {
                        far = true;
                        self.counters.l2_sectors += 1;
                        if line != Some(sector / SECTORS_PER_LINE) {
                            self.counters.l2_requests += 1;
                            line = Some(sector / SECTORS_PER_LINE);
                        }
                    }
                }
                if far && !write {
                    let lanes = warp_mask.iter().filter(|&&m| m).count() as u64;
                    self.counters.far_loads += lanes;
                    if let Some(tally) = self.rounds.last_mut() {
                        tally.far_load(warp_index, lanes);
                    }
                }
            }
        }
    }

    /// Counts a warp-level shared access: 32 banks of 4-byte words; the degree is the largest
    /// number of distinct words requested in one bank.
    fn count_shared(&mut self, elements: &[u64], mask: &[bool], elem_size: u64) {
        // The hardware serves a warp's shared access in phases of 128 bytes: the whole warp
        // for 4-byte elements, each half-warp for 8-byte ones, each quarter for 16-byte ones;
        // the degree of the access is that of its worst phase.
        let phase_lanes = (32 * 4 / elem_size.max(4)).max(1) as usize;
        for (warp_elems, warp_mask) in elements.chunks(32).zip(mask.chunks(32)) {
            let mut degree = 0u64;
            let mut active = false;
            for (phase_elems, phase_mask) in warp_elems.chunks(phase_lanes).zip(warp_mask.chunks(phase_lanes)) {
                if let Some(d) = Self::phase_degree(phase_elems, phase_mask, elem_size) {
                    degree = degree.max(d);
                    active = true;
                }
            }
            if !active {
                continue;
            }
            // What the access costs: one pass per distinct word a bank must give, over the
            // whole warp (a phase's 128 bytes are also a pass's).
            let wavefronts = Self::phase_degree(warp_elems, warp_mask, elem_size).unwrap_or(1);
            self.counters.shared_wavefronts += wavefronts;
            self.counters.shared_accesses += 1;
            self.counters.bank_conflict_degree_sum += degree;
            self.counters.bank_conflict_max_degree = self.counters.bank_conflict_max_degree.max(degree);
        }
    }

    /// The bank-conflict degree of the lanes given (a phase of a shared access, or a whole
    /// warp's), 32 banks of 4-byte words: the most distinct words requested from one bank.
    /// `None` when no lane is active.
    fn phase_degree(elements: &[u64], mask: &[bool], elem_size: u64) -> Option<u64> {
        let mut words = [0u64; 128];
        let mut count = 0;
        for (&e, &m) in elements.iter().zip(mask) {
            if m {
                let first = e * elem_size / 4;
                let last = (e * elem_size + elem_size - 1) / 4;
                for w in first..=last {
                    if count < words.len() {
                        words[count] = w;
                        count += 1;
                    }
                }
            }
        }
        if count == 0 {
            return None;
        }
        let w = &mut words[..count];
        w.sort_unstable_by_key(|&x| (x % 32, x));
        let mut degree = 0u64;
        let mut run = 0u64;
        let mut prev: Option<u64> = None;
        for &word in w.iter() {
            match prev {
                Some(p) if p == word => continue,
                Some(p) if p % 32 == word % 32 => run += 1,
                _ => run = 1,
            }
            degree = degree.max(run);
            prev = Some(word);
        }
        Some(degree)
    }

    #[allow(clippy::too_many_arguments)]
    fn load(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        array: ArrayRef,
        idx: &[u64],
        mask: &[bool],
        ty: ScalarType,
        span: Span,
    ) -> Result<Vec<u64>, Fault> {
        let mut at = self.take();
        at.copy_from_slice(idx);
        let elem = match self.resolve(body, array, &mut at, mask, span, "read") {
            Ok(e) => e,
            Err(f) => {
                self.give(at);
                return Err(f);
            }
        };
        let mut out = self.take();
        let lanes = self.lanes;
        match array {
            ArrayRef::Param(_) | ArrayRef::Partials(_) | ArrayRef::Address(_) => {
                let size = elem.size_bytes();
                for lane in 0..lanes {
                    if mask[lane] {
                        out[lane] = load_element(self.lane_buffer(array, lane), at[lane] as usize, elem);
                    }
                }
                let counted = self.counted_lanes(array, mask, false);
                let counted = counted.as_deref().unwrap_or(mask);
                self.counters.global_loads += active_lanes(counted);
                self.count_param_access(array, &at, counted, size as u64, false);
            }
            ArrayRef::Shared(s) => {
                let data = &self.shared[s as usize];
                for lane in 0..lanes {
                    if mask[lane] {
                        out[lane] = data[at[lane] as usize];
                    }
                }
                self.count_shared(&at, mask, elem.size_bytes() as u64);
            }
            ArrayRef::Local(l) => {
                let data = &frame.locals[l.index()];
                for lane in 0..lanes {
                    if mask[lane] {
                        out[lane] = data[at[lane] as usize * lanes + lane];
                    }
                }
            }
        }
        if elem != ty {
            for lane in 0..lanes {
                if mask[lane] {
                    out[lane] = value::cast(elem, ty, out[lane]);
                }
            }
        }
        self.give(at);
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        array: ArrayRef,
        indices: &[Handle<Expr>],
        value_expr: Handle<Expr>,
        mask: &[bool],
        span: Span,
    ) -> Result<(), Fault> {
        let vty = body.exprs[value_expr].ty;
        let v = self.eval(body, frame, value_expr, mask)?;
        let mut at = self.linear_index(body, frame, array, indices, mask, span)?;
        let elem = self.resolve(body, array, &mut at, mask, span, "write")?;
        let lanes = self.lanes;
        let conv = |x: u64| if vty == elem { x } else { value::cast(vty, elem, x) };
        match array {
            ArrayRef::Param(_) | ArrayRef::Partials(_) | ArrayRef::Address(_) => {
                let size = elem.size_bytes();
                for lane in 0..lanes {
                    if mask[lane] {
                        store_element(self.lane_buffer(array, lane), at[lane] as usize, elem, conv(v[lane]));
                    }
                }
                let promoted = self.counted_lanes(array, mask, true);
                if promoted.is_none() {
                    self.stored_in_loop(mask, false);
                }
                let counted = promoted.as_deref().unwrap_or(mask);
                self.counters.global_stores += active_lanes(counted);
                self.count_param_access(array, &at, counted, size as u64, true);
            }
            ArrayRef::Shared(s) => {
                let data = &mut self.shared[s as usize];
                for lane in 0..lanes {
                    if mask[lane] {
                        data[at[lane] as usize] = conv(v[lane]);
                    }
                }
                self.count_shared(&at, mask, elem.size_bytes() as u64);
                self.stored_in_loop(mask, true);
            }
            ArrayRef::Local(l) => {
                let data = &mut frame.locals[l.index()];
                for lane in 0..lanes {
                    if mask[lane] {
                        data[at[lane] as usize * lanes + lane] = conv(v[lane]);
                    }
                }
            }
        }
        self.give(v);
        self.give(at);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        op: AtomicOp,
        array: ArrayRef,
        indices: &[Handle<Expr>],
        value_expr: Handle<Expr>,
        capture: Option<Handle<crate::ir::Local>>,
        mask: &[bool],
        span: Span,
    ) -> Result<(), Fault> {
        let vty = body.exprs[value_expr].ty;
        let v = self.eval(body, frame, value_expr, mask)?;
        let mut at = self.linear_index(body, frame, array, indices, mask, span)?;
        let elem = self.resolve(body, array, &mut at, mask, span, "atomic update")?;
        let lanes = self.lanes;
        // Division by zero inside the update: the element keeps its value and the launch faults.
        let divided_by_zero = std::cell::Cell::new(false);
        let apply = |old: u64, operand: u64| -> u64 {
            // A compare-and-swap retry calls this again: the last call is the one that counts.
            let r = value::atomic_update(op, elem, vty, old, operand);
            divided_by_zero.set(r.is_err());
            r.unwrap_or(old)
        };
        let mut old_values = self.take();
        let size = elem.size_bytes();
        if matches!(array, ArrayRef::Param(_) | ArrayRef::Partials(_) | ArrayRef::Address(_)) {
            self.stored_in_loop(mask, false);
        }
        for lane in 0..lanes {
            if !mask[lane] {
                continue;
            }
            let operand = v[lane];
            let at_lane = at[lane] as usize;
            old_values[lane] = match array {
                ArrayRef::Param(_) | ArrayRef::Partials(_) | ArrayRef::Address(_) => {
                    if !at_lane.is_multiple_of(size as usize) {
                        return Err(fault(span, "misaligned atomic access".to_string()));
                    }
                    let buffer = self.lane_buffer(array, lane);
                    self.counters.global_loads += 1;
                    self.counters.global_stores += 1;
                    let old_bits = buffer.read_modify_write(at_lane, size, |bits| {
                        value::to_memory(elem, apply(value::from_memory(elem, bits), operand))
                    });
                    value::from_memory(elem, old_bits)
                }
                ArrayRef::Shared(s) => {
                    let slot = &mut self.shared[s as usize][at_lane];
                    let old = *slot;
                    *slot = apply(old, operand);
                    old
                }
                ArrayRef::Local(l) => {
                    let slot = &mut frame.locals[l.index()][at_lane * lanes + lane];
                    let old = *slot;
                    *slot = apply(old, operand);
                    old
                }
            };
            if divided_by_zero.get() {
                return Err(fault(span, format!("integer division by zero (or of the most negative value by -1) in an atomic update (thread {} of block {:?})", lane, self.block_idx)));
            }
        }
        match array {
            ArrayRef::Param(_) | ArrayRef::Partials(_) | ArrayRef::Address(_) => self.count_param_access(array, &at, mask, size as u64, true),
            ArrayRef::Shared(_) => self.count_shared(&at, mask, size as u64),
            ArrayRef::Local(_) => {}
        }
        if let Some(c) = capture {
            let cty = body.locals[c].ty;
            for lane in 0..lanes {
                if mask[lane] {
                    frame.locals[c.index()][lane] =
                        if cty == elem { old_values[lane] } else { value::cast(elem, cty, old_values[lane]) };
                }
            }
        }
        self.give(old_values);
        self.give(v);
        self.give(at);
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    fn exec_block(&mut self, body: &Body, frame: &mut Frame, block: &[Stmt], mask: &mut [bool]) -> Result<(), Fault> {
        for stmt in block {
            if !any(mask) {
                break;
            }
            self.exec(body, frame, stmt, mask)?;
        }
        Ok(())
    }

    fn exec(&mut self, body: &Body, frame: &mut Frame, stmt: &Stmt, mask: &mut [bool]) -> Result<(), Fault> {
        let lanes = self.lanes;
        if self.budget == 0 {
            return Err(fault(Span::default(), BUDGET_SPENT.to_string()));
        }
        self.budget -= 1;
        self.tick()?;
        match stmt {
            Stmt::Assign { local, value: e } => {
                let vty = body.exprs[*e].ty;
                let lty = body.locals[*local].ty;
                let v = self.eval(body, frame, *e, mask)?;
                let slot = &mut frame.locals[local.index()];
                for lane in 0..lanes {
                    if mask[lane] {
                        slot[lane] = if vty == lty { v[lane] } else { value::cast(vty, lty, v[lane]) };
                    }
                }
                self.give(v);
            }
            Stmt::Store { array, indices, value: e, span } => {
                self.store(body, frame, *array, indices, *e, mask, *span)?
            }
            Stmt::Atomic { op, array, indices, value: e, capture, span } => {
                self.atomic(body, frame, *op, *array, indices, *e, *capture, mask, *span)?
            }
            Stmt::If { cond, then, otherwise } => {
                let cty = body.exprs[*cond].ty;
                let c = self.eval(body, frame, *cond, mask)?;
                let mut then_mask: Vec<bool> =
                    c.iter().zip(mask.iter()).map(|(&x, &m)| m && value::is_true(cty, x)).collect();
                let mut else_mask: Vec<bool> =
                    c.iter().zip(mask.iter()).map(|(&x, &m)| m && !value::is_true(cty, x)).collect();
                self.give(c);
                if any(&then_mask) {
                    self.exec_block(body, frame, then, &mut then_mask)?;
                }
                if any(&else_mask) {
                    self.exec_block(body, frame, otherwise, &mut else_mask)?;
                }
                for lane in 0..lanes {
                    mask[lane] = then_mask[lane] || else_mask[lane];
                }
            }
            Stmt::Loop { cond, test_first, body: loop_body, continuing, .. } => {
                let mut active = mask.to_vec();
                let mut exited = vec![false; lanes];
                if *test_first && let Some(c) = cond {
                    self.loop_test(body, frame, *c, &mut active, &mut exited)?;
                }
                frame.loops.push(LoopFrame { broke: vec![false; lanes], continued: vec![false; lanes] });
                let promoted = self.ctx.promoted.of(stmt);
                for &param in promoted {
                    self.promotions.push(PromotionFrame { param, loaded: vec![false; lanes], stored: vec![false; lanes] });
                }
                let tallied = self.l1.is_some();
                if tallied {
                    if let Some(outer) = self.rounds.last_mut() {
                        outer.inner_loop();
                    }
                    self.rounds.push(RoundTally::new(lanes.div_ceil(32)));
                }
                let result = (|| {
                    while any(&active) {
                        // Each iteration counts for the clock: a loop with an empty body
                        // (`while (flag) ;`) runs no statement.
                        self.tick()?;
                        if let Some(tally) = self.rounds.last_mut().filter(|_| tallied) {
                            tally.begin_iteration(&active);
                        }
                        frame.loops.last_mut().expect("pushed").continued.fill(false);
                        self.exec_block(body, frame, loop_body, &mut active)?;
                        let lf = frame.loops.last().expect("pushed");
                        for (a, &c) in active.iter_mut().zip(&lf.continued) {
                            *a = *a || c;
                        }
                        self.exec_block(body, frame, continuing, &mut active)?;
                        if let Some(c) = cond {
                            self.loop_test(body, frame, *c, &mut active, &mut exited)?;
                        }
                    }
                    Ok(())
                })();
                let lf = frame.loops.pop().expect("pushed");
                self.promotions.truncate(self.promotions.len() - promoted.len());
                if tallied && let Some(tally) = self.rounds.pop() {
                    self.count_rounds(tally);
                }
                // Where the time went: the innermost loop with a condition that the deadline
                // stopped in.
                let result = result.map_err(|mut f: Fault| {
                    if f.span == Span::default()
                        && f.message == DEADLINE_PASSED
                        && let Some(c) = cond
                    {
                        f.span = body.exprs[*c].span;
                    }
                    f
                });
                result?;
                for lane in 0..lanes {
                    mask[lane] = exited[lane] || lf.broke[lane];
                }
            }
            Stmt::Break | Stmt::Continue => {
                let is_break = matches!(stmt, Stmt::Break);
                if let Some(lf) = frame.loops.last_mut() {
                    let target = if is_break { &mut lf.broke } else { &mut lf.continued };
                    for lane in 0..lanes {
                        if mask[lane] {
                            target[lane] = true;
                            mask[lane] = false;
                        }
                    }
                }
            }
            Stmt::Return(e) => {
                if let Some(e) = e {
                    let v = self.eval(body, frame, *e, mask)?;
                    for lane in 0..lanes {
                        if mask[lane] {
                            frame.returned[lane] = v[lane];
                        }
                    }
                    self.give(v);
                }
                mask.fill(false);
            }
            Stmt::Eval(e) => {
                let v = self.eval(body, frame, *e, mask)?;
                self.give(v);
            }
            Stmt::Barrier => {
                if !mask.iter().all(|&m| m) {
                    let active = mask.iter().filter(|&&m| m).count();
                    let mut f = fault(
                        self.ctx.kernel.span,
                        format!(
                            "barrier reached by {active} of the {lanes} threads of block {:?} (a barrier under divergent control flow)",
                            self.block_idx
                        ),
                    );
                    f.help = Some("every thread of a block must reach the same barriers".to_string());
                    return Err(f);
                }
                self.counters.barriers += 1;
            }
        }
        Ok(())
    }

    /// Counts a statement or a loop iteration, and looks at the clock every [`CLOCK_EVERY`]
    /// of them under a deadline.
    #[inline]
    fn tick(&mut self) -> Result<(), Fault> {
        if let Some(deadline) = self.deadline {
            self.ticks = self.ticks.wrapping_add(1);
            if self.ticks.is_multiple_of(CLOCK_EVERY) && Instant::now() >= deadline {
                return Err(fault(Span::default(), DEADLINE_PASSED.to_string()));
            }
        }
        Ok(())
    }

    /// Evaluates a loop condition on the active lanes; lanes where it is false leave the loop.
    fn loop_test(
        &mut self,
        body: &Body,
        frame: &mut Frame,
        cond: Handle<Expr>,
        active: &mut [bool],
        exited: &mut [bool],
    ) -> Result<(), Fault> {
        if !any(active) {
            return Ok(());
        }
        let cty = body.exprs[cond].ty;
        let c = self.eval(body, frame, cond, active)?;
        for lane in 0..self.lanes {
            if active[lane] && !value::is_true(cty, c[lane]) {
                active[lane] = false;
                exited[lane] = true;
            }
        }
        self.give(c);
        Ok(())
    }
}
