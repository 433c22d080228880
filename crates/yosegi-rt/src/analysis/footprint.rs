//! Per-block access analysis of grid kernels, for shared-memory staging (`opt::staging`).
//!
//! It owns the question "which array reads of a mapped grid kernel could be served from a
//! per-block tile, and how much would that save". It reads the shape the mapping pass makes
//! (reduction inits, `_g` positions, ONE top-level guard `If` whose then-block starts with the
//! dim assignments, then the reduction tree) and the kernel's [`AxisBinding`]s.
//!
//! Every load of an array param that runs *unconditionally* inside the guard (not under an `If`
//! branch, a `Select` branch or the right side of `&&`/`||`; inside counted loops with
//! block-uniform bounds and no `break`/`continue` is fine) is a candidate reference when each of
//! its subscripts is one of
//! * a mapped dim variable (step 1, coefficient 1) plus a constant: the thread's own position,
//!   possibly plus the variable of a short enclosing loop with constant bounds over neighbour
//!   offsets (`z + dz` for `dz` in `-1..=1`), which widens the dim's halo to the loop's range;
//! * the variable of an enclosing counted loop (coefficient 1) plus a constant;
//! * a block-uniform affine form (params and constants) plus a constant.
//!
//! A linearised subscript (`u[(i*n + j)*n + k]`, `A[i*m + k]`) is split into one *tile dim* per
//! variable, ordered by stride (see [`TileSubscript`]); a param term equal to a stride shifts
//! that tile dim (`u[c + n]` is `j + 1`), other param terms form a block-uniform tile dim.
//!
//! References to the same array whose subscripts differ only in the constants form one
//! [`ReferenceGroup`]; its halo per tile dim is the range of those constants. A group's per-block
//! footprint is a box: per mapped dim the block extent plus the halo, per loop dim the loop's
//! trip plus the halo, per uniform dim the halo plus one.
//!
//! An array the kernel writes forms a group only when each element is owned by one thread, so
//! that a tile can hold it between the thread's accesses and be copied back at the end: every
//! load and store of it is a candidate reference (no atomics, nothing conditional), all of them
//! in one group with no halo along the mapped dims (a halo along a loop, `B[i][j-1]`, stays
//! within the thread's own elements), each mapped dim appears in its subscripts, and no array
//! dim is linearised from two variables, so the threads' elements are disjoint. Its plain
//! stores are references too (the [`ReferenceSite::Store`] form). Otherwise its loads and
//! stores stay global and a line in `rejections` says why.
//!
//! The sector counts are a deliberately simple model of what a warp asks of the memory system:
//! a subscript on `threadIdx.x` in the innermost array dim is coalesced (`elem` bytes per thread,
//! so `elem` 32-byte sectors per warp), `threadIdx.x` in an outer dim is a column access (32
//! sectors), no `threadIdx.x` at all is a broadcast (1 sector); irregular indices count 32.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

use crate::analysis::affine::{Affine, affine_of, count_assigns};
use crate::ir::*;

/// Trip count assumed for a counted loop whose bounds are not constants (for estimates only).
pub const UNKNOWN_TRIP_ESTIMATE: i64 = 128;

/// Most trips a loop over neighbour offsets (`z + dz`) may have to widen a thread dim's halo.
pub const MAX_SHIFT_TRIP: i64 = 16;

/// Largest constant offset (in elements, either way) a subscript may have and still be a
/// reference: a stencil's neighbours are near; one further away (`a[i + 0x7fffffffffffffff]`)
/// stays in global memory, and halos, extents and footprints stay far from overflowing.
pub const MAX_OFFSET: i64 = 1 << 20;

/// Largest trip count the estimates take for a loop (a longer one is estimated as this long).
pub const MAX_TRIP_ESTIMATE: i64 = 1 << 20;

/// One subscript of a candidate reference: a base plus a constant `offset`.
#[derive(Clone, Debug, PartialEq)]
pub enum SubscriptForm {
    /// `var + offset` where `var` is mapped by `GridKernel::axes[binding]`, plus the variable of
    /// [`AccessFootprint::loops`]`[lp]` for `shift: Some(lp)`: `z + dz` in a loop over
    /// neighbour offsets, whose bounds are constants (at most [`MAX_SHIFT_TRIP`] iterations).
    Thread { binding: usize, offset: i64, shift: Option<usize> },
    /// `var + offset` where `var` is the variable of [`AccessFootprint::loops`]`[lp]`.
    Loop { lp: usize, offset: i64 },
    /// `base + offset`, `base` made of params only (its constant is 0).
    Uniform { base: Affine, offset: i64 },
}

impl SubscriptForm {
    /// The constant part of the subscript past its base.
    pub fn offset(&self) -> i64 {
        match self {
            SubscriptForm::Thread { offset, .. } | SubscriptForm::Loop { offset, .. } | SubscriptForm::Uniform { offset, .. } => *offset,
        }
    }
    /// The least and greatest value of the subscript past its base: the offset, widened by the
    /// shift loop's range for `z + dz`.
    pub fn offset_range(&self, loops: &[CountedLoop]) -> (i64, i64) {
        let o = self.offset();
        match self {
            SubscriptForm::Thread { shift: Some(lp), .. } => {
                let l = &loops[*lp];
                (o + l.start.constant, o + l.end.constant - 1)
            }
            _ => (o, o),
        }
    }
    fn base(&self) -> GroupDimKind {
        match self {
            SubscriptForm::Thread { binding, .. } => GroupDimKind::Thread { binding: *binding },
            SubscriptForm::Loop { lp, .. } => GroupDimKind::Loop { lp: *lp },
            SubscriptForm::Uniform { base, .. } => GroupDimKind::Uniform { base: base.clone() },
        }
    }
}

/// A counted loop of the guarded body whose bounds are block-uniform (step 1, tested first, no
/// `break`/`continue` inside, variable assigned only by the loop).
#[derive(Clone, Debug)]
pub struct CountedLoop {
    pub var: Handle<Local>,
    /// Bounds as params-only affine forms (`end` exclusive).
    pub start: Affine,
    pub end: Affine,
    /// `end - start` when it is a constant.
    pub trip: Option<i64>,
    /// Position in the guard's then-block when the loop is one of its top-level statements.
    pub top_level_position: Option<usize>,
    /// The loops it is nested in, outermost first.
    pub enclosing: Vec<usize>,
}

impl CountedLoop {
    pub fn trip_estimate(&self) -> i64 {
        self.trip.unwrap_or(UNKNOWN_TRIP_ESTIMATE).clamp(0, MAX_TRIP_ESTIMATE)
    }
}

/// One tile dim of a reference: its form, the array dim it belongs to, and its stride in that
/// dim. A plain subscript is one tile dim of stride 1; a linearised one (`u[(i*n + j)*n + k]`)
/// is split into one tile dim per variable, its stride the variable's coefficient (`n*n`, `n`,
/// `1`), param terms equal to a stride becoming that dim's offset (`u[c + n]` is `j + 1`).
#[derive(Clone, Debug)]
pub struct TileSubscript {
    pub form: SubscriptForm,
    pub array_dim: usize,
    /// A positive constant or one params-only monomial with coefficient 1.
    pub stride: Affine,
}

/// Where a reference is in the kernel body, for the rewrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReferenceSite {
    /// A load expression.
    Load(Handle<Expr>),
    /// A plain store statement, known by its index expressions: statements are cloned when a
    /// staged variant is built, their expression handles are not.
    Store { indices: Vec<Handle<Expr>> },
}

/// A candidate reference: a load or store executed unconditionally with a stageable subscript
/// form.
#[derive(Clone, Debug)]
pub struct ArrayReference {
    pub site: ReferenceSite,
    pub param: u32,
    /// Tile dims, outermost first (array dims in order, each by decreasing stride).
    pub subscripts: Vec<TileSubscript>,
    /// Enclosing counted loops, outermost first.
    pub loops: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GroupDimKind {
    Thread { binding: usize },
    Loop { lp: usize },
    Uniform { base: Affine },
}

/// One array dim of a group: what it follows and the constant offsets' range.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupDim {
    pub kind: GroupDimKind,
    pub array_dim: usize,
    pub stride: Affine,
    pub lo: i64,
    pub hi: i64,
}

/// References to one array whose subscripts differ only by constants.
#[derive(Clone, Debug)]
pub struct ReferenceGroup {
    pub param: u32,
    pub elem: ScalarType,
    pub dims: Vec<GroupDim>,
    /// Indices into [`AccessFootprint::references`].
    pub refs: Vec<usize>,
    /// Elements of the per-block box (loop dims over their whole trip, estimated if unknown).
    pub footprint_elems: u64,
    /// Loads and stores the block's threads make through the group (loops counted with their
    /// trips).
    pub accesses: u64,
    /// Global sectors per block the group's accesses cost when they go to global memory.
    pub plain_sectors: f64,
    /// Whether the kernel writes the array (see the module doc: each element owned by one
    /// thread).
    pub written: bool,
    /// Whether some reference of the group is a load.
    pub loaded: bool,
}

impl ReferenceGroup {
    /// Accesses per footprint element.
    pub fn reuse(&self) -> f64 {
        self.accesses as f64 / self.footprint_elems.max(1) as f64
    }
    /// Whether a warp's load of this group is a column access (`threadIdx.x` in an outer dim).
    pub fn uncoalesced(&self, axes: &[AxisBinding]) -> bool {
        let last = self.dims.len() - 1;
        self.dims.iter().enumerate().any(|(d, g)| {
            (d != last || g.stride.as_constant() != Some(1))
                && matches!(g.kind, GroupDimKind::Thread { binding } if axes[binding].axis == Axis::X)
        })
    }
}

/// The analysis of one mapped grid kernel.
#[derive(Clone, Debug, Default)]
pub struct AccessFootprint {
    /// Position of the guard `If` in the body's top-level block.
    pub guard_position: usize,
    /// How many leading statements of the guard's then-block are the dim assignments.
    pub dim_assignments: usize,
    pub loops: Vec<CountedLoop>,
    pub references: Vec<ArrayReference>,
    pub groups: Vec<ReferenceGroup>,
    /// Array params the kernel stores to or updates atomically.
    pub written: BTreeSet<u32>,
    /// Written params with some access that cannot be a reference: never grouped.
    pub unstageable_written: BTreeSet<u32>,
    /// Whether the guarded body has a `return`: a thread may then skip its later stores.
    pub guard_may_return: bool,
    /// Load expressions that are evaluated conditionally or are not stageable (kept global).
    pub other_loads: Vec<Handle<Expr>>,
    /// Why some reads cannot be staged, one line each.
    pub rejections: Vec<String>,
    /// Sectors per block of every global access of the guarded body (loads and stores).
    pub plain_sectors: f64,
    pub threads_per_block: u32,
}

/// Analyses `grid` (made from a kernel with `space_dims` parallel dims). `None` when the grid
/// kernel does not have the mapping pass's guarded shape (one-thread kernels, for example).
pub fn analyse(grid: &GridKernel, space_dims: usize) -> Option<AccessFootprint> {
    if grid.axes.is_empty() || grid.launch.block == [1, 1, 1] {
        return None;
    }
    let guard_position = grid.body.block.iter().position(|s| matches!(s, Stmt::If { .. }))?;
    let Stmt::If { then, otherwise, .. } = &grid.body.block[guard_position] else { return None };
    if !otherwise.is_empty() || then.len() < space_dims {
        return None;
    }
    let mut a = Analyser {
        grid,
        fp: AccessFootprint {
            guard_position,
            dim_assignments: space_dims,
            threads_per_block: grid.launch.block.iter().product(),
            written: grid.written_array_params(),
            ..Default::default()
        },
        conditional_exprs: HashSet::new(),
    };
    a.fp.guard_may_return = has_return(then);
    a.block(then, Context::Unconditional(Vec::new()), true);
    a.group();
    Some(a.fp)
}

/// Adds `c` to the form's offset; false when the sum leaves [`MAX_OFFSET`]'s range.
const TOO_FAR: &str = "an index's constant offset is too far from its base to stage";

#[must_use]
fn add_offset(form: &mut SubscriptForm, c: i64) -> bool {
    match form {
        SubscriptForm::Thread { offset, .. } | SubscriptForm::Loop { offset, .. } | SubscriptForm::Uniform { offset, .. } => {
            match offset.checked_add(c).filter(|o| o.unsigned_abs() <= MAX_OFFSET as u64) {
                Some(o) => {
                    *offset = o;
                    true
                }
                None => false,
            }
        }
    }
}

/// Orders strides: any param monomial above any constant, more params above fewer.
fn stride_order(stride: &Affine) -> (usize, i64) {
    match stride.as_constant() {
        Some(c) => (0, c),
        None => (stride.terms[0].1.params.len(), 0),
    }
}

#[derive(Clone)]
enum Context {
    /// Executed by every thread of the guard, inside these counted loops (outermost first).
    Unconditional(Vec<usize>),
    Conditional,
}

struct Analyser<'a> {
    grid: &'a GridKernel,
    fp: AccessFootprint,
    /// Load expressions seen in a conditional context: a shared handle must not be rewritten.
    conditional_exprs: HashSet<Handle<Expr>>,
}

/// Whether some statement of `block`, nested ones included, satisfies `test`.
fn contains_stmt(block: &[Stmt], test: impl Fn(&Stmt) -> bool) -> bool {
    let mut found = false;
    for_each_stmt(block, &mut |s| found |= test(s));
    found
}

fn has_return(block: &[Stmt]) -> bool {
    contains_stmt(block, |s| matches!(s, Stmt::Return(_)))
}

fn has_loop_exit(block: &[Stmt]) -> bool {
    contains_stmt(block, |s| matches!(s, Stmt::Break | Stmt::Continue | Stmt::Return(_)))
}

impl Analyser<'_> {
    fn body(&self) -> &Body {
        &self.grid.body
    }

    fn block(&mut self, block: &[Stmt], ctx: Context, top_level: bool) {
        for (pos, s) in block.iter().enumerate() {
            match s {
                Stmt::Assign { value, .. } => self.expr(*value, &ctx),
                Stmt::Store { array, indices, value, .. } | Stmt::Atomic { array, indices, value, .. } => {
                    for &i in indices {
                        self.expr(i, &ctx);
                    }
                    self.expr(*value, &ctx);
                    if let ArrayRef::Param(p) = *array {
                        let warps = self.fp.threads_per_block.div_ceil(32) as f64;
                        self.fp.plain_sectors += warps * self.multiplicity(&ctx) * self.store_sectors(*array, indices);
                        let forms = match (&ctx, s) {
                            (Context::Unconditional(loops), Stmt::Store { .. }) => {
                                self.tile_subscripts(indices, loops).map(|subscripts| (subscripts, loops.clone()))
                            }
                            (_, Stmt::Atomic { .. }) => Err("it is updated atomically".to_string()),
                            _ => Err("it is stored to conditionally (under if)".to_string()),
                        };
                        match forms {
                            Ok((subscripts, loops)) => {
                                let site = ReferenceSite::Store { indices: indices.clone() };
                                self.fp.references.push(ArrayReference { site, param: p, subscripts, loops });
                            }
                            Err(why) => self.reject_written(p, &why),
                        }
                    }
                }
                Stmt::If { cond, then, otherwise } => {
                    self.expr(*cond, &ctx);
                    self.block(then, Context::Conditional, false);
                    self.block(otherwise, Context::Conditional, false);
                }
                Stmt::Loop { cond, body, continuing, range, test_first } => {
                    let counted = match (&ctx, range) {
                        (Context::Unconditional(loops), Some(r)) if *test_first => self.counted_loop(r, body, loops, top_level.then_some(pos)),
                        _ => None,
                    };
                    let inner = match (counted, &ctx) {
                        (Some(lp), Context::Unconditional(loops)) => {
                            let mut l = loops.clone();
                            l.push(lp);
                            Context::Unconditional(l)
                        }
                        _ => Context::Conditional,
                    };
                    if let Some(c) = cond {
                        self.expr(*c, &inner);
                    }
                    self.block(body, inner, false);
                    self.block(continuing, Context::Conditional, false);
                }
                Stmt::Eval(e) => self.expr(*e, &ctx),
                Stmt::Return(Some(e)) => self.expr(*e, &ctx),
                Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Barrier => {}
            }
        }
    }

    fn counted_loop(&mut self, r: &LoopRange, body: &[Stmt], enclosing: &[usize], top_level_position: Option<usize>) -> Option<usize> {
        if r.step != 1 || has_loop_exit(body) || count_assigns(body, r.var) != 0 {
            return None;
        }
        let start = affine_of(self.body(), r.start)?;
        let end = affine_of(self.body(), r.end)?;
        if !start.vars().is_empty() || !end.vars().is_empty() {
            return None;
        }
        // No trip when `end - start` overflows: the loop's trip is then estimated, never wrapped.
        let trip = end.sub(&start).and_then(|t| t.as_constant());
        self.fp.loops.push(CountedLoop { var: r.var, start, end, trip, top_level_position, enclosing: enclosing.to_vec() });
        Some(self.fp.loops.len() - 1)
    }

    /// Product of the trips of the enclosing counted loops (1 outside loops).
    fn multiplicity(&self, ctx: &Context) -> f64 {
        match ctx {
            Context::Unconditional(loops) => loops.iter().map(|&l| self.fp.loops[l].trip_estimate() as f64).product(),
            Context::Conditional => 1.0,
        }
    }

    fn expr(&mut self, e: Handle<Expr>, ctx: &Context) {
        let kind = self.body().exprs[e].kind.clone();
        match kind {
            ExprKind::Load { array, indices } => {
                for &i in &indices {
                    self.expr(i, ctx);
                }
                if let ArrayRef::Param(p) = array {
                    self.load(e, p, &indices, ctx);
                }
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => self.expr(arg, ctx),
            ExprKind::Binary { op: BinaryOp::LogAnd | BinaryOp::LogOr, lhs, rhs } => {
                self.expr(lhs, ctx);
                self.expr(rhs, &Context::Conditional);
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, ctx);
                self.expr(rhs, ctx);
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.expr(cond, ctx);
                self.expr(then, &Context::Conditional);
                self.expr(otherwise, &Context::Conditional);
            }
            ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => {
                for a in args {
                    self.expr(a, ctx);
                }
            }
            _ => {}
        }
    }

    fn param_name(&self, p: u32) -> &str {
        &self.grid.params[p as usize].name
    }

    fn param_elem(&self, p: u32) -> ScalarType {
        match &self.grid.params[p as usize].kind {
            ParamKind::Array { elem, .. } | ParamKind::RowTable { elem, .. } => *elem,
            ParamKind::Scalar(t) => *t,
        }
    }

    /// Sectors per warp of an access with these subscripts (see the module doc).
    fn warp_sectors(&self, p: u32, forms: Option<&[TileSubscript]>) -> f64 {
        let Some(forms) = forms else { return 32.0 };
        let last = forms.len() - 1;
        let on_x = |f: &TileSubscript| matches!(f.form, SubscriptForm::Thread { binding, .. } if self.grid.axes[binding].axis == Axis::X);
        if forms[..last].iter().any(on_x) || (on_x(&forms[last]) && forms[last].stride.as_constant() != Some(1)) {
            32.0
        } else if on_x(&forms[last]) {
            self.param_elem(p).size_bytes() as f64
        } else {
            1.0
        }
    }

    fn store_sectors(&self, array: ArrayRef, indices: &[Handle<Expr>]) -> f64 {
        let ArrayRef::Param(p) = array else { return 0.0 };
        let forms = self.tile_subscripts(indices, &[]).ok();
        self.warp_sectors(p, forms.as_deref())
    }

    fn load(&mut self, e: Handle<Expr>, p: u32, indices: &[Handle<Expr>], ctx: &Context) {
        let forms: Result<Vec<TileSubscript>, String> = match ctx {
            Context::Unconditional(loops) => self.tile_subscripts(indices, loops),
            Context::Conditional => Err("it is read conditionally (under if, ?: or && / ||)".to_string()),
        };
        let warps = self.fp.threads_per_block.div_ceil(32) as f64;
        let sectors = warps * self.multiplicity(ctx) * self.warp_sectors(p, forms.as_ref().ok().map(|f| f.as_slice()));
        self.fp.plain_sectors += sectors;
        let forms = forms.and_then(|f| {
            let mut seen = HashSet::new();
            for s in &f {
                let key = match s.form.base() {
                    GroupDimKind::Thread { binding } => Some((0, binding)),
                    GroupDimKind::Loop { lp } => Some((1, lp)),
                    GroupDimKind::Uniform { .. } => None,
                };
                if key.is_some_and(|k| !seen.insert(k)) {
                    return Err("one variable indexes two of its dims (a diagonal)".to_string());
                }
            }
            Ok(f)
        });
        match forms {
            Ok(subscripts) => {
                let loops = match ctx {
                    Context::Unconditional(l) => l.clone(),
                    Context::Conditional => Vec::new(),
                };
                self.fp.references.push(ArrayReference { site: ReferenceSite::Load(e), param: p, subscripts, loops });
            }
            Err(why) => {
                self.conditional_exprs.insert(e);
                self.fp.other_loads.push(e);
                if self.fp.written.contains(&p) {
                    self.reject_written(p, &why);
                } else {
                    self.reject(format!("{}: not staged: {}", self.param_name(p), why));
                }
            }
        }
    }

    fn reject(&mut self, line: String) {
        if !self.fp.rejections.contains(&line) {
            self.fp.rejections.push(line);
        }
    }

    /// A written param one of whose accesses cannot be a reference: it stays in global memory.
    fn reject_written(&mut self, p: u32, why: &str) {
        if self.fp.unstageable_written.insert(p) {
            self.reject(format!("{}: not staged: the kernel writes it and {why}", self.param_name(p)));
        }
    }

    fn tile_subscripts(&self, indices: &[Handle<Expr>], loops: &[usize]) -> Result<Vec<TileSubscript>, String> {
        let mut out = Vec::new();
        for (d, &index) in indices.iter().enumerate() {
            out.extend(self.subscript(d, index, loops)?);
        }
        Ok(out)
    }

    /// The tile dims of array dim `array_dim`'s subscript `index` (see [`TileSubscript`]).
    fn subscript(&self, array_dim: usize, index: Handle<Expr>, loops: &[usize]) -> Result<Vec<TileSubscript>, String> {
        let form = affine_of(self.body(), index).ok_or_else(|| "an index is not affine (irregular)".to_string())?;
        let mut parts: Vec<(Affine, SubscriptForm)> = Vec::new();
        for v in form.vars() {
            let coefficient = form.coefficient_of(v);
            let stride_ok = match coefficient.as_constant() {
                Some(c) => c >= 1,
                None => coefficient.constant == 0 && coefficient.terms.len() == 1 && coefficient.terms[0].0 == 1,
            };
            if !stride_ok {
                return Err("an index scales a variable by a negative or composite factor".to_string());
            }
            let kind = if let Some(binding) =
                self.grid.axes.iter().position(|b| b.var == v && b.step == 1).filter(|_| count_assigns(&self.grid.body.block, v) == 1)
            {
                SubscriptForm::Thread { binding, offset: 0, shift: None }
            } else if let Some(&lp) = loops.iter().find(|&&l| self.fp.loops[l].var == v) {
                SubscriptForm::Loop { lp, offset: 0 }
            } else {
                return Err("an index follows a variable that is neither a mapped dim nor a counted loop with uniform bounds".to_string());
            };
            // `z + dz`: a mapped variable and a short constant-bounds loop's on one stride are
            // one thread dim whose offset sweeps the loop's range.
            if let Some(i) = parts.iter().position(|(s, _)| *s == coefficient) {
                let merged = match (&parts[i].1, &kind) {
                    (SubscriptForm::Thread { binding, offset, shift: None }, SubscriptForm::Loop { lp, .. })
                    | (SubscriptForm::Loop { lp, offset }, SubscriptForm::Thread { binding, shift: None, .. })
                        if self.sweeps_offsets(*lp) =>
                    {
                        Some(SubscriptForm::Thread { binding: *binding, offset: *offset, shift: Some(*lp) })
                    }
                    _ => None,
                };
                match merged {
                    Some(form) => parts[i].1 = form,
                    None => return Err("an index has two variables with the same stride".to_string()),
                }
                continue;
            }
            parts.push((coefficient, kind));
        }
        // Param terms equal to a stride shift that dim; the constant shifts the stride-1 dim.
        let invariant = form.invariant_part();
        let mut uniform = Affine::constant(0);
        for (c, m) in &invariant.terms {
            let term = Affine::monomial(m.clone());
            match parts.iter_mut().find(|(s, _)| *s == term) {
                Some((_, f)) => {
                    if !add_offset(f, *c) {
                        return Err(TOO_FAR.to_string());
                    }
                }
                // Distinct monomials of one form: the sum cannot overflow, but it is checked all the same.
                None => uniform = uniform.add(&term.scale(*c).ok_or(TOO_FAR)?).ok_or(TOO_FAR)?,
            }
        }
        match parts.iter_mut().find(|(s, _)| s.as_constant() == Some(1)) {
            Some((_, f)) => {
                if !add_offset(f, invariant.constant) {
                    return Err(TOO_FAR.to_string());
                }
            }
            None if invariant.constant.unsigned_abs() > MAX_OFFSET as u64 => return Err(TOO_FAR.to_string()),
            None => uniform.constant = invariant.constant,
        }
        let mut out = Vec::new();
        if !uniform.terms.is_empty() || uniform.constant != 0 || parts.is_empty() {
            let offset = uniform.constant;
            uniform.constant = 0;
            out.push(TileSubscript { form: SubscriptForm::Uniform { base: uniform, offset }, array_dim, stride: Affine::constant(1) });
        }
        // Largest stride first, so the stride-1 dim is the tile's innermost.
        parts.sort_by_key(|p| std::cmp::Reverse(stride_order(&p.0)));
        out.extend(parts.into_iter().map(|(stride, form)| TileSubscript { form, array_dim, stride }));
        Ok(out)
    }

    /// Whether loop `lp` can shift a thread dim: constant bounds, 1 to [`MAX_SHIFT_TRIP`]
    /// iterations.
    fn sweeps_offsets(&self, lp: usize) -> bool {
        let l = &self.fp.loops[lp];
        let near = |a: &Affine| a.as_constant().is_some_and(|c| c.unsigned_abs() <= MAX_OFFSET as u64);
        near(&l.start) && near(&l.end) && l.trip.is_some_and(|t| (1..=MAX_SHIFT_TRIP).contains(&t))
    }

    fn group(&mut self) {
        let threads = self.fp.threads_per_block as u64;
        let warps = self.fp.threads_per_block.div_ceil(32) as f64;
        // A handle also used conditionally is not a candidate (rewriting it would change both).
        let conditional = self.conditional_exprs.clone();
        let shared_with_conditional = |r: &ArrayReference| matches!(r.site, ReferenceSite::Load(e) if conditional.contains(&e));
        let written_and_shared: Vec<u32> = self
            .fp
            .references
            .iter()
            .filter(|r| shared_with_conditional(r) && self.fp.written.contains(&r.param))
            .map(|r| r.param)
            .collect();
        for p in written_and_shared {
            self.reject_written(p, "one of its loads is also evaluated conditionally");
        }
        let refs: Vec<usize> = (0..self.fp.references.len())
            .filter(|&r| !shared_with_conditional(&self.fp.references[r]))
            .filter(|&r| !self.fp.unstageable_written.contains(&self.fp.references[r].param))
            .collect();
        let mut groups: Vec<ReferenceGroup> = Vec::new();
        for r in refs {
            let reference = &self.fp.references[r];
            let kinds: Vec<(GroupDimKind, usize, Affine)> =
                reference.subscripts.iter().map(|s| (s.form.base(), s.array_dim, s.stride.clone())).collect();
            let found = groups.iter().position(|g| {
                g.param == reference.param
                    && g.dims.len() == kinds.len()
                    && g.dims.iter().zip(&kinds).all(|(d, (k, a, s))| d.kind == *k && d.array_dim == *a && d.stride == *s)
            });
            let g = match found {
                Some(g) => g,
                None => {
                    groups.push(ReferenceGroup {
                        param: reference.param,
                        elem: self.param_elem(reference.param),
                        dims: kinds
                            .into_iter()
                            .zip(&reference.subscripts)
                            .map(|((kind, array_dim, stride), s)| {
                                let (lo, hi) = s.form.offset_range(&self.fp.loops);
                                GroupDim { kind, array_dim, stride, lo, hi }
                            })
                            .collect(),
                        refs: Vec::new(),
                        footprint_elems: 0,
                        accesses: 0,
                        plain_sectors: 0.0,
                        written: self.fp.written.contains(&reference.param),
                        loaded: false,
                    });
                    groups.len() - 1
                }
            };
            let group = &mut groups[g];
            for (d, s) in group.dims.iter_mut().zip(&reference.subscripts) {
                let (lo, hi) = s.form.offset_range(&self.fp.loops);
                d.lo = d.lo.min(lo);
                d.hi = d.hi.max(hi);
            }
            group.refs.push(r);
            group.loaded |= matches!(reference.site, ReferenceSite::Load(_));
            let mult = reference.loops.iter().fold(1u64, |m, &l| m.saturating_mul(self.fp.loops[l].trip_estimate() as u64));
            group.accesses = group.accesses.saturating_add(threads.saturating_mul(mult));
            group.plain_sectors += warps * mult as f64 * self.warp_sectors(reference.param, Some(&reference.subscripts));
        }
        for g in &mut groups {
            g.footprint_elems = g
                .dims
                .iter()
                .map(|d| {
                    let halo = (d.hi - d.lo) as u64;
                    match d.kind {
                        GroupDimKind::Thread { binding } => block_extent(self.grid, binding) as u64 + halo,
                        GroupDimKind::Loop { lp } => self.fp.loops[lp].trip_estimate() as u64 + halo,
                        GroupDimKind::Uniform { .. } => halo + 1,
                    }
                })
                .fold(1u64, u64::saturating_mul);
        }
        // A written array's group must own each element per thread (see the module doc).
        let mut kept = Vec::new();
        let mut long_double = BTreeSet::new();
        for g in groups {
            if g.elem == ScalarType::F80 {
                // Tiles hold values of their element type, and a `long double` value is a
                // `double` in a kernel: such an array stays in global memory.
                if g.written {
                    self.reject_written(g.param, "its elements are `long double`, converted at each access");
                } else if long_double.insert(g.param) {
                    self.reject(format!("{}: not staged: its elements are `long double`, converted at each access", self.param_name(g.param)));
                }
                continue;
            }
            if !g.written {
                kept.push(g);
                continue;
            }
            let all_mapped = (0..self.grid.axes.len()).all(|b| g.dims.iter().any(|d| d.kind == GroupDimKind::Thread { binding: b }));
            let mut array_dims: Vec<usize> = g.dims.iter().map(|d| d.array_dim).collect();
            array_dims.dedup();
            let why = if self.fp.references.iter().filter(|r| r.param == g.param).count() != g.refs.len() {
                Some("its accesses are at different elements")
            } else if g.dims.iter().any(|d| d.hi != d.lo && matches!(d.kind, GroupDimKind::Thread { .. })) {
                Some("threads read or write each other's elements (a halo along a mapped dim)")
            } else if !all_mapped {
                Some("threads of a block share its elements (each element must belong to one thread)")
            } else if array_dims.len() != g.dims.len() {
                Some("an index combines two variables in one dim (linearised)")
            } else {
                None
            };
            match why {
                Some(why) => self.reject_written(g.param, why),
                None => kept.push(g),
            }
        }
        self.fp.groups = kept;
    }
}

/// Threads of the block along the axis of `grid.axes[binding]`.
pub fn block_extent(grid: &GridKernel, binding: usize) -> u32 {
    grid.launch.block[grid.axes[binding].axis.index()]
}

impl AccessFootprint {
    /// `A[j+{-1..1}][i+{-1..1}]`: the group's subscripts as the user would read them.
    pub fn group_pattern(&self, grid: &GridKernel, g: &ReferenceGroup) -> String {
        let mut s = grid.params[g.param as usize].name.clone();
        let mut open: Option<usize> = None;
        for d in &g.dims {
            let base = match &d.kind {
                GroupDimKind::Thread { binding } => grid.body.locals[grid.axes[*binding].var].name.clone(),
                GroupDimKind::Loop { lp } => grid.body.locals[self.loops[*lp].var].name.clone(),
                GroupDimKind::Uniform { base } => affine_text(grid, base),
            };
            let offsets = if d.lo == d.hi {
                match d.lo {
                    0 => String::new(),
                    c if c > 0 => format!("+{c}"),
                    c => format!("{c}"),
                }
            } else {
                format!("+{{{}..{}}}", d.lo, d.hi)
            };
            let text = match (base.as_str(), offsets.as_str()) {
                ("0", "") => "0".to_string(),
                ("0", o) => o.trim_start_matches('+').to_string(),
                (b, o) => format!("{b}{o}"),
            };
            let text = match d.stride.as_constant() {
                Some(1) => text,
                _ if offsets.is_empty() => format!("{}*{}", text, affine_text(grid, &d.stride)),
                _ => format!("({})*{}", text, affine_text(grid, &d.stride)),
            };
            if open == Some(d.array_dim) {
                let _ = write!(s, " + {text}");
            } else {
                if open.is_some() {
                    s.push(']');
                }
                let _ = write!(s, "[{text}");
                open = Some(d.array_dim);
            }
        }
        if open.is_some() {
            s.push(']');
        }
        s
    }

    /// `1x1`: per dim the halo radius (or `lo..hi` when it is not symmetric).
    pub fn halo_text(g: &ReferenceGroup) -> String {
        g.dims
            .iter()
            .map(|d| if d.lo == -d.hi { format!("{}", d.hi) } else { format!("[{}..{}]", d.lo, d.hi) })
            .collect::<Vec<_>>()
            .join("x")
    }
}

/// A params-only affine form in C-like text (`n*m + 2`), `0` when empty.
pub fn affine_text(grid: &GridKernel, form: &Affine) -> String {
    let mut parts = Vec::new();
    for (c, m) in &form.terms {
        let mut factors: Vec<String> = m.params.iter().map(|p| grid.params[*p as usize].name.clone()).collect();
        if let Some(v) = m.var {
            factors.push(grid.body.locals[v].name.clone());
        }
        let text = factors.join("*");
        parts.push(match *c {
            1 => text,
            -1 => format!("-{text}"),
            c => format!("{c}*{text}"),
        });
    }
    if form.constant != 0 || parts.is_empty() {
        parts.push(form.constant.to_string());
    }
    parts.join(" + ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::opt::PassConfig;

    /// Maps `k` and analyses the grid kernel.
    pub(crate) fn analysed(k: Kernel) -> (GridKernel, AccessFootprint) {
        let mut m = Module::default();
        let dims = k.space.len();
        let h = m.kernels.append(k);
        let g = crate::opt::mapping::map_kernel(&m, h, &PassConfig::default());
        let fp = analyse(&g, dims).expect("mapped shape");
        (g, fp)
    }

    /// `b[i] = a[i-1] + a[i] + a[i+1]` over `i in 1..n-1`.
    pub(crate) fn stencil_1d() -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let one = b.int(1);
        let n = b.param(0);
        let two = b.int(2);
        let trip = b.bin(BinaryOp::Sub, n, two);
        let d = b.dim(i, one, trip);
        let l = b.var_plus(i, -1);
        let c = b.var_plus(i, 0);
        let r = b.var_plus(i, 1);
        let (la, ca, ra) = (b.load(1, vec![l]), b.load(1, vec![c]), b.load(1, vec![r]));
        let s = b.add(la, ca);
        let s = b.add(s, ra);
        let ie = b.local(i);
        let st = b.store(2, vec![ie], s);
        b.body.block.push(st);
        kernel("st1", vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)], vec![d], b.body)
    }

    #[test]
    fn three_point_stencil_is_one_group_with_halo_one() {
        let (g, fp) = analysed(stencil_1d());
        assert_eq!(fp.groups.len(), 2, "a's reads, b's store: {:?}", fp.groups);
        let written = &fp.groups[1];
        assert_eq!((written.param, written.written, written.loaded), (2, true, false));
        assert_eq!(fp.group_pattern(&g, written), "b[i]");
        let grp = &fp.groups[0];
        assert!(!grp.written && grp.loaded);
        assert_eq!(grp.param, 1);
        assert_eq!((grp.dims[0].lo, grp.dims[0].hi), (-1, 1));
        assert_eq!(grp.refs.len(), 3);
        assert_eq!(grp.footprint_elems, 258);
        assert_eq!(grp.accesses, 3 * 256);
        assert!((grp.reuse() - 768.0 / 258.0).abs() < 1e-9);
        assert_eq!(fp.group_pattern(&g, grp), "a[i+{-1..1}]");
        assert!(fp.written.contains(&2));
    }

    /// `out[j][i] = in[j][i-1] + in[j][i+1] + in[j-1][i] + in[j+1][i] + in[j][i]` (n x m).
    pub(crate) fn stencil_2d() -> Kernel {
        let mut b = B::new();
        let j = b.loop_var("j");
        let i = b.loop_var("i");
        let one = b.int(1);
        let n = b.param(0);
        let m = b.param(1);
        let two = b.int(2);
        let tn = b.bin(BinaryOp::Sub, n, two);
        let tm = b.bin(BinaryOp::Sub, m, two);
        let dj = b.dim(j, one, tn);
        let di = b.dim(i, one, tm);
        let mut sum = None;
        for (dj_, di_) in [(0, -1), (0, 1), (-1, 0), (1, 0), (0, 0)] {
            let je = b.var_plus(j, dj_);
            let ie = b.var_plus(i, di_);
            let ld = b.load(2, vec![je, ie]);
            sum = Some(match sum {
                None => ld,
                Some(s) => b.add(s, ld),
            });
        }
        let je = b.local(j);
        let ie = b.local(i);
        let st = b.store(3, vec![je, ie], sum.unwrap());
        b.body.block.push(st);
        let mdim = b.param(1);
        kernel(
            "st2",
            vec![scalar_param("n", 0), scalar_param("m", 1), array_param("in", vec![None, Some(mdim)], 2), array_param("out", vec![None, Some(mdim)], 3)],
            vec![dj, di],
            b.body,
        )
    }

    #[test]
    fn five_point_stencil_has_a_one_by_one_halo_over_a_32_by_8_block() {
        let (g, fp) = analysed(stencil_2d());
        assert_eq!(fp.groups.len(), 2, "in's reads, out's store");
        let grp = &fp.groups[0];
        assert_eq!(grp.refs.len(), 5);
        assert_eq!(AccessFootprint::halo_text(grp), "1x1");
        assert_eq!(grp.footprint_elems, 10 * 34);
        assert_eq!(grp.accesses, 5 * 256);
        assert_eq!(fp.group_pattern(&g, grp), "in[j+{-1..1}][i+{-1..1}]");
        assert!(!grp.uncoalesced(&g.axes));
    }

    /// `c[id] = sum over k < n of a[k] * b[id + k*n]`.
    pub(crate) fn matvec() -> Kernel {
        let mut b = B::new();
        let id = b.loop_var("id");
        let k = b.loop_var("k");
        let s = b.new_local("s", ScalarType::F64, LocalKind::Var);
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(id, zero, n);
        let z = b.float(0.0, ScalarType::F64);
        b.body.block.push(Stmt::Assign { local: s, value: z });
        let ke = b.local(k);
        let a = b.load(1, vec![ke]);
        let ide = b.local(id);
        let ke2 = b.local(k);
        let n2 = b.param(0);
        let kn = b.mul(ke2, n2);
        let bi = b.add(ide, kn);
        let bl = b.load(2, vec![bi]);
        let prod = b.mul(a, bl);
        let se = b.local(s);
        let sum = b.add(se, prod);
        let body = vec![Stmt::Assign { local: s, value: sum }];
        let zero2 = b.int(0);
        let n3 = b.param(0);
        let lp = b.counted_loop(k, zero2, n3, body);
        b.body.block.extend(lp);
        let ide = b.local(id);
        let se = b.local(s);
        let st = b.store(3, vec![ide], se);
        b.body.block.push(st);
        kernel(
            "mv",
            vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2), array_param("c", vec![None], 3)],
            vec![d],
            b.body,
        )
    }

    #[test]
    fn a_of_k_in_a_counted_loop_is_read_by_every_thread() {
        let (g, fp) = analysed(matvec());
        assert_eq!(fp.loops.len(), 1);
        assert_eq!(fp.loops[0].top_level_position, Some(3), "dim assignment, s = 0, k = 0, loop");
        assert_eq!(fp.groups.len(), 3, "a, b and the written c: {:?}", fp.groups);
        assert!(fp.groups[2].written);
        let a = &fp.groups[0];
        assert_eq!(fp.group_pattern(&g, a), "a[k]");
        assert_eq!(a.footprint_elems, UNKNOWN_TRIP_ESTIMATE as u64);
        assert_eq!(a.reuse(), 256.0);
        assert_eq!(a.plain_sectors, 8.0 * 128.0, "a broadcast: one sector per warp per iteration");
        // b[id + k*n] is linearised: k with stride n, id with stride 1.
        let b = &fp.groups[1];
        assert_eq!(fp.group_pattern(&g, b), "b[k*n + id]");
        assert_eq!(b.reuse(), 1.0);
        assert!(!b.uncoalesced(&g.axes));
    }

    /// `out[c] = in[c-1] + in[c+1] + in[c] + in[c-n] + in[c+n]` with `c = j*n + i`, n x n.
    pub(crate) fn linearised_2d() -> Kernel {
        let mut b = B::new();
        let j = b.loop_var("j");
        let i = b.loop_var("i");
        let c = b.new_local("c", ScalarType::I32, LocalKind::Var);
        let one = b.int(1);
        let n = b.param(0);
        let two = b.int(2);
        let trip = b.bin(BinaryOp::Sub, n, two);
        let dj = b.dim(j, one, trip);
        let di = b.dim(i, one, trip);
        let je = b.local(j);
        let n1 = b.param(0);
        let row = b.mul(je, n1);
        let ie = b.local(i);
        let cv = b.add(row, ie);
        b.body.block.push(Stmt::Assign { local: c, value: cv });
        let mut sum = None;
        for off in [-1i64, 1, 0] {
            let ld = {
                let idx = b.var_plus(c, off);
                b.load(1, vec![idx])
            };
            sum = Some(match sum {
                None => ld,
                Some(s) => b.add(s, ld),
            });
        }
        for sign in [BinaryOp::Sub, BinaryOp::Add] {
            let ce = b.local(c);
            let nn = b.param(0);
            let idx = b.bin(sign, ce, nn);
            let ld = b.load(1, vec![idx]);
            sum = Some(b.add(sum.unwrap(), ld));
        }
        let ce = b.local(c);
        let st = b.store(2, vec![ce], sum.unwrap());
        b.body.block.push(st);
        kernel("lin", vec![scalar_param("n", 0), array_param("in", vec![None], 1), array_param("out", vec![None], 2)], vec![dj, di], b.body)
    }

    #[test]
    fn linearised_stencil_splits_into_tile_dims_by_stride() {
        let (g, fp) = analysed(linearised_2d());
        assert_eq!(fp.groups.len(), 1, "{:?} {:?}", fp.groups, fp.rejections);
        let grp = &fp.groups[0];
        assert_eq!(fp.group_pattern(&g, grp), "in[(j+{-1..1})*n + i+{-1..1}]");
        assert_eq!(grp.footprint_elems, 10 * 34);
        assert_eq!(grp.refs.len(), 5);
    }

    /// `out[j][i] = in[i][j]` over an n x n space: i (on x) indexes the outer dim of `in`.
    pub(crate) fn transpose() -> Kernel {
        let mut b = B::new();
        let j = b.loop_var("j");
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let dj = b.dim(j, zero, n);
        let di = b.dim(i, zero, n);
        let (ie, je) = (b.local(i), b.local(j));
        let ld = b.load(1, vec![ie, je]);
        let (je2, ie2) = (b.local(j), b.local(i));
        let st = b.store(2, vec![je2, ie2], ld);
        b.body.block.push(st);
        let nd = b.param(0);
        kernel("tr", vec![scalar_param("n", 0), array_param("in", vec![None, Some(nd)], 1), array_param("out", vec![None, Some(nd)], 2)], vec![dj, di], b.body)
    }

    #[test]
    fn column_access_is_uncoalesced_and_the_written_array_owned_per_thread_is_a_group() {
        let (g, fp) = analysed(transpose());
        assert_eq!(fp.groups.len(), 2);
        let out = &fp.groups[1];
        assert_eq!(fp.group_pattern(&g, out), "out[j][i]");
        assert!(out.written && !out.uncoalesced(&g.axes), "out[j][i] with i on x is a row access");
        let grp = &fp.groups[0];
        assert_eq!(fp.group_pattern(&g, grp), "in[i][j]");
        assert!(grp.uncoalesced(&g.axes));
        assert_eq!(grp.plain_sectors, 8.0 * 32.0, "8 warps, 32 sectors each");
        assert_eq!(grp.reuse(), 1.0);
    }

    #[test]
    fn conditional_reads_are_not_candidates() {
        // b[i] = i > 0 ? a[i-1] : a[i]
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(i, zero, n);
        let ie = b.local(i);
        let z = b.int(0);
        let c = b.bin(BinaryOp::Gt, ie, z);
        let l = b.var_plus(i, -1);
        let la = b.load(1, vec![l]);
        let c0 = b.var_plus(i, 0);
        let ca = b.load(1, vec![c0]);
        let sel = b.select(c, la, ca);
        let ie = b.local(i);
        let st = b.store(2, vec![ie], sel);
        b.body.block.push(st);
        let k = kernel("sel", vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)], vec![d], b.body);
        let (_, fp) = analysed(k);
        assert!(fp.groups.iter().all(|g| g.param == 2 && g.written), "only b's store: {:?}", fp.groups);
        assert_eq!(fp.other_loads.len(), 2);
        assert!(fp.rejections[0].contains("conditionally"), "{:?}", fp.rejections);
    }
}
