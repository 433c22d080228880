//! The bounds test nearly every CUDA kernel opens with, folded into the range of the loop over
//! its threads: `int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { S }` (or
//! `if (i >= n) return; S`) runs `S` on the threads `max(0, lo) <= i < min(threads, hi)`, with
//! the test gone. The analysis then sees `S` read unconditionally, so staging can tile it, and
//! the launch runs no idle threads.
//!
//! Folded only where the meaning cannot change: the index variable is a signed integer local
//! initialised to one axis's global index (plus or minus a constant) and never assigned again;
//! each bound is uniform (constants, and parameters the kernel does not assign; no loads,
//! calls or file-scope variables), so the host computes it before the launch; everything before the
//! test only declares variables from side-effect-free initialisers; every conjunct of the test
//! (every disjunct of an early `return`'s) compares the index with a bound. Anything else stays
//! as written, which is correct, only unstaged.

use std::collections::{HashMap, HashSet};

use crate::front::ast::*;
use crate::front::lower::walk;

use super::global_index;

/// What the folded tests say about one axis's global index: the host C of its lower bounds
/// (inclusive) and upper bounds (exclusive).
#[derive(Clone, Debug, Default)]
pub(super) struct AxisBounds {
    pub lowers: Vec<String>,
    pub uppers: Vec<String>,
}

/// Folds the kernel body's opening test into bounds per axis (the test is removed from
/// `body`). `params` are the kernel's parameter names; `text` the unit's text.
pub(super) fn fold(body: &mut Block, params: &HashSet<String>, text: &str) -> [AxisBounds; 3] {
    let mut bounds: [AxisBounds; 3] = Default::default();
    let assigned = assigned_names(body);
    // Every name the body declares, at any depth (a bound naming one is not uniform).
    let (locals, _) = walk::declared_and_named(&body.stmts);
    // Index variables declared before the test: name -> (axis, offset).
    let mut index_vars: HashMap<String, (usize, i64)> = HashMap::new();
    let mut k = 0;
    while k < body.stmts.len() {
        let StmtKind::Decl(d) = &body.stmts[k].kind else { break };
        if !d.declarators.iter().all(|id| id.init.as_ref().is_none_or(pure_init)) {
            return bounds;
        }
        if is_signed_integer(&d.specs) {
            for id in &d.declarators {
                if let (Some(name), Some(Initializer::Expr(e))) = (&id.declarator.name, &id.init)
                    && id.declarator.derived.is_empty()
                    && !assigned.contains(name)
                    && let Some(index) = offset_index(e)
                {
                    index_vars.insert(name.clone(), index);
                }
            }
        }
        k += 1;
    }
    let Some(test) = body.stmts.get(k) else { return bounds };
    let uniform = |e: &Expr| is_uniform(e, params, &locals, &assigned);
    let StmtKind::If { cond, then, otherwise: None } = &test.kind else { return bounds };
    let early_exit = matches!(then.kind, StmtKind::Continue | StmtKind::Return(None))
        || matches!(&then.kind, StmtKind::Compound(b) if b.stmts.len() == 1 && matches!(b.stmts[0].kind, StmtKind::Continue | StmtKind::Return(None)));
    let mut found: Vec<(usize, Bound)> = Vec::new();
    let folded = if early_exit {
        // `if (i >= n || i < 1) return;`: the threads that stay satisfy every negation.
        terms(cond, BinaryOp::LogOr).into_iter().all(|t| match comparison(t, &index_vars, &uniform, text) {
            Some((axis, b)) => {
                found.push((axis, b.negated()));
                true
            }
            None => false,
        })
    } else {
        if k + 1 != body.stmts.len() {
            return bounds;
        }
        terms(cond, BinaryOp::LogAnd).into_iter().all(|t| match comparison(t, &index_vars, &uniform, text) {
            Some((axis, b)) => {
                found.push((axis, b));
                true
            }
            None => false,
        })
    };
    if !folded || found.is_empty() {
        return bounds;
    }
    for (axis, b) in found {
        match b {
            Bound::Lower(t) => bounds[axis].lowers.push(t),
            Bound::Upper(t) => bounds[axis].uppers.push(t),
        }
    }
    let test = body.stmts.remove(k);
    if !early_exit && let StmtKind::If { then, .. } = test.kind {
        body.stmts.insert(k, *then);
    }
    bounds
}

/// A bound on the global index, as host C: `Lower(t)`: index >= t; `Upper(t)`: index < t.
enum Bound {
    Lower(String),
    Upper(String),
}

impl Bound {
    fn negated(self) -> Bound {
        // not (i >= t) is i < t; not (i < t) is i >= t.
        match self {
            Bound::Lower(t) => Bound::Upper(t),
            Bound::Upper(t) => Bound::Lower(t),
        }
    }
}

fn terms(e: &Expr, op: BinaryOp) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary { op: o, lhs, rhs } if *o == op => {
            let mut out = terms(lhs, op);
            out.extend(terms(rhs, op));
            out
        }
        _ => vec![e],
    }
}

/// `x op b` or `b op x` with `x` an index variable and `b` uniform: the axis and the bound on
/// the axis's global index.
fn comparison(e: &Expr, vars: &HashMap<String, (usize, i64)>, uniform: &dyn Fn(&Expr) -> bool, text: &str) -> Option<(usize, Bound)> {
    let ExprKind::Binary { op, lhs, rhs } = &e.kind else { return None };
    let var = |x: &Expr| match &x.kind {
        ExprKind::Ident(n) => vars.get(n).copied(),
        _ => None,
    };
    // Normalise to `index op bound`.
    let (op, (axis, offset), bound) = match (var(lhs), var(rhs)) {
        (Some(v), None) => (*op, v, rhs.as_ref()),
        (None, Some(v)) => (
            match op {
                BinaryOp::Lt => BinaryOp::Gt,
                BinaryOp::Le => BinaryOp::Ge,
                BinaryOp::Gt => BinaryOp::Lt,
                BinaryOp::Ge => BinaryOp::Le,
                _ => return None,
            },
            v,
            lhs.as_ref(),
        ),
        _ => return None,
    };
    if !uniform(bound) {
        return None;
    }
    // index + offset op b  <=>  index op b - offset.
    let b = format!("((long long)({}) - ({offset}LL))", &text[bound.span.lo as usize..bound.span.hi as usize]);
    Some((
        axis,
        match op {
            BinaryOp::Lt => Bound::Upper(b),
            BinaryOp::Le => Bound::Upper(format!("({b} + 1LL)")),
            BinaryOp::Ge => Bound::Lower(b),
            BinaryOp::Gt => Bound::Lower(format!("({b} + 1LL)")),
            _ => return None,
        },
    ))
}

/// One axis's global index plus or minus an integer constant: the axis and the constant.
fn offset_index(e: &Expr) -> Option<(usize, i64)> {
    let e = match &e.kind {
        ExprKind::Cast { ty, expr } if is_signed_integer(&ty.specs) && ty.declarator.derived.is_empty() => expr,
        _ => e,
    };
    if let Some(axis) = global_index(e) {
        return Some((axis, 0));
    }
    let ExprKind::Binary { op, lhs, rhs } = &e.kind else { return None };
    let constant = |c: &Expr| match &c.kind {
        ExprKind::IntLit { value, .. } => i64::try_from(*value).ok(),
        _ => None,
    };
    match op {
        BinaryOp::Add => match (global_index(lhs), global_index(rhs)) {
            (Some(a), None) => Some((a, constant(rhs)?)),
            (None, Some(a)) => Some((a, constant(lhs)?)),
            _ => None,
        },
        BinaryOp::Sub => Some((global_index(lhs)?, -constant(rhs)?)),
        _ => None,
    }
}

fn is_signed_integer(specs: &DeclSpecs) -> bool {
    matches!(specs.ty, TypeSpec::Base(BaseType::Int | BaseType::Long | BaseType::LongLong | BaseType::Short))
}

/// An initialiser the threads past the bound may skip: no assignment, call or increment.
fn pure_init(i: &Initializer) -> bool {
    match i {
        Initializer::Expr(e) => pure(e),
        // Numbers are pure.
        Initializer::List(list) => list.trees().all(|(_, i)| pure_init(i)),
    }
}

fn pure(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Assign { .. } | ExprKind::Call { .. } | ExprKind::CompoundLiteral { .. } => false,
        ExprKind::Unary { op: UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec, .. } => false,
        ExprKind::Unary { operand, .. } | ExprKind::Cast { expr: operand, .. } | ExprKind::SizeofExpr(operand) => pure(operand),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Index { base: lhs, index: rhs } => pure(lhs) && pure(rhs),
        ExprKind::Conditional { cond, then, otherwise } => pure(cond) && pure(then) && pure(otherwise),
        ExprKind::Member { base, .. } => pure(base),
        _ => true,
    }
}

/// The same value in every thread, computable by the host before the launch.
fn is_uniform(e: &Expr, params: &HashSet<String>, locals: &HashSet<String>, assigned: &HashSet<String>) -> bool {
    let rec = |e: &Expr| is_uniform(e, params, locals, assigned);
    match &e.kind {
        // A parameter: the host function has it. (A file-scope variable is not taken: the
        // host's copy may be older than the device's.)
        ExprKind::Ident(n) => params.contains(n) && !assigned.contains(n) && !locals.contains(n),
        ExprKind::IntLit { .. } | ExprKind::CharLit(_) | ExprKind::SizeofType(_) => true,
        ExprKind::Unary { op: UnaryOp::Neg | UnaryOp::Plus | UnaryOp::Not | UnaryOp::BitNot, operand } => rec(operand),
        ExprKind::Binary { op, lhs, rhs } => *op != BinaryOp::Comma && rec(lhs) && rec(rhs),
        ExprKind::Conditional { cond, then, otherwise } => rec(cond) && rec(then) && rec(otherwise),
        ExprKind::Cast { expr, .. } => rec(expr),
        _ => false,
    }
}

/// Names the body assigns, increments or takes the address of.
fn assigned_names(body: &Block) -> HashSet<String> {
    let mut out = HashSet::new();
    for s in &body.stmts {
        out.extend(walk::written_names(s));
        walk::each_expr(s, &mut |e| {
            if let ExprKind::Unary { op: UnaryOp::AddrOf, operand } = &e.kind
                && let ExprKind::Ident(n) = &operand.kind
            {
                out.insert(n.clone());
            }
        });
    }
    out
}
