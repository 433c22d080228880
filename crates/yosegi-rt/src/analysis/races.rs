//! Races a parallel loop's body shows on its face: a store to an array element that every
//! iteration of one parallel dim writes (a subscript that depends on none of that dim's
//! indices, such as `a[0] = i`, `s[0] += x`, or `x[i] += a[i][j]` inside a parallel loop over
//! `j`). Sequentially the element ends with the last iteration's value (or the sum of all of
//! them); in parallel the iterations overwrite each other in any order and lose updates.
//! Lowering runs such a dim (and those inside it) in order, with a warning that names the
//! `reduction`/`atomic` fix. Atomic statements are indivisible and are not stores here. A store
//! whose value is the same in every iteration (a constant or an expression of host values:
//! `found[0] = 1`) gives the sequential answer whatever the order, and is left alone.

use crate::analysis::affine::affine_of;
use crate::diag::Span;
use crate::ir::{ArrayRef, Body, Expr, ExprKind, Handle, Kernel, Local, Stmt, for_each_stmt};

/// A store whose iterations race along one parallel dim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RacingStore {
    /// The outermost dim of `kernel.space` whose index the store's subscripts do not mention.
    pub dim: usize,
    /// The array param stored to.
    pub param: u32,
    pub span: Span,
}

/// Of the non-atomic stores with affine subscripts that store a value differing between
/// iterations, the one whose racing dim is outermost (the first in the body among equals).
pub fn outermost_racing_store(kernel: &Kernel) -> Option<RacingStore> {
    if kernel.space.is_empty() {
        return None;
    }
    let parallel: Vec<Handle<Local>> = kernel.space.iter().map(|d| d.var).collect();
    let body = &kernel.body;
    let mut found: Option<RacingStore> = None;
    for_each_stmt(&body.block, &mut |s| {
        let Stmt::Store { array: ArrayRef::Param(p), indices, value, span } = s else { return };
        if same_in_every_iteration(body, *value) {
            return;
        }
        let mut mentioned = Vec::new();
        for &i in indices {
            let Some(a) = affine_of(body, i) else { return };
            mentioned.extend(a.vars());
        }
        let Some(dim) = parallel.iter().position(|v| !mentioned.contains(v)) else { return };
        if found.is_none_or(|f| dim < f.dim) {
            found = Some(RacingStore { dim, param: *p, span: *span });
        }
    });
    found
}

/// The spans of the stores whose value is the same in every iteration, so that the
/// iterations that repeat one of them leave the element as any one of them would.
pub fn stores_of_one_value(kernel: &Kernel) -> Vec<Span> {
    let mut spans = Vec::new();
    for_each_stmt(&kernel.body.block, &mut |s| {
        if let Stmt::Store { value, span, .. } = s
            && same_in_every_iteration(&kernel.body, *value)
        {
            spans.push(*span);
        }
    });
    spans
}

/// Constants and host values (params) only.
fn same_in_every_iteration(body: &Body, h: Handle<Expr>) -> bool {
    match &body.exprs[h].kind {
        ExprKind::ConstInt(_) | ExprKind::ConstFloat(_) | ExprKind::Param(_) => true,
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => same_in_every_iteration(body, *arg),
        ExprKind::Binary { lhs, rhs, .. } => same_in_every_iteration(body, *lhs) && same_in_every_iteration(body, *rhs),
        ExprKind::Select { cond, then, otherwise } => {
            same_in_every_iteration(body, *cond) && same_in_every_iteration(body, *then) && same_in_every_iteration(body, *otherwise)
        }
        ExprKind::Math { args, .. } => args.iter().all(|a| same_in_every_iteration(body, *a)),
        _ => false,
    }
}
