//! Time-step loops: a host `for` loop whose body is exactly one compute region, so that the
//! runtime may run several of its iterations in one launch (`opt::fusion::steps`).
//!
//! The loop stays in the host code; only its body changes, to `v += region_steps(..., left) -
//! 1`, where `left` is the number of iterations still to run. That is sound when nothing but
//! the region runs in an iteration, the region's args do not depend on the iteration (they do
//! not name `v`), the region writes no host scalar (no reduction or scalar output: its
//! effects are on arrays only), and `left` can be computed from `v` and a bound the region
//! cannot change: the forms `for (v = a; v < e; v++)`, `v <= e`, `e > v`, `e >= v`, with
//! `++v`, `v += 1` or `v = v + 1`, `v` of integer type, and `e` built from constants and
//! scalar variables other than `v` with arithmetic only.
//!
//! The body may end by swapping two pointers the region names (`double *tmp = u; u = un; un =
//! tmp;`, the usual form of a stencil that alternates two arrays). The runtime then runs one
//! step, after which the host swaps, or an even number, after which the pointers are where
//! they started and the host skips the swap (`if (ran != 1) continue;`).

use crate::front::ast::{self, BinaryOp as AB, Expr, ExprKind as AE, ForInit, Stmt, StmtKind, UnaryOp};
use crate::front::sema::{CType, Sema};
use crate::ir::{HostArgKind, RegionKind, StepLoop};

use super::Lowerer;

impl Lowerer<'_> {
    /// The step loop `for (init; cond; step) body`, if it is one: `region` is the one region
    /// lowered from its body (the caller checked that there is exactly one).
    pub(super) fn step_loop(
        &self,
        init: &Option<ForInit>,
        cond: &Option<Expr>,
        step: &Option<Expr>,
        body: &Stmt,
        region: u32,
        sema: &Sema,
    ) -> Option<StepLoop> {
        let r = &self.module.regions[region as usize];
        if !matches!(r.kind, RegionKind::Compute { .. }) || r.if_arg.is_some() {
            return None;
        }
        // The body is the region and nothing else, or the region and a swap.
        let mut inner: Vec<&Stmt> = match &body.kind {
            StmtKind::Compound(b) => b.stmts.iter().collect(),
            _ => vec![body],
        };
        let swapped = match inner.as_slice() {
            [.., a, b, c] if inner.len() > 3 => pointer_swap(a, b, c),
            _ => None,
        };
        let mut swap = None;
        if let Some((x, y)) = swapped {
            let arg = |name: &str| r.args.iter().position(|a| a.kind == HostArgKind::Pointer && a.c_expr == name).map(|i| i as u32);
            swap = Some((arg(&x)?, arg(&y)?));
            inner.truncate(inner.len() - 3);
        }
        if inner.is_empty() || inner.iter().any(|s| s.span.tu != r.span.tu || s.span.lo < r.span.lo || s.span.hi > r.span.hi) {
            return None;
        }
        let counter = match init.as_ref()? {
            ForInit::Decl(d) => match d.declarators.as_slice() {
                [one] if one.init.is_some() => one.declarator.name.clone()?,
                _ => return None,
            },
            ForInit::Expr(Expr { kind: AE::Assign { op: None, lhs, .. }, .. }) => ident(lhs)?.to_string(),
            ForInit::Expr(_) => return None,
        };
        let integer = matches!(sema.lookup_var(&counter).map(|v| &v.ty), Some(CType::Scalar(t)) if !t.is_float());
        if !integer || !is_increment(step.as_ref()?, &counter) {
            return None;
        }
        let (bound, inclusive) = match &cond.as_ref()?.kind {
            AE::Binary { op: AB::Lt, lhs, rhs } if ident(lhs) == Some(&counter) => (rhs, false),
            AE::Binary { op: AB::Le, lhs, rhs } if ident(lhs) == Some(&counter) => (rhs, true),
            AE::Binary { op: AB::Gt, lhs, rhs } if ident(rhs) == Some(&counter) => (lhs, false),
            AE::Binary { op: AB::Ge, lhs, rhs } if ident(rhs) == Some(&counter) => (lhs, true),
            _ => return None,
        };
        if !invariant_bound(bound, &counter, sema) {
            return None;
        }
        // The region's effects are on arrays only, and its args are the same every iteration;
        // nor may it reach the bound's variables through a pointer (`copy(n)` of the bound).
        let mut bound_names = Vec::new();
        identifiers(bound, &mut bound_names);
        let reaches_bound =
            |a: &crate::ir::HostArg| a.kind == HostArgKind::Pointer && bound_names.iter().any(|n| mentions(&a.c_expr, n));
        if r.args.iter().any(|a| matches!(a.kind, HostArgKind::ScalarOut(_)) || mentions(&a.c_expr, &counter) || reaches_bound(a)) {
            return None;
        }
        let text = self.sources.text(bound.span);
        let extra = if inclusive { " + 1" } else { "" };
        Some(StepLoop { region, counter: counter.clone(), remaining: format!("(long long)({text}) - (long long)({counter}){extra}"), swap })
    }
}

/// `T *t = x; x = y; y = t;` (or `t = x;` with `t` declared before): the names `x` and `y`.
fn pointer_swap(first: &Stmt, second: &Stmt, third: &Stmt) -> Option<(String, String)> {
    let assign = |s: &Stmt| match &s.kind {
        StmtKind::Expr(Some(Expr { kind: AE::Assign { op: None, lhs, rhs }, .. })) => Some((ident(lhs)?.to_string(), ident(rhs)?.to_string())),
        _ => None,
    };
    let (tmp, x) = match &first.kind {
        StmtKind::Decl(d) => match d.declarators.as_slice() {
            [one] => match &one.init {
                Some(ast::Initializer::Expr(e)) => (one.declarator.name.clone()?, ident(e)?.to_string()),
                _ => return None,
            },
            _ => return None,
        },
        _ => assign(first)?,
    };
    let (x2, y) = assign(second)?;
    let (y2, tmp2) = assign(third)?;
    (x2 == x && y2 == y && tmp2 == tmp && x != y && tmp != x && tmp != y).then_some((x, y))
}

fn ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        AE::Ident(name) => Some(name),
        _ => None,
    }
}

/// `v++`, `++v`, `v += 1`, `v = v + 1`.
fn is_increment(step: &Expr, v: &str) -> bool {
    let one = |e: &Expr| matches!(e.kind, AE::IntLit { value: 1, .. });
    match &step.kind {
        AE::Unary { op: UnaryOp::PostInc | UnaryOp::PreInc, operand } => ident(operand) == Some(v),
        AE::Assign { op: Some(AB::Add), lhs, rhs } => ident(lhs) == Some(v) && one(rhs),
        AE::Assign { op: None, lhs, rhs } => {
            ident(lhs) == Some(v)
                && matches!(&rhs.kind, AE::Binary { op: AB::Add, lhs: a, rhs: b } if (ident(a) == Some(v) && one(b)) || (one(a) && ident(b) == Some(v)))
        }
        _ => false,
    }
}

/// Whether `e` is built from integer constants and scalar variables other than `v` with
/// arithmetic only (no calls, assignments or memory accesses: its value cannot change while
/// the region runs, which writes arrays only).
fn invariant_bound(e: &Expr, v: &str, sema: &Sema) -> bool {
    match &e.kind {
        AE::IntLit { .. } => true,
        AE::Ident(name) => name != v && matches!(sema.lookup_var(name).map(|i| &i.ty), Some(CType::Scalar(_))),
        AE::Unary { op: UnaryOp::Neg | UnaryOp::Plus, operand } => invariant_bound(operand, v, sema),
        AE::Binary { op, lhs, rhs } => {
            matches!(op, AB::Add | AB::Sub | AB::Mul | AB::Div | AB::Rem | AB::Shl | AB::Shr)
                && invariant_bound(lhs, v, sema)
                && invariant_bound(rhs, v, sema)
        }
        AE::Cast { expr, .. } => invariant_bound(expr, v, sema),
        _ => false,
    }
}

/// The identifiers `e` names.
fn identifiers(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        AE::Ident(name) => out.push(name.clone()),
        AE::Unary { operand, .. } => identifiers(operand, out),
        AE::Binary { lhs, rhs, .. } => {
            identifiers(lhs, out);
            identifiers(rhs, out);
        }
        AE::Cast { expr, .. } => identifiers(expr, out),
        _ => {}
    }
}

/// Whether C expression text `c` names identifier `v`.
fn mentions(c: &str, v: &str) -> bool {
    c.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')).any(|word| word == v)
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn mentions_whole_identifiers_only() {
        assert!(mentions("a[t]", "t"));
        assert!(mentions("(t)", "t"));
        assert!(!mentions("tmp + st", "t"));
        assert!(!mentions("n", "t"));
    }
}
