//! Bank-conflict padding of shared-memory arrays. For every shared array of a grid kernel this
//! pass finds the warp access patterns the kernel uses (each load, store and atomic on the array,
//! with its per-dimension indices written as integer multiples of `threadIdx.x/y/z` plus a part
//! every lane of a warp agrees on, or failing that, as each thread's value in the first iteration
//! of the enclosing loops, as for the `t / w`, `t % w` of a cooperative copy), computes the
//! bank-conflict degree each pattern has, and widens the innermost dimension by the fewest
//! elements that minimise the worst degree. It runs after staging, on every grid kernel, and
//! appends one line per examined array to the variant's notes.
//!
//! The degree is the one the simulator's counters report (`count_shared` in
//! `runtime/sim/interp.rs`): 32 banks of 4-byte words, a warp is 32 consecutive linear thread ids
//! (x fastest), every element a lane touches contributes each 4-byte word it covers, and the
//! degree is the largest number of distinct words requested in one bank within one phase: as on
//! the hardware, a warp's access is served in phases of 128 bytes (the whole warp for 4-byte
//! elements, each half-warp for 8-byte ones), so a row of 32 doubles read by a warp has degree 1.
//!
//! Padding is a pure layout change: the simulator and the CUDA back end both linearise a shared
//! access from its per-dimension indices and the declared dims, so a wider declared row moves
//! every element consistently. That holds only when every access indexes every dimension, which
//! the pass checks before padding.

use std::collections::{HashMap, HashSet};

use super::PassConfig;
use super::staging::SharedMemoryBudget;
use crate::ir::{
    array_bytes, ArrayRef, BinaryOp, Body, Expr, ExprKind, GridKernel, Handle, Local, Module, ScalarType, Stmt, UnaryOp,
};

/// Banks of shared memory, each serving one 4-byte word per cycle.
const BANKS: i64 = 32;
const WARP: usize = 32;
/// Padding may grow an array by at most this fraction of its size.
const GROWTH_DIVISOR: u64 = 8;
/// Padding may take a kernel this fraction over the budget's per-block share: a few percent of
/// occupancy is cheap next to a conflict that multiplies every access to a tile.
const BUDGET_TOLERANCE_DIVISOR: u64 = 16;
/// How deep the pass follows once-assigned locals and nested expressions.
const MAX_DEPTH: u32 = 64;

/// One index of a shared access as the warp sees it: `sum(thread[a] * threadIdx.a) + uniform`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadAffine {
    /// Coefficient of `threadIdx.x`, `.y`, `.z`.
    pub thread: [i64; 3],
    /// The part every lane of a warp shares: `Some(c)` when it is the constant `c`.
    pub uniform: Option<i64>,
}

impl ThreadAffine {
    fn constant(c: i64) -> ThreadAffine {
        ThreadAffine { thread: [0; 3], uniform: Some(c) }
    }
    fn unknown_uniform() -> ThreadAffine {
        ThreadAffine { thread: [0; 3], uniform: None }
    }
    fn is_uniform(&self) -> bool {
        self.thread == [0; 3]
    }
    // Checked: a form whose coefficients overflow is not computable from the thread index (the
    // access is left out, as an irregular one is), rather than a wrapped one.
    fn add(&self, other: &ThreadAffine) -> Option<ThreadAffine> {
        let mut thread = [0; 3];
        for a in 0..3 {
            thread[a] = self.thread[a].checked_add(other.thread[a])?;
        }
        let uniform = match (self.uniform, other.uniform) {
            (Some(a), Some(b)) => Some(a.checked_add(b)?),
            _ => None,
        };
        Some(ThreadAffine { thread, uniform })
    }
    fn scale(&self, k: i64) -> Option<ThreadAffine> {
        let mut thread = [0; 3];
        for a in 0..3 {
            thread[a] = self.thread[a].checked_mul(k)?;
        }
        let uniform = match self.uniform {
            Some(u) => Some(u.checked_mul(k)?),
            None => None,
        };
        Some(ThreadAffine { thread, uniform })
    }
}

/// One index of a shared access.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexForm {
    /// Affine in the thread index: exact for every iteration of the enclosing loops.
    Affine(ThreadAffine),
    /// Each thread's value (one per thread of the block, linear order) in the first iteration
    /// of the enclosing loops: for indices such as `t / 34` and `t % 34` of a cooperative copy,
    /// which are not affine but which every thread computes from constants and its position.
    FirstIteration(Vec<i64>),
}

/// One warp access pattern of a shared array: the per-dimension index forms of one load, store
/// or atomic.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedAccessPattern {
    pub indices: Vec<IndexForm>,
}

/// What the pass found and did for one shared array.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayPadding {
    pub array: u32,
    /// Worst degree over the recognised patterns before and after padding.
    pub degree_before: u64,
    pub degree_after: u64,
    /// Innermost dimension before and after.
    pub row_before: u32,
    pub row_after: u32,
    /// Accesses whose indices are not affine in the thread index (not counted).
    pub irregular_accesses: usize,
}

/// The pass's findings for one grid kernel, one entry per shared array it examined.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PaddingReport {
    pub arrays: Vec<ArrayPadding>,
}

/// Pads the shared arrays of every grid kernel of the module within `config.shared`.
pub fn pad_module(module: &mut Module, config: &PassConfig) {
    let handles: Vec<Handle<GridKernel>> = module.grid_kernels.iter().map(|(h, _)| h).collect();
    for h in handles {
        pad_shared_arrays_within(&mut module.grid_kernels[h], &config.shared);
    }
}

/// Pads the innermost dimension of each shared array where that lowers the worst bank-conflict
/// degree of the kernel's accesses to it, and appends one note per array to the variant's notes.
/// Uses the default shared-memory budget.
pub fn pad_shared_arrays(kernel: &mut GridKernel) -> PaddingReport {
    pad_shared_arrays_within(kernel, &SharedMemoryBudget::default())
}

/// [`pad_shared_arrays`] within `budget`: an array grows by at most an eighth, and the kernel's
/// shared memory stays within the budget's per-block share (plus a sixteenth) and always within
/// the static limit.
pub fn pad_shared_arrays_within(kernel: &mut GridKernel, budget: &SharedMemoryBudget) -> PaddingReport {
    let per_block = budget.per_block() as u64;
    let kernel_limit = (per_block + per_block / BUDGET_TOLERANCE_DIVISOR).min(budget.static_per_block as u64);
    let mut report = PaddingReport::default();
    let accesses = shared_accesses(&kernel.body);
    let forms = FormContext::new(&kernel.body, kernel.launch.block);
    for s in 0..kernel.shared.len() {
        let array = &kernel.shared[s];
        let tile = format!("{}_s{s}", array.name);
        let elements = format!("{}s", array.elem.c_name());
        let Some(&row) = array.dims.last() else { continue };
        if array.dims.len() < 2 {
            continue;
        }
        let mine: Vec<&Vec<Handle<Expr>>> =
            accesses.iter().filter(|(a, _)| *a == s as u32).map(|(_, indices)| indices).collect();
        if mine.is_empty() {
            continue;
        }
        if mine.iter().any(|indices| indices.len() != array.dims.len()) {
            kernel.variant.notes.push(format!(
                "bank conflicts on tile {tile}: not padded: some accesses index it linearly, so a wider row would move their elements"
            ));
            continue;
        }
        let mut patterns = Vec::new();
        let mut irregular_accesses = 0;
        for indices in mine {
            match indices.iter().map(|&i| forms.form(i)).collect::<Option<Vec<_>>>() {
                Some(indices) => patterns.push(SharedAccessPattern { indices }),
                None => irregular_accesses += 1,
            }
        }
        if patterns.is_empty() {
            kernel.variant.notes.push(format!(
                "bank conflicts on tile {tile}: not padded: no access is computable from the thread index"
            ));
            continue;
        }
        let block = kernel.launch.block;
        let elem = array.elem;
        // `None` when some lane's element offset overflows `i64` with these dims: such a layout
        // is not measured (nor chosen).
        let worst = |dims: &[u32]| patterns.iter().try_fold(0, |w, p| Some(w.max(pattern_degree(p, dims, elem, block)?)));
        let floor = patterns.iter().try_fold(0, |w, p| Some(w.max(pattern_floor(p, &array.dims, elem, block)?)));
        let (Some(before), Some(floor)) = (worst(&array.dims), floor) else {
            kernel.variant.notes.push(format!(
                "bank conflicts on tile {tile}: not padded: an access's element offsets overflow, so its banks cannot be computed"
            ));
            continue;
        };
        let before_bytes = array_bytes(&array.dims, elem);
        let kernel_bytes = kernel.shared_memory_bytes();
        let max_pad = 128 / elem.size_bytes();
        let mut best = (before, row);
        let mut over_budget = false;
        for pad in 1..=max_pad {
            let mut dims = array.dims.clone();
            *dims.last_mut().expect("two dims or more") = row + pad;
            let growth = array_bytes(&dims, elem) - before_bytes;
            if growth * GROWTH_DIVISOR > before_bytes || kernel_bytes + growth > kernel_limit {
                over_budget = true;
                break;
            }
            let Some(degree) = worst(&dims) else { break };
            if degree < best.0 {
                best = (degree, row + pad);
            }
            if degree <= floor {
                break;
            }
        }
        let irregular = if irregular_accesses > 0 {
            format!(" ({irregular_accesses} accesses not computable from the thread index, not counted)")
        } else {
            String::new()
        };
        let note = if best.1 != row {
            *kernel.shared[s].dims.last_mut().expect("two dims or more") = best.1;
            format!("bank conflicts on tile {tile}: degree {before} -> {} after padding rows {row} -> {} {elements}{irregular}", best.0, best.1)
        } else if before <= 1 {
            format!("bank conflicts on tile {tile}: degree {before}, no padding needed{irregular}")
        } else if before <= floor {
            format!("bank conflicts on tile {tile}: degree {before}, the fewest 32 banks allow: no padding needed{irregular}")
        } else if over_budget && best.0 == before {
            format!("bank conflicts on tile {tile}: degree {before}, not padded: no padding within the shared-memory budget lowers it{irregular}")
        } else {
            format!("bank conflicts on tile {tile}: degree {before}, no padding lowers it{irregular}")
        };
        kernel.variant.notes.push(note);
        report.arrays.push(ArrayPadding {
            array: s as u32,
            degree_before: before,
            degree_after: best.0,
            row_before: row,
            row_after: best.1,
            irregular_accesses,
        });
    }
    report
}

/// The worst degree `pattern` has over the warps of a block, with the array declared `dims`;
/// `None` when an element offset overflows `i64`.
pub fn pattern_degree(pattern: &SharedAccessPattern, dims: &[u32], elem: ScalarType, block: [u32; 3]) -> Option<u64> {
    worst_over_warps(pattern, dims, elem, block, warp_degree)
}

/// The least degree any layout can give `pattern`: its distinct words spread over 32 banks.
fn pattern_floor(pattern: &SharedAccessPattern, dims: &[u32], elem: ScalarType, block: [u32; 3]) -> Option<u64> {
    worst_over_warps(pattern, dims, elem, block, |words| (words.len() as u64).div_ceil(BANKS as u64))
}

fn worst_over_warps(
    pattern: &SharedAccessPattern,
    dims: &[u32],
    elem: ScalarType,
    block: [u32; 3],
    measure: impl Fn(&[i64]) -> u64,
) -> Option<u64> {
    let mut strides = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1].checked_mul(dims[k + 1] as i64)?;
    }
    let [bx, by, bz] = block.map(|d| d.max(1) as i64);
    let lanes = (bx * by * bz) as usize;
    let mut offsets = vec![0i64; lanes];
    let mut uniform_known = true;
    // Checked throughout: an offset past `i64` (an index such as `s[threadIdx.x + 0x7fffffffffffffff]`)
    // has no bank the analysis can name.
    for (index, &stride) in pattern.indices.iter().zip(&strides) {
        match index {
            IndexForm::Affine(form) => {
                uniform_known &= form.uniform.is_some();
                for (l, offset) in offsets.iter_mut().enumerate() {
                    let l = l as i64;
                    let tid = [l % bx, (l / bx) % by, l / (bx * by)];
                    let mut value = form.uniform.unwrap_or(0);
                    for a in 0..3 {
                        value = value.checked_add(form.thread[a].checked_mul(tid[a])?)?;
                    }
                    *offset = offset.checked_add(value.checked_mul(stride)?)?;
                }
            }
            IndexForm::FirstIteration(values) => {
                for (offset, &value) in offsets.iter_mut().zip(values) {
                    *offset = offset.checked_add(value.checked_mul(stride)?)?;
                }
            }
        }
    }
    let size = elem.size_bytes() as i64;
    // An unknown uniform part shifts every lane alike; for elements of a word or more that
    // permutes banks and keeps the degree, for narrower ones the offset within a word matters.
    let shifts: Vec<i64> = if uniform_known { vec![0] } else { (0..(4 / size).max(1)).collect() };
    let mut worst = 0;
    // As the hardware (and the simulator's counter) does: a warp's access is served in phases of
    // 128 bytes, whole warps for 4-byte elements, half-warps for 8-byte ones.
    let phase_lanes = (WARP * 4 / size.max(4) as usize).max(1);
    for warp in offsets.chunks(phase_lanes) {
        for &shift in &shifts {
            let words = warp_words(warp.iter().map(|&o| o.checked_add(shift)), size)?;
            worst = worst.max(measure(&words));
        }
    }
    Some(worst)
}

/// The distinct 4-byte words a warp touching `elements` requests, sorted; `None` when an
/// element's byte offset overflows `i64`.
fn warp_words(elements: impl Iterator<Item = Option<i64>>, size: i64) -> Option<Vec<i64>> {
    let mut words: Vec<i64> = Vec::new();
    for e in elements {
        let first_byte = e?.checked_mul(size)?;
        let last_byte = first_byte.checked_add(size - 1)?;
        words.extend(first_byte.div_euclid(4)..=last_byte.div_euclid(4));
    }
    words.sort_unstable();
    words.dedup();
    Some(words)
}

/// The largest number of distinct 4-byte words one bank serves for a warp requesting `words`.
fn warp_degree(words: &[i64]) -> u64 {
    let mut per_bank: HashMap<i64, u64> = HashMap::new();
    for w in words {
        *per_bank.entry(w.rem_euclid(BANKS)).or_default() += 1;
    }
    per_bank.values().copied().max().unwrap_or(0)
}

/// The shared accesses the statement tree reaches: (array, indices), in program order.
fn shared_accesses(body: &Body) -> Vec<(u32, Vec<Handle<Expr>>)> {
    let mut out = Vec::new();
    walk_block(body, &body.block, &mut out);
    out
}

fn walk_block(body: &Body, block: &[Stmt], out: &mut Vec<(u32, Vec<Handle<Expr>>)>) {
    for stmt in block {
        match stmt {
            Stmt::Assign { value, .. } | Stmt::Eval(value) | Stmt::Return(Some(value)) => walk_expr(body, *value, out),
            Stmt::Store { array, indices, value, .. } | Stmt::Atomic { array, indices, value, .. } => {
                walk_expr(body, *value, out);
                for &i in indices {
                    walk_expr(body, i, out);
                }
                if let ArrayRef::Shared(s) = array {
                    out.push((*s, indices.clone()));
                }
            }
            Stmt::If { cond, then, otherwise } => {
                walk_expr(body, *cond, out);
                walk_block(body, then, out);
                walk_block(body, otherwise, out);
            }
            Stmt::Loop { cond, body: inner, continuing, .. } => {
                if let Some(c) = cond {
                    walk_expr(body, *c, out);
                }
                walk_block(body, inner, out);
                walk_block(body, continuing, out);
            }
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Barrier => {}
        }
    }
}

fn walk_expr(body: &Body, expr: Handle<Expr>, out: &mut Vec<(u32, Vec<Handle<Expr>>)>) {
    match &body.exprs[expr].kind {
        ExprKind::Load { array, indices } => {
            for &i in indices {
                walk_expr(body, i, out);
            }
            if let ArrayRef::Shared(s) = array {
                out.push((*s, indices.clone()));
            }
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => walk_expr(body, *arg, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            walk_expr(body, *lhs, out);
            walk_expr(body, *rhs, out);
        }
        ExprKind::Select { cond, then, otherwise } => {
            for &e in [cond, then, otherwise] {
                walk_expr(body, e, out);
            }
        }
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => {
            for &a in args {
                walk_expr(body, a, out);
            }
        }
        _ => {}
    }
}

/// Writes index expressions as [`ThreadAffine`] forms. Locals assigned exactly once are followed
/// to their value (the mapping pass assigns each parallel variable once from the thread index);
/// the variables of counted loops whose start every lane agrees on are uniform (the lanes of a
/// warp run a loop in lockstep). The forms only steer a layout choice, never correctness.
struct FormContext<'a> {
    body: &'a Body,
    block: [u32; 3],
    assigned_once: HashMap<Handle<Local>, Handle<Expr>>,
    /// Counted-loop variables and their start values.
    loop_starts: HashMap<Handle<Local>, Handle<Expr>>,
}

impl<'a> FormContext<'a> {
    fn new(body: &'a Body, block: [u32; 3]) -> FormContext<'a> {
        let mut assigns: HashMap<Handle<Local>, Vec<Handle<Expr>>> = HashMap::new();
        let mut loop_starts = HashMap::new();
        let mut captured = HashSet::new();
        collect_assignments(&body.block, &mut assigns, &mut loop_starts, &mut captured);
        let assigned_once = assigns
            .into_iter()
            .filter(|(l, values)| values.len() == 1 && !loop_starts.contains_key(l) && !captured.contains(l))
            .filter(|(l, _)| body.locals[*l].array_dims.is_none())
            .map(|(l, values)| (l, values[0]))
            .collect();
        FormContext { body, block, assigned_once, loop_starts }
    }

    fn form(&self, expr: Handle<Expr>) -> Option<IndexForm> {
        if let Some(form) = self.affine(expr) {
            return Some(IndexForm::Affine(form));
        }
        let [bx, by, bz] = self.block.map(|d| d.max(1) as i64);
        let values: Option<Vec<i64>> = (0..bx * by * bz)
            .map(|l| self.first_iteration_value(expr, [l % bx, (l / bx) % by, l / (bx * by)], 0))
            .collect();
        values.map(IndexForm::FirstIteration)
    }

    fn affine(&self, expr: Handle<Expr>) -> Option<ThreadAffine> {
        self.form_at(expr, 0)
    }

    /// The value of `expr` in the thread at `tid`, with every counted loop at its start: only
    /// for expressions of constants, the thread's position and the block shape.
    fn first_iteration_value(&self, expr: Handle<Expr>, tid: [i64; 3], depth: u32) -> Option<i64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let e = &self.body.exprs[expr];
        if e.ty.is_float() {
            return None;
        }
        let sub = |x: Handle<Expr>| self.first_iteration_value(x, tid, depth + 1);
        match &e.kind {
            ExprKind::ConstInt(v) => Some(*v),
            ExprKind::ThreadIdx(axis) => Some(tid[axis.index()]),
            ExprKind::BlockDim(axis) => Some(self.block[axis.index()] as i64),
            ExprKind::Local(l) => match self.assigned_once.get(l) {
                Some(&value) => sub(value),
                None => sub(*self.loop_starts.get(l)?),
            },
            ExprKind::Cast { arg } => sub(*arg),
            // Checked: a value that overflows is not computable (the access is left out).
            ExprKind::Unary { op: UnaryOp::Neg, arg } => sub(*arg)?.checked_neg(),
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (sub(*lhs)?, sub(*rhs)?);
                match op {
                    BinaryOp::Add => a.checked_add(b),
                    BinaryOp::Sub => a.checked_sub(b),
                    BinaryOp::Mul => a.checked_mul(b),
                    BinaryOp::Div => a.checked_div(b),
                    BinaryOp::Rem => a.checked_rem(b),
                    BinaryOp::Shl => (0..63).contains(&b).then(|| a.checked_mul(1i64 << b)).flatten(),
                    BinaryOp::Shr => (0..63).contains(&b).then(|| a >> b),
                    BinaryOp::BitAnd => Some(a & b),
                    BinaryOp::BitOr => Some(a | b),
                    BinaryOp::BitXor => Some(a ^ b),
                    BinaryOp::Max => Some(a.max(b)),
                    BinaryOp::Min => Some(a.min(b)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn form_at(&self, expr: Handle<Expr>, depth: u32) -> Option<ThreadAffine> {
        if depth > MAX_DEPTH {
            return None;
        }
        let e = &self.body.exprs[expr];
        if e.ty.is_float() {
            return None;
        }
        let sub = |x: Handle<Expr>| self.form_at(x, depth + 1);
        match &e.kind {
            ExprKind::ConstInt(v) => Some(ThreadAffine::constant(*v)),
            ExprKind::ThreadIdx(axis) => {
                let mut thread = [0; 3];
                thread[axis.index()] = 1;
                Some(ThreadAffine { thread, uniform: Some(0) })
            }
            ExprKind::BlockDim(axis) => Some(ThreadAffine::constant(self.block[axis.index()] as i64)),
            ExprKind::Param(_) | ExprKind::BlockIdx(_) | ExprKind::GridDim(_) => Some(ThreadAffine::unknown_uniform()),
            ExprKind::Local(l) => {
                if let Some(&value) = self.assigned_once.get(l) {
                    return sub(value);
                }
                // Each iteration adds the same constant step in every lane: the thread part of
                // the start stays, the uniform part is unknown.
                let start = sub(*self.loop_starts.get(l)?)?;
                Some(ThreadAffine { thread: start.thread, uniform: None })
            }
            ExprKind::Cast { arg } => sub(*arg),
            ExprKind::Unary { op: UnaryOp::Neg, arg } => sub(*arg)?.scale(-1),
            ExprKind::Binary { op, lhs, rhs } => {
                let l = sub(*lhs)?;
                let r = sub(*rhs)?;
                match op {
                    BinaryOp::Add => l.add(&r),
                    BinaryOp::Sub => l.add(&r.scale(-1)?),
                    BinaryOp::Mul => match (l.is_uniform(), r.is_uniform()) {
                        (true, true) => Some(ThreadAffine {
                            thread: [0; 3],
                            uniform: match (l.uniform, r.uniform) {
                                (Some(a), Some(b)) => Some(a.checked_mul(b)?),
                                _ => None,
                            },
                        }),
                        (true, false) => r.scale(l.uniform?),
                        (false, true) => l.scale(r.uniform?),
                        (false, false) => None,
                    },
                    BinaryOp::Shl => {
                        let k = r.uniform.filter(|k| r.is_uniform() && (0..62).contains(k))?;
                        l.scale(1i64 << k)
                    }
                    // Any other operation of values every lane agrees on is one they agree on.
                    _ if l.is_uniform() && r.is_uniform() => Some(ThreadAffine::unknown_uniform()),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

fn collect_assignments(
    block: &[Stmt],
    assigns: &mut HashMap<Handle<Local>, Vec<Handle<Expr>>>,
    loop_starts: &mut HashMap<Handle<Local>, Handle<Expr>>,
    captured: &mut HashSet<Handle<Local>>,
) {
    for (p, stmt) in block.iter().enumerate() {
        match stmt {
            Stmt::Assign { local, value } => assigns.entry(*local).or_default().push(*value),
            Stmt::Atomic { capture: Some(c), .. } => {
                captured.insert(*c);
            }
            Stmt::If { then, otherwise, .. } => {
                collect_assignments(then, assigns, loop_starts, captured);
                collect_assignments(otherwise, assigns, loop_starts, captured);
            }
            Stmt::Loop { body: inner, continuing, range, .. } => {
                if let Some(r) = range {
                    loop_starts.insert(r.var, r.start);
                } else {
                    loop_starts.extend(stepped_loop_starts(block, p, continuing));
                }
                collect_assignments(inner, assigns, loop_starts, captured);
                collect_assignments(continuing, assigns, loop_starts, captured);
            }
            _ => {}
        }
    }
}

/// The locals a loop without a recorded range steps in its `continuing` block only, each with
/// its value on the first iteration: the staging pass's cooperative copies, `c1 = t % w; c0 =
/// t / w; while (c0 < h) { ... } continuing { c1 = c1 + 8; if (c1 >= w) { c1 = c1 - w; c0 =
/// c0 + 1; } ... }` (or one local stepped by a constant). A local qualifies when the loop body
/// does not assign it and the statements just before the loop assign it plainly (the first
/// iteration's value is that assignment's).
fn stepped_loop_starts(block: &[Stmt], loop_at: usize, continuing: &[Stmt]) -> Vec<(Handle<Local>, Handle<Expr>)> {
    let Stmt::Loop { body: inner, .. } = &block[loop_at] else { return Vec::new() };
    let mut stepped: HashMap<Handle<Local>, Vec<Handle<Expr>>> = HashMap::new();
    collect_assignments(continuing, &mut stepped, &mut HashMap::new(), &mut HashSet::new());
    let mut out = Vec::new();
    for &local in stepped.keys() {
        if crate::analysis::affine::count_assigns(inner, local) != 0 {
            continue;
        }
        let start = block[..loop_at].iter().rev().take_while(|s| matches!(s, Stmt::Assign { .. })).find_map(|s| match s {
            Stmt::Assign { local: l, value } if *l == local => Some(*value),
            _ => None,
        });
        if let Some(start) = start {
            out.push((local, start));
        }
    }
    out
}

#[cfg(test)]
mod tests;
