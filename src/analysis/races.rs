//! Races a parallel loop's body shows on its face: a store to an array element that every
//! iteration of the parallel dims writes (a subscript that depends on none of their indices,
//! such as `a[0] = i` or `s[0] += x`). Sequentially the element ends with the last iteration's
//! value (or the sum of all of them); in parallel the iterations overwrite each other in any
//! order and lose updates. Lowering refuses such a loop with the `reduction`/`atomic` fix;
//! atomic statements are indivisible and are not stores here. A store whose value is the same
//! in every iteration (a constant or an expression of host values: `found[0] = 1`) gives the
//! sequential answer whatever the order, and is left alone.

use crate::analysis::affine::affine_of;
use crate::diag::Span;
use crate::ir::{ArrayRef, Body, Expr, ExprKind, Handle, Kernel, Local, Stmt, for_each_stmt};

/// The first non-atomic store (array param, span) of a kernel with parallel dims whose
/// subscripts are affine and mention none of the parallel indices, storing a value that
/// differs between iterations.
pub fn invariant_element_store(kernel: &Kernel) -> Option<(u32, Span)> {
    if kernel.space.is_empty() {
        return None;
    }
    let parallel: Vec<Handle<Local>> = kernel.space.iter().map(|d| d.var).collect();
    let body = &kernel.body;
    let mut found = None;
    for_each_stmt(&body.block, &mut |s| {
        let Stmt::Store { array: ArrayRef::Param(p), indices, value, span } = s else { return };
        if found.is_some() || same_in_every_iteration(body, *value) {
            return;
        }
        let invariant = indices
            .iter()
            .all(|&i| affine_of(body, i).is_some_and(|a| !a.vars().iter().any(|v| parallel.contains(v))));
        if invariant {
            found = Some((*p, *span));
        }
    });
    found
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
