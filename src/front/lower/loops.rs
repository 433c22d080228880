//! Loop normalisation: recognises `for` loops that count (`for (i = lo; i < hi; i += step)` and
//! its variants) and finds the loop nests a compute construct turns into parallel dimensions.

use std::collections::HashSet;

use crate::front::ast::{
    BinaryOp, Clause, ClauseKind, Declaration, Directive, DirectiveKind, Expr, ExprKind, ForInit, Initializer, StmtKind, Stmt, StorageClass, UnaryOp,
};
use crate::front::sema::{Sema, Storage};

use super::walk;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

/// A counted loop: `var` starts at `lo` and moves by `step` while `var cmp bound`.
#[derive(Clone, Debug)]
pub struct CountedLoop<'a> {
    pub var: String,
    /// The declaration in the init, when the loop declares its variable (`for (int i = ...)`).
    pub decl: Option<&'a Declaration>,
    pub lo: &'a Expr,
    pub bound: &'a Expr,
    pub cmp: Cmp,
    pub step: i64,
}

pub const COUNTED_LOOP_HELP: &str = "write the loop as for (i = lo; i < hi; i += step) with a constant step, and do not assign i in the body";

/// Why a loop is not a counted loop, and where (the part of the loop at fault).
#[derive(Clone, Debug, PartialEq)]
pub struct NotCounted {
    pub why: String,
    pub span: Option<crate::diag::Span>,
}

impl From<String> for NotCounted {
    fn from(why: String) -> NotCounted {
        NotCounted { why, span: None }
    }
}

impl From<&str> for NotCounted {
    fn from(why: &str) -> NotCounted {
        NotCounted { why: why.to_string(), span: None }
    }
}

fn at(span: crate::diag::Span) -> impl Fn(NotCounted) -> NotCounted {
    move |n| NotCounted { span: n.span.or(Some(span)), ..n }
}

/// Recognises a counted `for` loop; `Err` says why it is not one.
pub fn counted_loop<'a>(sema: &Sema, stmt: &'a Stmt) -> Result<CountedLoop<'a>, NotCounted> {
    let StmtKind::For { init, cond, step, body } = &stmt.kind else {
        return Err("the statement is not a `for` loop".into());
    };
    let (var, decl, lo) = match init {
        Some(ForInit::Decl(d)) => match d.declarators.as_slice() {
            [one] => match (&one.declarator.name, &one.init) {
                (Some(name), Some(crate::front::ast::Initializer::Expr(e))) => (name.clone(), Some(d), e),
                _ => return Err("the loop variable has no initial value".into()),
            },
            _ => return Err("the loop declares more than one variable".into()),
        },
        Some(ForInit::Expr(Expr { kind: ExprKind::Assign { op: None, lhs, rhs }, .. })) => match &lhs.kind {
            ExprKind::Ident(n) => (n.clone(), None, &**rhs),
            _ => return Err("the loop does not start by assigning a variable".into()),
        },
        _ => return Err("the loop does not start by assigning a variable".into()),
    };
    let Some(cond) = cond else { return Err("the loop has no condition".into()) };
    let cond_span = cond.span;
    let (cmp, bound) = (|| -> Result<_, NotCounted> { Ok(match &cond.kind {
        ExprKind::Binary { op, lhs, rhs } => {
            let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Ident(n) if *n == var);
            let cmp = match op {
                BinaryOp::Lt => Cmp::Lt,
                BinaryOp::Le => Cmp::Le,
                BinaryOp::Gt => Cmp::Gt,
                BinaryOp::Ge => Cmp::Ge,
                _ => return Err(format!("the condition does not compare `{var}` with <, <=, > or >=").into()),
            };
            if is_var(lhs) {
                (cmp, &**rhs)
            } else if is_var(rhs) {
                let flipped = match cmp {
                    Cmp::Lt => Cmp::Gt,
                    Cmp::Le => Cmp::Ge,
                    Cmp::Gt => Cmp::Lt,
                    Cmp::Ge => Cmp::Le,
                };
                (flipped, &**lhs)
            } else {
                return Err(format!("the condition does not compare `{var}` with the bound").into());
            }
        }
        _ => return Err(format!("the condition does not compare `{var}` with <, <=, > or >=").into()),
    })})().map_err(at(cond_span))?;
    if walk::count_name(bound, &var) > 0 {
        return Err(NotCounted { why: format!("the bound depends on `{var}`"), span: Some(cond_span) });
    }
    let Some(step) = step else { return Err("the loop has no increment".into()) };
    let step_span = step.span;
    let step = step_of(sema, step, &var).map_err(|why| NotCounted { why, span: Some(step_span) })?;
    match cmp {
        Cmp::Lt | Cmp::Le if step <= 0 => {
            return Err(NotCounted { why: "the loop counts up but its step is not positive".into(), span: Some(step_span) });
        }
        Cmp::Gt | Cmp::Ge if step >= 0 => {
            return Err(NotCounted { why: "the loop counts down but its step is not negative".into(), span: Some(step_span) });
        }
        _ => {}
    }
    let mut assignment = None;
    walk::each_expr(body, &mut |e| {
        if assignment.is_none() && walk::assigned_name(e) == Some(var.as_str()) {
            assignment = Some(e.span);
        }
    });
    if let Some(span) = assignment {
        return Err(NotCounted { why: format!("the loop variable `{var}` is assigned in the loop body"), span: Some(span) });
    }
    Ok(CountedLoop { var, decl, lo, bound, cmp, step })
}

fn step_of(sema: &Sema, e: &Expr, var: &str) -> Result<i64, String> {
    let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Ident(n) if n == var);
    let constant = |e: &Expr| sema.const_eval(e).ok_or_else(|| "the step is not a constant".to_string());
    match &e.kind {
        ExprKind::Unary { op, operand } if is_var(operand) => match op {
            UnaryOp::PreInc | UnaryOp::PostInc => Ok(1),
            UnaryOp::PreDec | UnaryOp::PostDec => Ok(-1),
            _ => Err(format!("the increment does not step `{var}`")),
        },
        ExprKind::Assign { op: Some(BinaryOp::Add), lhs, rhs } if is_var(lhs) => constant(rhs),
        ExprKind::Assign { op: Some(BinaryOp::Sub), lhs, rhs } if is_var(lhs) => Ok(-constant(rhs)?),
        ExprKind::Assign { op: None, lhs, rhs } if is_var(lhs) => match &rhs.kind {
            ExprKind::Binary { op: BinaryOp::Add, lhs: a, rhs: b } if is_var(a) => constant(b),
            ExprKind::Binary { op: BinaryOp::Add, lhs: a, rhs: b } if is_var(b) => constant(a),
            ExprKind::Binary { op: BinaryOp::Sub, lhs: a, rhs: b } if is_var(a) => Ok(-constant(b)?),
            _ => Err(format!("the increment is not `{var} += constant`")),
        },
        _ => Err(format!("the increment does not step `{var}`")),
    }
}

/// The only statement of a loop body (through braces), if it has exactly one.
pub fn single_stmt(s: &Stmt) -> &Stmt {
    match &s.kind {
        StmtKind::Compound(b) if b.stmts.len() == 1 => single_stmt(&b.stmts[0]),
        _ => s,
    }
}

/// One loop of a nest that becomes a parallel dimension, with the clauses that apply to it.
pub struct NestLoop<'a> {
    pub stmt: &'a Stmt,
    pub clauses: Vec<&'a Clause>,
    /// Statements this loop's body runs before the nest's next loop (`i3 = 2*j3 - d3;`
    /// between a gang loop and its worker loop): each iteration of the loops inside may run
    /// them again with the same result ([`sinkable_prefix`]), so they move into the innermost
    /// body and the nest stays a nest.
    pub prefix: Vec<&'a Stmt>,
}

/// How far into a loop nest a construct reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NestPolicy {
    /// Only `collapse` and nested loop directives add dimensions.
    Explicit,
    /// `kernels`: also plain counted loops nested directly (the dependence test decides).
    Auto,
}

pub const MAX_DIMS: usize = 3;

/// A nested `loop` directive adds a parallel dimension unless it says `seq`: inside a
/// `parallel` construct a loop without `seq` or `auto` is independent (OpenACC 2.7, 2.9.6);
/// inside `kernels` every candidate goes to the dependence test anyway.
fn clause_is_parallel_loop(d: &Directive, policy: NestPolicy) -> bool {
    let has = |wanted: fn(&ClauseKind) -> bool| d.clauses.iter().any(|c| wanted(&c.kind));
    matches!(d.kind, DirectiveKind::Loop)
        && !has(|k| matches!(k, ClauseKind::Seq))
        && (policy == NestPolicy::Auto || !has(|k| matches!(k, ClauseKind::Auto)))
}

pub fn collapse_of(clauses: &[&Clause]) -> usize {
    let collapse = clauses.iter().find_map(|c| match c.kind {
        ClauseKind::Collapse(n) => Some(n.max(1) as usize),
        _ => None,
    });
    // `tile(32, 32)` tiles (and so associates) as many loops as it has sizes; the mapping
    // chooses its own blocks, so the loops are collapsed instead.
    let tile = clauses.iter().find_map(|c| match &c.kind {
        ClauseKind::Tile(sizes) => Some(sizes.len().max(1)),
        _ => None,
    });
    collapse.or(tile).unwrap_or(1)
}

/// The loops of the nest starting at `outer` that become parallel dimensions (outermost first)
/// and the statement one iteration of the innermost runs. `Err` when `collapse(n)` asks for
/// more loops than are perfectly nested (the span of the offending statement and why).
pub fn loop_nest<'a>(
    sema: &Sema,
    outer: &'a Stmt,
    outer_clauses: Vec<&'a Clause>,
    policy: NestPolicy,
) -> Result<(Vec<NestLoop<'a>>, &'a Stmt), (crate::diag::Span, String)> {
    let mut wanted = collapse_of(&outer_clauses);
    let mut nest = vec![NestLoop { stmt: outer, clauses: outer_clauses, prefix: Vec::new() }];
    let mut body = for_body(outer);
    loop {
        let inner = single_stmt(body);
        if nest.len() >= MAX_DIMS {
            return Ok((nest, body));
        }
        if nest.len() < wanted {
            if matches!(inner.kind, StmtKind::For { .. }) {
                nest.push(NestLoop { stmt: inner, clauses: Vec::new(), prefix: Vec::new() });
                body = for_body(inner);
                continue;
            }
            let culprit = match &inner.kind {
                StmtKind::Compound(b) => b.stmts.iter().find(|s| !matches!(s.kind, StmtKind::For { .. })).map_or(inner.span, |s| s.span),
                _ => inner.span,
            };
            return Err((culprit, format!("collapse({wanted}) needs {wanted} perfectly nested `for` loops")));
        }
        match &inner.kind {
            StmtKind::Acc { directive, body: Some(b) } if clause_is_parallel_loop(directive, policy) => {
                if matches!(b.kind, StmtKind::For { .. }) {
                    let clauses: Vec<&Clause> = directive.clauses.iter().collect();
                    wanted = nest.len() + collapse_of(&clauses);
                    nest.push(NestLoop { stmt: b, clauses, prefix: Vec::new() });
                    body = for_body(b);
                    continue;
                }
                return Ok((nest, body));
            }
            StmtKind::Compound(_) => {
                let Some((prefix, next)) = sinkable_prefix(sema, inner) else { return Ok((nest, body)) };
                let StmtKind::Acc { directive, body: Some(b) } = &next.kind else { return Ok((nest, body)) };
                if !clause_is_parallel_loop(directive, policy) || !matches!(b.kind, StmtKind::For { .. }) {
                    return Ok((nest, body));
                }
                nest.last_mut().expect("the outer loop").prefix = prefix;
                let clauses: Vec<&Clause> = directive.clauses.iter().collect();
                wanted = nest.len() + collapse_of(&clauses);
                nest.push(NestLoop { stmt: b, clauses, prefix: Vec::new() });
                body = for_body(b);
            }
            StmtKind::For { .. } if policy == NestPolicy::Auto && counted_loop(sema, inner).is_ok() => {
                nest.push(NestLoop { stmt: inner, clauses: Vec::new(), prefix: Vec::new() });
                body = for_body(inner);
            }
            _ => return Ok((nest, body)),
        }
    }
}

/// A loop body `{ s1; ...; sk; next }` whose statements before `next` (the nest's next loop)
/// give the same result however often they run in an iteration: each assigns or declares a
/// scalar from an expression without effects (no call, store or element read), that no later
/// statement here or in `next` assigns, from names nothing here or in `next` assigns, and
/// whose address `next` never takes; no loop header in `next` names what they assign (the
/// loops' bounds are evaluated before any iteration). Returns the statements and `next`.
pub fn sinkable_prefix<'a>(sema: &Sema, body: &'a Stmt) -> Option<(Vec<&'a Stmt>, &'a Stmt)> {
    let StmtKind::Compound(block) = &body.kind else { return None };
    let (last, prefix) = block.stmts.split_last()?;
    if prefix.is_empty() {
        return None;
    }
    let next = single_stmt(last);
    let written_after = walk::written_names(next);
    let calls = !walk::called_functions(next).is_empty();
    let mut assigned: Vec<HashSet<String>> = Vec::new();
    let mut reads: Vec<HashSet<String>> = Vec::new();
    for stmt in prefix {
        let (names, read) = scalar_definition(stmt)?;
        assigned.push(names);
        reads.push(read);
    }
    let mut taken = HashSet::new();
    walk::each_expr(next, &mut |e| {
        if let ExprKind::Unary { op: UnaryOp::AddrOf, operand } = &e.kind
            && let ExprKind::Ident(n) = &operand.kind
        {
            taken.insert(n.clone());
        }
    });
    let mut headers = HashSet::new();
    walk::each_stmt(next, &mut |st| {
        if let StmtKind::For { init, cond, step, .. } = &st.kind {
            match init {
                Some(ForInit::Expr(e)) => walk::names_in(e, &mut headers),
                Some(ForInit::Decl(d)) => d.declarators.iter().filter_map(|d| d.init.as_ref()).for_each(|i| walk::init_tree(i, &mut |e| walk::names_in(e, &mut headers))),
                None => {}
            }
            cond.iter().chain(step.iter()).for_each(|e| walk::names_in(e, &mut headers));
        }
    });
    for (i, (names, read)) in assigned.iter().zip(&reads).enumerate() {
        let later: HashSet<&String> = assigned[i..].iter().flatten().chain(&written_after).collect();
        let assigned_again = assigned[i + 1..].iter().flatten().chain(&written_after).any(|n| names.contains(n));
        if assigned_again || read.iter().any(|n| later.contains(n)) {
            return None;
        }
        if names.iter().chain(read).any(|n| taken.contains(n)) || names.iter().any(|n| headers.contains(n)) {
            return None;
        }
        // A call in `next` may assign a file-scope variable the statement reads.
        if calls && read.iter().any(|n| sema.lookup_var(n).is_some_and(|v| v.storage == Storage::Global)) {
            return None;
        }
    }
    Some((prefix.iter().collect(), next))
}

/// What a statement of [`sinkable_prefix`] assigns and reads: `x = e;` or a declaration of
/// scalars with such initialisers; `None` for anything else.
fn scalar_definition(stmt: &Stmt) -> Option<(HashSet<String>, HashSet<String>)> {
    let (mut names, mut read) = (HashSet::new(), HashSet::new());
    match &stmt.kind {
        StmtKind::Expr(Some(Expr { kind: ExprKind::Assign { op: None, lhs, rhs }, .. })) => {
            let ExprKind::Ident(n) = &lhs.kind else { return None };
            if !without_effects(rhs) {
                return None;
            }
            names.insert(n.clone());
            walk::names_in(rhs, &mut read);
        }
        StmtKind::Decl(d) => {
            if matches!(d.specs.storage, Some(StorageClass::Static | StorageClass::Extern | StorageClass::Typedef)) {
                return None;
            }
            for d in &d.declarators {
                if !d.declarator.derived.is_empty() {
                    return None;
                }
                match &d.init {
                    Some(Initializer::Expr(e)) if without_effects(e) => walk::names_in(e, &mut read),
                    None => {}
                    Some(_) => return None,
                }
                names.insert(d.declarator.name.clone()?);
            }
        }
        _ => return None,
    }
    Some((names, read))
}

/// Arithmetic on names and constants: no call, assignment, element or member read.
fn without_effects(e: &Expr) -> bool {
    let mut pure = true;
    walk::expr_tree(e, &mut |e| {
        pure &= match &e.kind {
            ExprKind::Ident(_) | ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } | ExprKind::CharLit(_) => true,
            ExprKind::Unary { op, .. } => {
                !matches!(op, UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec | UnaryOp::Deref | UnaryOp::AddrOf)
            }
            ExprKind::Binary { .. } | ExprKind::Conditional { .. } | ExprKind::Cast { .. } | ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => true,
            _ => false,
        };
    });
    pure
}

/// The body of a `for` statement (the statement itself for anything else).
pub fn for_body(s: &Stmt) -> &Stmt {
    match &s.kind {
        StmtKind::For { body, .. } => body,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::front::ast::IntSuffix;

    fn e(kind: ExprKind) -> Expr {
        Expr { kind, span: Span::default() }
    }
    fn id(n: &str) -> Expr {
        e(ExprKind::Ident(n.into()))
    }
    fn int(v: u64) -> Expr {
        e(ExprKind::IntLit { value: v, suffix: IntSuffix::default(), radix: 10 })
    }
    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        e(ExprKind::Binary { op, lhs: Box::new(a), rhs: Box::new(b) })
    }
    fn assign(op: Option<BinaryOp>, a: Expr, b: Expr) -> Expr {
        e(ExprKind::Assign { op, lhs: Box::new(a), rhs: Box::new(b) })
    }
    fn for_loop(init: Expr, cond: Expr, step: Expr, body: Stmt) -> Stmt {
        Stmt {
            kind: StmtKind::For { init: Some(ForInit::Expr(init)), cond: Some(cond), step: Some(step), body: Box::new(body) },
            span: Span::default(),
        }
    }
    fn empty() -> Stmt {
        Stmt { kind: StmtKind::Expr(None), span: Span::default() }
    }

    #[test]
    fn recognises_up_and_down_counting_loops() {
        let sema = Sema::new();
        let up = for_loop(
            assign(None, id("i"), int(0)),
            bin(BinaryOp::Le, id("i"), id("n")),
            assign(Some(BinaryOp::Add), id("i"), int(2)),
            empty(),
        );
        let c = counted_loop(&sema, &up).expect("counted");
        assert_eq!((c.var.as_str(), c.cmp, c.step), ("i", Cmp::Le, 2));
        let down = for_loop(
            assign(None, id("i"), id("n")),
            bin(BinaryOp::Lt, int(0), id("i")),
            e(ExprKind::Unary { op: UnaryOp::PostDec, operand: Box::new(id("i")) }),
            empty(),
        );
        let c = counted_loop(&sema, &down).expect("counted");
        assert_eq!((c.cmp, c.step), (Cmp::Gt, -1));
        let explicit = for_loop(
            assign(None, id("i"), int(0)),
            bin(BinaryOp::Lt, id("i"), id("n")),
            assign(None, id("i"), bin(BinaryOp::Add, int(4), id("i"))),
            empty(),
        );
        assert_eq!(counted_loop(&sema, &explicit).map(|c| c.step), Ok(4));
    }

    #[test]
    fn refuses_loops_that_do_not_count() {
        let sema = Sema::new();
        let wrong_direction = for_loop(
            assign(None, id("i"), int(0)),
            bin(BinaryOp::Lt, id("i"), id("n")),
            e(ExprKind::Unary { op: UnaryOp::PostDec, operand: Box::new(id("i")) }),
            empty(),
        );
        assert!(counted_loop(&sema, &wrong_direction).is_err());
        let variable_step = for_loop(
            assign(None, id("i"), int(0)),
            bin(BinaryOp::Lt, id("i"), id("n")),
            assign(Some(BinaryOp::Add), id("i"), id("s")),
            empty(),
        );
        assert_eq!(counted_loop(&sema, &variable_step).err().map(|n| n.why).as_deref(), Some("the step is not a constant"));
        let modified = for_loop(
            assign(None, id("i"), int(0)),
            bin(BinaryOp::Ne, id("i"), id("n")),
            e(ExprKind::Unary { op: UnaryOp::PostInc, operand: Box::new(id("i")) }),
            empty(),
        );
        assert!(counted_loop(&sema, &modified).is_err());
        let body_writes = for_loop(
            assign(None, id("i"), int(0)),
            bin(BinaryOp::Lt, id("i"), id("n")),
            e(ExprKind::Unary { op: UnaryOp::PostInc, operand: Box::new(id("i")) }),
            Stmt { kind: StmtKind::Expr(Some(assign(None, id("i"), int(7)))), span: Span::default() },
        );
        assert!(counted_loop(&sema, &body_writes).unwrap_err().why.contains("assigned in the loop body"));
    }
}
