//! Per-kernel access summaries and the sections a launch reads and writes.
//!
//! [`summarize`] lists every reference a kernel makes to its array params (loads, stores,
//! atomics), each index classified as affine or irregular, together with the sequential
//! counted loops around it. [`launch_sections`] then bounds, for concrete param values, the
//! linearised element range each array param may be read and written in: parallel dims give
//! their exact ranges, sequential loops give interval bounds evaluated from the outside in, the
//! affine index is bounded term by term, and the references of a param are hulled. Whatever the
//! analysis cannot bound (an irregular index, a loop variable with no known range, a dimension
//! it cannot evaluate) makes the section `Whole`, which is always safe.
//!
//! Write sections are "may write" hulls. A write the launch is not sure to perform on every
//! element of its hull (under an `if`, in a loop with `break`, or with gaps such as `a[2*i]`)
//! is also counted as a read, so that the device copy holds the current values of the elements
//! the launch leaves alone before the runtime treats the whole write section as device-owned.
//!
//! Device functions (`ir::Function`) take only scalar locals as parameters and their bodies
//! have no array params, so they touch no arrays the host sees: calls add nothing here.


use crate::analysis::affine::{Affine, AffineForms};
use crate::analysis::uniform::{eval_uniform, eval_uniform_int};
use crate::diag::Span;
use crate::ir::{ArrayRef, Body, Expr, ExprKind, Handle, Kernel, Local, ParamKind, ParamValue, Stmt};

#[derive(Clone, Debug, PartialEq)]
pub enum IndexForm {
    Affine(Affine),
    Irregular,
}

impl IndexForm {
    pub fn as_affine(&self) -> Option<&Affine> {
        match self {
            IndexForm::Affine(a) => Some(a),
            IndexForm::Irregular => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    /// An atomic read-modify-write (`Stmt::Atomic`), an exchange (a write capturing the old
    /// value) included; an atomic write that captures nothing is a `Write`.
    AtomicUpdate,
}

/// Whether a reference runs in every iteration of the loops around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Certainty {
    Always,
    /// Under an `if`, a `?:`/`&&`/`||` operand, or in a loop that may stop early.
    Conditional,
}

/// A sequential counted loop around a reference (from `Stmt::Loop::range`).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopBound {
    pub var: Handle<Local>,
    pub start: IndexForm,
    pub end: IndexForm,
    pub step: i64,
    /// `do ... while`: the body runs once even when `start` is past `end`.
    pub runs_once_at_least: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ArrayAccess {
    /// The array param's index in `Kernel::params`.
    pub param: u32,
    pub kind: AccessKind,
    /// One per subscript, outermost first.
    pub indices: Vec<IndexForm>,
    /// The subscript expressions themselves (for messages).
    pub index_exprs: Vec<Handle<Expr>>,
    pub span: Span,
    /// Enclosing counted sequential loops, outermost first.
    pub loops: Vec<LoopBound>,
    pub certainty: Certainty,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccessSummary {
    pub accesses: Vec<ArrayAccess>,
    /// Per array param, the indices in `accesses` of its references that differ in what they
    /// reach (kind, certainty, subscripts, loops): a section is the hull of these alone. An
    /// unrolled body repeats one reference many times (BT's `rhs[m][k][j][i]`), and the
    /// runtime evaluates the distinct ones at every launch.
    distinct: Vec<(u32, Vec<usize>)>,
}

impl AccessSummary {
    pub fn new(accesses: Vec<ArrayAccess>) -> AccessSummary {
        let mut distinct: Vec<(u32, Vec<usize>)> = Vec::new();
        for (i, access) in accesses.iter().enumerate() {
            let slot = match distinct.iter().position(|(param, _)| *param == access.param) {
                Some(slot) => slot,
                None => {
                    distinct.push((access.param, Vec::new()));
                    distinct.len() - 1
                }
            };
            let seen = distinct[slot].1.iter().any(|&j| reaches_the_same(&accesses[j], access));
            if !seen {
                distinct[slot].1.push(i);
            }
        }
        AccessSummary { accesses, distinct }
    }

    pub fn of_param(&self, param: u32) -> impl Iterator<Item = &ArrayAccess> {
        self.accesses.iter().filter(move |a| a.param == param)
    }

    /// `param`'s references, one of each group that reaches the same elements.
    pub fn distinct_of_param(&self, param: u32) -> impl Iterator<Item = &ArrayAccess> {
        let indices = self.distinct.iter().find(|(p, _)| *p == param).map_or(&[][..], |(_, list)| &list[..]);
        indices.iter().map(|&i| &self.accesses[i])
    }
}

/// Whether two references of one param reach the same elements the same way at any launch.
fn reaches_the_same(a: &ArrayAccess, b: &ArrayAccess) -> bool {
    a.param == b.param && a.kind == b.kind && a.certainty == b.certainty && a.indices == b.indices && a.loops == b.loops
}

/// The references of a kernel's body to its array params.
pub fn summarize(kernel: &Kernel) -> AccessSummary {
    summarize_body(&kernel.body)
}

/// The references of any body (a grid kernel's too: its thread indices are irregular).
pub fn summarize_body(body: &Body) -> AccessSummary {
    let mut walker = Walker { body, forms: AffineForms::new(body), loops: Vec::new(), certainty: Certainty::Always, out: Vec::new() };
    walker.block(&body.block);
    AccessSummary::new(walker.out)
}

struct Walker<'a> {
    body: &'a Body,
    forms: AffineForms<'a>,
    loops: Vec<LoopBound>,
    certainty: Certainty,
    out: Vec<ArrayAccess>,
}

impl Walker<'_> {
    fn form(&self, expr: Handle<Expr>) -> IndexForm {
        self.forms.of(expr).map_or(IndexForm::Irregular, IndexForm::Affine)
    }

    fn record(&mut self, array: ArrayRef, indices: &[Handle<Expr>], kind: AccessKind, span: Span) {
        if let ArrayRef::Param(param) = array {
            self.out.push(ArrayAccess {
                param,
                kind,
                indices: indices.iter().map(|i| self.form(*i)).collect(),
                index_exprs: indices.to_vec(),
                span,
                loops: self.loops.clone(),
                certainty: self.certainty,
            });
        }
    }

    fn conditionally(&mut self, f: impl FnOnce(&mut Self)) {
        let saved = self.certainty;
        self.certainty = Certainty::Conditional;
        f(self);
        self.certainty = saved;
    }

    fn expr(&mut self, h: Handle<Expr>) {
        if h.index() >= self.body.exprs.len() {
            return;
        }
        let e = &self.body.exprs[h];
        match &e.kind {
            ExprKind::Load { array, indices } => {
                for i in indices {
                    self.expr(*i);
                }
                self.record(*array, indices, AccessKind::Read, e.span);
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => self.expr(*arg),
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(*lhs);
                if matches!(op, crate::ir::BinaryOp::LogAnd | crate::ir::BinaryOp::LogOr) {
                    self.conditionally(|w| w.expr(*rhs));
                } else {
                    self.expr(*rhs);
                }
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.expr(*cond);
                self.conditionally(|w| {
                    w.expr(*then);
                    w.expr(*otherwise);
                });
            }
            ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => {
                for a in args {
                    self.expr(*a);
                }
            }
            ExprKind::ConstInt(_)
            | ExprKind::ConstFloat(_)
            | ExprKind::Param(_)
            | ExprKind::Local(_)
            | ExprKind::ThreadIdx(_)
            | ExprKind::BlockIdx(_)
            | ExprKind::BlockDim(_)
            | ExprKind::GridDim(_) => {}
        }
    }

    fn block(&mut self, block: &[Stmt]) {
        for s in block {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { value, .. } => self.expr(*value),
            Stmt::Store { array, indices, value, span } => {
                self.expr(*value);
                for i in indices {
                    self.expr(*i);
                }
                self.record(*array, indices, AccessKind::Write, *span);
            }
            Stmt::Atomic { op, array, indices, value, capture, span } => {
                self.expr(*value);
                for i in indices {
                    self.expr(*i);
                }
                // An atomic write that captures the old value (`v = x; x = e;`, an exchange)
                // reads the element too.
                let kind = if *op == crate::ir::AtomicOp::Write && capture.is_none() { AccessKind::Write } else { AccessKind::AtomicUpdate };
                self.record(*array, indices, kind, *span);
            }
            Stmt::If { cond, then, otherwise } => {
                self.expr(*cond);
                self.conditionally(|w| {
                    w.block(then);
                    w.block(otherwise);
                });
            }
            Stmt::Loop { cond, test_first, body, continuing, range } => {
                // The condition and the step also run with the variable one past the range,
                // so they are walked without it (its uses there are unbounded).
                if let Some(c) = cond {
                    self.expr(*c);
                }
                self.conditionally(|w| w.block(continuing));
                let stops_early = contains_exit(body);
                // A variable the body assigns itself does not follow the range.
                let range = range.as_ref().filter(|r| crate::analysis::affine::count_assigns(body, r.var) == 0);
                let pushed = if let Some(r) = range {
                    self.loops.push(LoopBound {
                        var: r.var,
                        start: self.form(r.start),
                        end: self.form(r.end),
                        step: r.step,
                        runs_once_at_least: !*test_first,
                    });
                    true
                } else {
                    false
                };
                let saved = self.certainty;
                if stops_early || range.is_none() {
                    self.certainty = Certainty::Conditional;
                }
                self.block(body);
                self.certainty = saved;
                if pushed {
                    self.loops.pop();
                }
            }
            Stmt::Eval(e) => self.expr(*e),
            Stmt::Return(Some(e)) => self.expr(*e),
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Barrier => {}
        }
    }
}

/// Whether a loop body may leave the loop early (a `break` of this loop or a `return`).
fn contains_exit(block: &[Stmt]) -> bool {
    block.iter().any(|s| match s {
        Stmt::Break | Stmt::Return(_) => true,
        Stmt::If { then, otherwise, .. } => contains_exit(then) || contains_exit(otherwise),
        // A `break` inside a nested loop leaves only that loop.
        Stmt::Loop { body, .. } => contains_return(body),
        _ => false,
    })
}

fn contains_return(block: &[Stmt]) -> bool {
    block.iter().any(|s| match s {
        Stmt::Return(_) => true,
        Stmt::If { then, otherwise, .. } => contains_return(then) || contains_return(otherwise),
        Stmt::Loop { body, .. } => contains_return(body),
        _ => false,
    })
}

// ---------------------------------------------------------------------------------------------
// Sections of one launch

/// A range of elements of an array param: linearised element indices relative to the param's
/// base pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    None,
    /// Half-open: `lo..hi`.
    Elements { lo: i64, hi: i64 },
    Whole,
}

impl Section {
    pub fn hull(self, other: Section) -> Section {
        match (self, other) {
            (Section::None, s) | (s, Section::None) => s,
            (Section::Whole, _) | (_, Section::Whole) => Section::Whole,
            (Section::Elements { lo: a, hi: b }, Section::Elements { lo: c, hi: d }) => {
                Section::Elements { lo: a.min(c), hi: b.max(d) }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSections {
    /// The array param's index in `Kernel::params`.
    pub param: u32,
    /// Elements read and written: of the array, or, for a row table, of each row it touches
    /// (the second subscript).
    pub read: Section,
    pub write: Section,
    /// For a row table (`ParamKind::RowTable`): the rows (first subscript) whose elements
    /// `read` and `write` name. The launch reads the box `rows.read x read` and may write
    /// `rows.write x write`; a write box it is not sure to fill is in the read box too.
    pub rows: Option<RowSections>,
}

/// The rows of a row table a launch reads and writes (indices into the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSections {
    pub read: Section,
    pub write: Section,
}

/// For each array param of `kernel` (in param order), the elements a launch with `params` may
/// read and write. See the module doc for what is conservative.
pub fn launch_sections(kernel: &Kernel, params: &[ParamValue]) -> Vec<ParamSections> {
    launch_sections_with(kernel, &summarize(kernel), params)
}

/// [`launch_sections`] with the kernel's [`summarize`] already made.
pub fn launch_sections_with(kernel: &Kernel, summary: &AccessSummary, params: &[ParamValue]) -> Vec<ParamSections> {
    let array_params: Vec<u32> = kernel
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind.is_indexed())
        .map(|(i, _)| i as u32)
        .collect();
    let empty = |param: u32| {
        let rows = matches!(kernel.params[param as usize].kind, ParamKind::RowTable { .. })
            .then_some(RowSections { read: Section::None, write: Section::None });
        ParamSections { param, read: Section::None, write: Section::None, rows }
    };
    let space = match parallel_ranges(kernel, params) {
        Ok(Some(space)) => Some(space),
        Ok(None) => return array_params.iter().map(|&param| empty(param)).collect(),
        Err(_) => None,
    };
    array_params
        .iter()
        .map(|&param| {
            if matches!(kernel.params[param as usize].kind, ParamKind::RowTable { .. }) {
                return row_table_sections(summary, param, space.as_ref(), params);
            }
            let mut sections = empty(param);
            let strides = array_strides(kernel, param, params);
            // The sections of the writes that fill theirs: the write section is their hull,
            // which they fill only when they leave no gap (`v[0]` and `v[n-1]` leave one).
            let mut filled: Vec<(i64, i64)> = Vec::new();
            for access in summary.distinct_of_param(param) {
                let (section, dense) = match &space {
                    Some(space) => access_section(access, strides.as_deref(), space, params),
                    None => (Section::Whole, Density::Unknown),
                };
                let reads = access.kind != AccessKind::Write
                    || access.certainty == Certainty::Conditional
                    || dense == Density::Unknown;
                if reads {
                    sections.read = sections.read.hull(section);
                }
                if access.kind != AccessKind::Read {
                    sections.write = sections.write.hull(section);
                    if let (false, Section::Elements { lo, hi }) = (reads, section) {
                        filled.push((lo, hi));
                    }
                }
            }
            // The hull's gaps keep what the launch leaves alone: the launch reads them, so that
            // the copy it writes holds them current (the runtime counts the whole write section
            // as written by the device that ran the launch).
            if leaves_gaps(filled) {
                sections.read = sections.read.hull(sections.write);
            }
            sections
        })
        .collect()
}

/// Whether the union of these half-open ranges is not one range.
fn leaves_gaps(mut ranges: Vec<(i64, i64)>) -> bool {
    ranges.retain(|(lo, hi)| lo < hi);
    ranges.sort_unstable();
    let Some(&(_, mut reach)) = ranges.first() else { return false };
    for &(lo, hi) in &ranges[1..] {
        if lo > reach {
            return true;
        }
        reach = reach.max(hi);
    }
    false
}

/// The values a loop variable takes: `lo..=hi`, and how many distinct values with what spacing
/// when the analysis knows them exactly.
#[derive(Clone, Copy, Debug)]
struct VarRange {
    lo: i128,
    hi: i128,
    /// `(count, step)` when the variable takes exactly `lo, lo+|step|, ...` `count` times.
    exact: Option<(i128, i128)>,
}

/// The parallel dims' ranges, `Ok(None)` when the iteration space is empty.
fn parallel_ranges(kernel: &Kernel, params: &[ParamValue]) -> Result<Option<VarMap<VarRange>>, String> {
    let mut ranges = VarMap::default();
    for dim in &kernel.space {
        let trip = eval_uniform_int(&kernel.body, dim.trip_count, params)? as i128;
        if trip <= 0 {
            return Ok(None);
        }
        let start = eval_uniform_int(&kernel.body, dim.start, params)? as i128;
        // Exact in `i128`: every factor and term is an `i64`.
        let last = start + (trip - 1) * dim.step as i128;
        ranges.insert(
            dim.var,
            VarRange { lo: start.min(last), hi: start.max(last), exact: Some((trip, (dim.step as i128).abs())) },
        );
    }
    Ok(Some(ranges))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Density {
    /// Every element of the hull is touched.
    Dense,
    Unknown,
}

/// An affine form evaluated at the launch's params: constant plus per-variable coefficients.
struct Linear {
    constant: i128,
    coeffs: VarMap<i128>,
}

/// A small map keyed by loop variable: a kernel's accesses involve a handful, and the runtime
/// builds these at every launch, where a vector beats a tree.
#[derive(Clone, Debug)]
struct VarMap<T>(Vec<(Handle<Local>, T)>);

impl<T> Default for VarMap<T> {
    fn default() -> Self {
        VarMap(Vec::new())
    }
}

impl<T> VarMap<T> {
    fn get(&self, var: &Handle<Local>) -> Option<&T> {
        self.0.iter().find(|(v, _)| v == var).map(|(_, t)| t)
    }
    fn insert(&mut self, var: Handle<Local>, value: T) {
        match self.0.iter_mut().find(|(v, _)| *v == var) {
            Some((_, t)) => *t = value,
            None => self.0.push((var, value)),
        }
    }
    fn iter(&self) -> impl Iterator<Item = (&Handle<Local>, &T)> {
        self.0.iter().map(|(v, t)| (v, t))
    }
    fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter().map(|(_, t)| t)
    }
}

impl<T: Default> VarMap<T> {
    fn entry_or_zero(&mut self, var: Handle<Local>) -> &mut T {
        let i = match self.0.iter().position(|(v, _)| *v == var) {
            Some(i) => i,
            None => {
                self.0.push((var, T::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
}

impl<'a, T> IntoIterator for &'a VarMap<T> {
    type Item = (&'a Handle<Local>, &'a T);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (Handle<Local>, T)>, fn(&'a (Handle<Local>, T)) -> (&'a Handle<Local>, &'a T)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(v, t)| (v, t))
    }
}

impl Linear {
    /// Adds `other` times `by`; `None` on overflow.
    fn add_scaled(&mut self, other: &Linear, by: i128) -> Option<()> {
        self.constant = self.constant.checked_add(other.constant.checked_mul(by)?)?;
        for (&v, &k) in &other.coeffs {
            let c = self.coeffs.entry_or_zero(v);
            *c = c.checked_add(k.checked_mul(by)?)?;
        }
        Some(())
    }
}

fn evaluate_params(form: &Affine, params: &[ParamValue]) -> Option<Linear> {
    let mut lin = Linear { constant: form.constant as i128, coeffs: VarMap::default() };
    for (c, m) in &form.terms {
        let mut k = *c as i128;
        for p in &m.params {
            match params.get(*p as usize)? {
                ParamValue::Int(v) => k = k.checked_mul(*v as i128)?,
                _ => return None,
            }
        }
        match m.var {
            Some(v) => {
                let c = lin.coeffs.entry_or_zero(v);
                *c = c.checked_add(k)?;
            }
            None => lin.constant = lin.constant.checked_add(k)?,
        }
    }
    Some(lin)
}

fn interval(lin: &Linear, env: &VarMap<VarRange>) -> Option<(i128, i128)> {
    let (mut lo, mut hi) = (lin.constant, lin.constant);
    for (v, k) in &lin.coeffs {
        let r = env.get(v)?;
        let (a, b) = (k.checked_mul(r.lo)?, k.checked_mul(r.hi)?);
        lo = lo.checked_add(a.min(b))?;
        hi = hi.checked_add(a.max(b))?;
    }
    Some((lo, hi))
}

/// The ranges of the variables at `access`: the parallel dims' and those of the sequential
/// loops around it. `Err` holds what the access amounts to when they cannot be bounded (the
/// whole array), or `Section::None` when a loop around it never runs its body.
fn access_env(
    access: &ArrayAccess,
    space: &VarMap<VarRange>,
    params: &[ParamValue],
) -> Result<VarMap<VarRange>, (Section, Density)> {
    let whole = (Section::Whole, Density::Unknown);
    let mut env = space.clone();
    for lp in &access.loops {
        let (Some(start), Some(end)) = (lp.start.as_affine(), lp.end.as_affine()) else {
            return Err(whole);
        };
        let (Some(start), Some(end)) = (evaluate_params(start, params), evaluate_params(end, params)) else {
            return Err(whole);
        };
        let (Some(s), Some(e)) = (interval(&start, &env), interval(&end, &env)) else {
            return Err(whole);
        };
        let bounds = if lp.step > 0 { e.1.checked_sub(1).map(|h| (s.0, h)) } else { e.0.checked_add(1).map(|l| (l, s.1)) };
        let Some((mut lo, mut hi)) = bounds else {
            return Err(whole);
        };
        if lp.runs_once_at_least {
            lo = lo.min(s.0);
            hi = hi.max(s.1);
        }
        if lo > hi || lp.step == 0 {
            // The loop never runs its body: the reference never executes.
            return Err((Section::None, Density::Dense));
        }
        let bounds_fixed = start.coeffs.values().all(|k| *k == 0) && end.coeffs.values().all(|k| *k == 0);
        let exact = (bounds_fixed && !lp.runs_once_at_least)
            .then(|| {
                let step = (lp.step as i128).abs();
                Some((hi.checked_sub(lo)?.checked_div(step)?.checked_add(1)?, step))
            })
            .flatten();
        env.insert(lp.var, VarRange { lo, hi, exact });
    }
    Ok(env)
}

fn access_section(
    access: &ArrayAccess,
    strides: Option<&[i64]>,
    space: &VarMap<VarRange>,
    params: &[ParamValue],
) -> (Section, Density) {
    let whole = (Section::Whole, Density::Unknown);
    let env = match access_env(access, space, params) {
        Ok(env) => env,
        Err(outcome) => return outcome,
    };
    let Some(strides) = strides.filter(|s| s.len() == access.indices.len()) else {
        return whole;
    };
    // Linearise: the element offset is the sum of each subscript times its dimension's stride.
    let mut lin = Linear { constant: 0, coeffs: VarMap::default() };
    for (index, &stride) in access.indices.iter().zip(strides) {
        let Some(part) = index.as_affine().and_then(|a| evaluate_params(a, params)) else {
            return whole;
        };
        if lin.add_scaled(&part, stride as i128).is_none() {
            return whole;
        }
    }
    let Some((lo, hi)) = interval(&lin, &env) else {
        return whole;
    };
    let (Ok(lo), Ok(hi)) = (i64::try_from(lo), i64::try_from(hi.saturating_add(1))) else {
        return whole;
    };
    (Section::Elements { lo, hi }, density(&lin, &env))
}

/// The element stride of each dimension of array param `param` at these param values (the
/// product of the lengths of the inner dimensions), `None` when a length is unknown.
fn array_strides(kernel: &Kernel, param: u32, params: &[ParamValue]) -> Option<Vec<i64>> {
    let ArrayShape { dims } = array_dims(kernel, param)?;
    let mut strides = vec![0i64; dims.len()];
    let mut stride: i64 = 1;
    for d in (0..dims.len()).rev() {
        strides[d] = stride;
        if d > 0 {
            let len = dims[d]?;
            let Ok(ParamValue::Int(len)) = eval_uniform(&kernel.body, len, params) else {
                return None;
            };
            stride = stride.checked_mul(len)?;
        }
    }
    Some(strides)
}

struct ArrayShape<'a> {
    dims: &'a [Option<Handle<Expr>>],
}

fn array_dims(kernel: &Kernel, param: u32) -> Option<ArrayShape<'_>> {
    match &kernel.params.get(param as usize)?.kind {
        ParamKind::Array { dims, .. } => Some(ArrayShape { dims }),
        ParamKind::Scalar(_) | ParamKind::RowTable { .. } => None,
    }
}

/// One subscript's values at an access, as a section of that dimension alone.
fn index_section(form: &IndexForm, env: &VarMap<VarRange>, params: &[ParamValue]) -> (Section, Density, Option<Linear>) {
    let Some(lin) = form.as_affine().and_then(|a| evaluate_params(a, params)) else {
        return (Section::Whole, Density::Unknown, None);
    };
    let Some((lo, hi)) = interval(&lin, env) else {
        return (Section::Whole, Density::Unknown, None);
    };
    let (Ok(lo), Ok(hi)) = (i64::try_from(lo), i64::try_from(hi.saturating_add(1))) else {
        return (Section::Whole, Density::Unknown, None);
    };
    let dense = density(&lin, env);
    (Section::Elements { lo, hi }, dense, Some(lin))
}

/// The sections of a row table: each access is the box of its row subscript's values by its
/// element subscript's. A write fills its box only when it runs unconditionally, both
/// subscripts are dense and depend on different variables (each row then gets every element),
/// and every write of the param has that same box; any other write box is read as well, so
/// that the device rows hold the elements the launch leaves alone.
fn row_table_sections(
    summary: &AccessSummary,
    param: u32,
    space: Option<&VarMap<VarRange>>,
    params: &[ParamValue],
) -> ParamSections {
    let mut rows = RowSections { read: Section::None, write: Section::None };
    let (mut read, mut write) = (Section::None, Section::None);
    let mut write_boxes: Vec<((Section, Section), bool)> = Vec::new();
    for access in summary.distinct_of_param(param) {
        let boxed = match space.map(|space| access_env(access, space, params)) {
            None => Ok(((Section::Whole, Density::Unknown, None), (Section::Whole, Density::Unknown, None))),
            Some(Err((Section::None, _))) => continue,
            Some(Err(_)) => Ok(((Section::Whole, Density::Unknown, None), (Section::Whole, Density::Unknown, None))),
            Some(Ok(env)) if access.indices.len() == 2 => {
                Ok((index_section(&access.indices[0], &env, params), index_section(&access.indices[1], &env, params)))
            }
            Some(Ok(_)) => Err(()),
        };
        let ((row, row_dense, row_lin), (col, col_dense, col_lin)) = match boxed {
            Ok(b) => b,
            // Not two subscripts (the verifier refuses it): everything, conservatively.
            Err(()) => ((Section::Whole, Density::Unknown, None), (Section::Whole, Density::Unknown, None)),
        };
        let separate = match (&row_lin, &col_lin) {
            (Some(r), Some(c)) => r.coeffs.iter().all(|(v, k)| *k == 0 || c.coeffs.get(v).is_none_or(|k| *k == 0)),
            _ => false,
        };
        let fills = access.kind != AccessKind::Read
            && access.certainty == Certainty::Always
            && row_dense == Density::Dense
            && col_dense == Density::Dense
            && separate;
        if access.kind != AccessKind::Write {
            rows.read = rows.read.hull(row);
            read = read.hull(col);
        }
        if access.kind != AccessKind::Read {
            rows.write = rows.write.hull(row);
            write = write.hull(col);
            write_boxes.push(((row, col), fills));
        }
    }
    let first = write_boxes.first().map(|(b, _)| *b);
    let all_fill = write_boxes.iter().all(|(b, fills)| *fills && Some(*b) == first);
    if !all_fill {
        for ((row, col), _) in write_boxes {
            rows.read = rows.read.hull(row);
            read = read.hull(col);
        }
    }
    ParamSections { param, read, write, rows: Some(rows) }
}

/// Dense when the variables, taken from the finest spacing to the coarsest, each start their
/// next value no further than one past what the finer ones already cover.
fn density(lin: &Linear, env: &VarMap<VarRange>) -> Density {
    let mut steps = Vec::new();
    for (v, k) in &lin.coeffs {
        if *k == 0 {
            continue;
        }
        let Some((count, step)) = env.get(v).and_then(|r| r.exact) else {
            return Density::Unknown;
        };
        if count > 1 {
            let Some(spacing) = k.checked_abs().and_then(|k| k.checked_mul(step)) else { return Density::Unknown };
            steps.push((spacing, count));
        }
    }
    steps.sort();
    let mut extent: i128 = 1;
    for (spacing, count) in steps {
        if spacing > extent {
            return Density::Unknown;
        }
        // Past `i128` nothing is known to be dense (and no section reaches that far).
        let Some(next) = spacing.checked_mul(count - 1).and_then(|s| extent.checked_add(s)) else { return Density::Unknown };
        extent = next;
    }
    Density::Dense
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::ir::BinaryOp;

    const N: ParamValue = ParamValue::Int(100);
    const P: ParamValue = ParamValue::Pointer(0x1000);

    /// A builder with the one dim `i` from 1, `n - 2` iterations (`n` is param 0).
    fn interior_loop() -> (B, Handle<Local>, crate::ir::ParallelDim) {
        let mut b = B::new();
        let i = b.loop_var("i");
        let one = b.int(1);
        let n = b.param(0);
        let two = b.int(2);
        let trip = b.bin(BinaryOp::Sub, n, two);
        let dim = b.dim(i, one, trip);
        (b, i, dim)
    }

    /// `for i in 1..n-1: b[i] = a[i-1] + a[i] + a[i+1]` over one array `a` read and written:
    /// `a[i] = a[i-1] + a[i+1]` keeps the test to one param.
    fn stencil() -> Kernel {
        let (mut b, i, dim) = interior_loop();
        let im1 = b.var_plus(i, -1);
        let ip1 = b.var_plus(i, 1);
        let ie = b.local(i);
        let l = b.load(1, vec![im1]);
        let c = b.load(1, vec![ie]);
        let r = b.load(1, vec![ip1]);
        let s = b.add(l, c);
        let s = b.add(s, r);
        let st = b.store(1, vec![ie], s);
        b.body.block.push(st);
        kernel("stencil", vec![scalar_param("n", 0), array_param("a", vec![None], 1)], vec![dim], b.body)
    }

    #[test]
    fn one_dimensional_stencil() {
        let k = stencil();
        let s = launch_sections(&k, &[N, P]);
        assert_eq!(s, vec![ParamSections {
            param: 1,
            read: Section::Elements { lo: 0, hi: 100 },
            write: Section::Elements { lo: 1, hi: 99 },
            rows: None,
        }]);
    }

    /// An unrolled body repeats references: the summary keeps one of each for the runtime's
    /// per-launch evaluation, and the sections are those of every reference.
    #[test]
    fn repeated_references_are_evaluated_once() {
        let (mut b, i, dim) = interior_loop();
        for shift in [0, 0, 1, 0, -1, 1] {
            let at = b.var_plus(i, shift);
            let here = b.local(i);
            let old = b.load(1, vec![here]);
            let other = b.load(1, vec![at]);
            let sum = b.add(old, other);
            let st = b.store(1, vec![here], sum);
            b.body.block.push(st);
        }
        let k = kernel("unrolled", vec![scalar_param("n", 0), array_param("a", vec![None], 1)], vec![dim], b.body);
        let summary = summarize(&k);
        assert_eq!(summary.of_param(1).count(), 18);
        // Reads of a[i], a[i+1], a[i-1]; the write of a[i].
        assert_eq!(summary.distinct_of_param(1).count(), 4);
        let s = launch_sections(&k, &[N, P]);
        assert_eq!(s[0].read, Section::Elements { lo: 0, hi: 100 });
        assert_eq!(s[0].write, Section::Elements { lo: 1, hi: 99 });
    }

    #[test]
    fn zero_trip_count_touches_nothing() {
        let k = stencil();
        let s = launch_sections(&k, &[ParamValue::Int(2), P]);
        assert_eq!(s[0].read, Section::None);
        assert_eq!(s[0].write, Section::None);
    }

    /// `a[i][j] = 0` over `i in 0..n`, `j in 0..m` with `double a[n][M]`, M = param 2.
    fn two_d(inner_len: u32) -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let j = b.loop_var("j");
        let zero = b.int(0);
        let n = b.param(0);
        let m = b.param(1);
        let row_len = b.param(inner_len);
        let di = b.dim(i, zero, n);
        let dj = b.dim(j, zero, m);
        let ie = b.local(i);
        let je = b.local(j);
        let v = b.float(0.0, crate::ir::ScalarType::F64);
        let st = b.store(3, vec![ie, je], v);
        b.body.block.push(st);
        kernel(
            "two_d",
            vec![scalar_param("n", 0), scalar_param("m", 1), scalar_param("M", 2), array_param("a", vec![None, Some(row_len)], 3)],
            vec![di, dj],
            b.body,
        )
    }

    #[test]
    fn two_dimensional_rows_linearise_with_the_inner_length() {
        let s = launch_sections(&two_d(2), &[ParamValue::Int(4), ParamValue::Int(8), ParamValue::Int(8), P]);
        assert_eq!(s[0].write, Section::Elements { lo: 0, hi: 32 });
        assert_eq!(s[0].read, Section::None, "a full-row write covers its hull");
        // Rows longer than the columns written leave gaps: the write also counts as a read.
        let s = launch_sections(&two_d(2), &[ParamValue::Int(4), ParamValue::Int(8), ParamValue::Int(10), P]);
        assert_eq!(s[0].write, Section::Elements { lo: 0, hi: 38 });
        assert_eq!(s[0].read, Section::Elements { lo: 0, hi: 38 });
    }

    #[test]
    fn sequential_inner_loop_ranges_bound_the_index() {
        // for i in 0..n (parallel): for k in i..i+3: s += a[k]; b[i] = s
        let mut b = B::new();
        let i = b.loop_var("i");
        let k = b.loop_var("k");
        let zero = b.int(0);
        let n = b.param(0);
        let di = b.dim(i, zero, n);
        let start = b.local(i);
        let end = b.var_plus(i, 3);
        let ke = b.local(k);
        let ld = b.load(1, vec![ke]);
        let acc = b.new_local("s", crate::ir::ScalarType::F64, crate::ir::LocalKind::Var);
        let acc_e = b.local(acc);
        let sum = b.add(acc_e, ld);
        let body = vec![Stmt::Assign { local: acc, value: sum }];
        let lp = b.counted_loop(k, start, end, body);
        b.body.block.extend(lp);
        let ie = b.local(i);
        let acc_e = b.local(acc);
        let st = b.store(2, vec![ie], acc_e);
        b.body.block.push(st);
        let kern = kernel(
            "window",
            vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)],
            vec![di],
            b.body,
        );
        let s = launch_sections(&kern, &[ParamValue::Int(10), P, P]);
        assert_eq!(s[0], ParamSections { param: 1, read: Section::Elements { lo: 0, hi: 12 }, write: Section::None, rows: None });
        assert_eq!(s[1], ParamSections { param: 2, read: Section::None, write: Section::Elements { lo: 0, hi: 10 }, rows: None });
    }

    #[test]
    fn csr_gather_is_whole() {
        // y[i] = x[col[i]]
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let di = b.dim(i, zero, n);
        let ie = b.local(i);
        let col = b.add_expr(ExprKind::Load { array: ArrayRef::Param(2), indices: vec![ie] }, crate::ir::ScalarType::I32);
        let x = b.load(1, vec![col]);
        let st = b.store(3, vec![ie], x);
        b.body.block.push(st);
        let kern = kernel(
            "gather",
            vec![scalar_param("n", 0), array_param("x", vec![None], 1), array_param("col", vec![None], 2), array_param("y", vec![None], 3)],
            vec![di],
            b.body,
        );
        let s = launch_sections(&kern, &[ParamValue::Int(5), P, P, P]);
        assert_eq!(s[0].read, Section::Whole);
        assert_eq!(s[1].read, Section::Elements { lo: 0, hi: 5 });
        assert_eq!(s[2].write, Section::Elements { lo: 0, hi: 5 });
        let summary = summarize(&kern);
        assert_eq!(summary.of_param(1).next().unwrap().indices, vec![IndexForm::Irregular]);
    }

    #[test]
    fn conditional_writes_are_also_reads() {
        // if (i > 0) a[i] = 0
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let di = b.dim(i, zero, n);
        let ie = b.local(i);
        let cond = b.bin(BinaryOp::Gt, ie, zero);
        let v = b.float(0.0, crate::ir::ScalarType::F64);
        let st = b.store(1, vec![ie], v);
        b.body.block.push(Stmt::If { cond, then: vec![st], otherwise: vec![] });
        let kern = kernel("cond", vec![scalar_param("n", 0), array_param("a", vec![None], 1)], vec![di], b.body);
        let s = launch_sections(&kern, &[ParamValue::Int(5), P]);
        assert_eq!(s[0].write, Section::Elements { lo: 0, hi: 5 });
        assert_eq!(s[0].read, Section::Elements { lo: 0, hi: 5 });
    }

    #[test]
    fn writes_whose_hull_has_gaps_also_read_it() {
        // a[0] = 0; a[n - 1] = 0 in a one-iteration loop: the hull 0..n is not all written.
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let one = b.int(1);
        let n = b.param(0);
        let di = b.dim(i, zero, one);
        let v = b.float(0.0, crate::ir::ScalarType::F64);
        let first = b.store(1, vec![zero], v);
        let last_index = b.bin(BinaryOp::Sub, n, one);
        let last = b.store(1, vec![last_index], v);
        b.body.block = vec![first, last];
        let kern = kernel("ends", vec![scalar_param("n", 0), array_param("a", vec![None], 1)], vec![di], b.body);
        let s = launch_sections(&kern, &[ParamValue::Int(8), P]);
        assert_eq!(s[0].write, Section::Elements { lo: 0, hi: 8 });
        assert_eq!(s[0].read, Section::Elements { lo: 0, hi: 8 }, "the gap 1..7 must be current where the write lands");
        // Writes that meet leave no gap: a[0] and a[1] with n = 2.
        let s = launch_sections(&kern, &[ParamValue::Int(2), P]);
        assert_eq!(s[0].read, Section::None);
    }

    /// `t[i][j] = t[i][j + shift]` over `i < n`, `j < m` (parallel), `t` a table of rows;
    /// `diagonal` stores `t[i][i]` instead.
    fn row_table_kernel(shift: i64, diagonal: bool) -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let j = b.loop_var("j");
        let zero = b.int(0);
        let n = b.param(0);
        let m = b.param(1);
        let di = b.dim(i, zero, n);
        let dj = b.dim(j, zero, m);
        let (ie, je) = (b.local(i), b.var_plus(j, shift));
        let load = b.load(2, vec![ie, je]);
        let (ie2, je2) = (b.local(i), if diagonal { b.local(i) } else { b.local(j) });
        let st = b.store(2, vec![ie2, je2], load);
        b.body.block.push(st);
        let table = crate::ir::Param { name: "t".into(), kind: ParamKind::RowTable { elem: crate::ir::ScalarType::F64, read_only: false }, arg: 2 };
        kernel("rows", vec![scalar_param("n", 0), scalar_param("m", 1), table], vec![di, dj], b.body)
    }

    #[test]
    fn row_tables_have_row_and_element_sections() {
        let s = launch_sections(&row_table_kernel(1, false), &[ParamValue::Int(6), ParamValue::Int(4), P]);
        let rows = Section::Elements { lo: 0, hi: 6 };
        assert_eq!(s, vec![ParamSections {
            param: 2,
            read: Section::Elements { lo: 1, hi: 5 },
            write: Section::Elements { lo: 0, hi: 4 },
            rows: Some(RowSections { read: rows, write: rows }),
        }]);
    }

    #[test]
    fn a_row_table_write_that_misses_elements_of_its_box_is_also_read() {
        // t[i][i]: rows 0..6 and elements 0..6, but one element per row.
        let s = launch_sections(&row_table_kernel(0, true), &[ParamValue::Int(6), ParamValue::Int(6), P]);
        let box6 = Section::Elements { lo: 0, hi: 6 };
        assert_eq!((s[0].write, s[0].read), (box6, box6));
        assert_eq!(s[0].rows, Some(RowSections { read: box6, write: box6 }));
        // With no iterations, nothing at all.
        let s = launch_sections(&row_table_kernel(0, false), &[ParamValue::Int(0), ParamValue::Int(6), P]);
        assert_eq!(s[0].rows, Some(RowSections { read: Section::None, write: Section::None }));
        assert_eq!(s[0].read, Section::None);
    }

    mod brute_force {
        use super::*;
        use proptest::prelude::*;

        /// `for i in start..start+trip*step by step (parallel)`:
        /// `  for k in i+klo .. i+khi (sequential)`: `read a[ci*i + ck*k + off]`
        /// `  write b[wi*i + woff]`
        #[derive(Clone, Debug)]
        struct Shape {
            start: i64,
            trip: i64,
            step: i64,
            klo: i64,
            khi: i64,
            ci: i64,
            ck: i64,
            off: i64,
            wi: i64,
            woff: i64,
        }

        fn build(s: &Shape) -> Kernel {
            let mut b = B::new();
            let i = b.loop_var("i");
            let k = b.loop_var("k");
            let start = b.int(s.start);
            let trip = b.param(0);
            let mut dim = b.dim(i, start, trip);
            dim.step = s.step;
            let kstart = b.var_plus(i, s.klo);
            let kend = b.var_plus(i, s.khi);
            let ie = b.local(i);
            let ke = b.local(k);
            let ci = b.int(s.ci);
            let ck = b.int(s.ck);
            let off = b.int(s.off);
            let t1 = b.mul(ci, ie);
            let t2 = b.mul(ck, ke);
            let sum = b.add(t1, t2);
            let idx = b.add(sum, off);
            let ld = b.load(1, vec![idx]);
            let x = b.new_local("x", crate::ir::ScalarType::F64, crate::ir::LocalKind::Var);
            let lp = b.counted_loop(k, kstart, kend, vec![Stmt::Assign { local: x, value: ld }]);
            b.body.block.extend(lp);
            let wi = b.int(s.wi);
            let woff = b.int(s.woff);
            let wt = b.mul(wi, ie);
            let widx = b.add(wt, woff);
            let v = b.float(0.0, crate::ir::ScalarType::F64);
            let st = b.store(2, vec![widx], v);
            b.body.block.push(st);
            kernel("shape", vec![scalar_param("trip", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)], vec![dim], b.body)
        }

        fn touched(s: &Shape) -> (Vec<i64>, Vec<i64>) {
            let (mut reads, mut writes) = (Vec::new(), Vec::new());
            for t in 0..s.trip.max(0) {
                let i = s.start + t * s.step;
                for k in (i + s.klo)..(i + s.khi) {
                    reads.push(s.ci * i + s.ck * k + s.off);
                }
                writes.push(s.wi * i + s.woff);
            }
            (reads, writes)
        }

        fn contains(section: Section, elems: &[i64]) -> bool {
            match section {
                Section::Whole => true,
                Section::None => elems.is_empty(),
                Section::Elements { lo, hi } => elems.iter().all(|e| (lo..hi).contains(e)),
            }
        }

        fn shapes() -> impl Strategy<Value = Shape> {
            (-5i64..5, -1i64..8, prop_oneof![Just(1i64), Just(2), Just(-1)], -3i64..3, -3i64..4, -3i64..4, -3i64..4, -10i64..10, -3i64..4, -10i64..10)
                .prop_map(|(start, trip, step, klo, khi, ci, ck, off, wi, woff)| Shape { start, trip, step, klo, khi, ci, ck, off, wi, woff })
        }

        proptest! {
            #[test]
            fn sections_cover_every_element_touched(s in shapes()) {
                let kern = build(&s);
                let sections = launch_sections(&kern, &[ParamValue::Int(s.trip), P, P]);
                let (reads, writes) = touched(&s);
                prop_assert!(contains(sections[0].read, &reads), "{:?} misses reads {:?}", sections[0], reads);
                prop_assert!(contains(sections[1].write, &writes), "{:?} misses writes {:?}", sections[1], writes);
                // A dense write hull is exact; otherwise it is read as well.
                if let Section::Elements { lo, hi } = sections[1].write {
                    let exact = (lo..hi).all(|e| writes.contains(&e));
                    prop_assert!(exact || sections[1].read == sections[1].write, "{:?} {:?}", sections[1], writes);
                    prop_assert_eq!(lo, *writes.iter().min().unwrap());
                    prop_assert_eq!(hi, writes.iter().max().unwrap() + 1);
                }
                if s.trip <= 0 {
                    prop_assert_eq!(sections[0].read, Section::None);
                    prop_assert_eq!(sections[1].write, Section::None);
                }
            }
        }
    }
}
