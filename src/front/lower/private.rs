//! Automatic privatization of host scalars in parallel loops, and the liveness test that keeps
//! it honest.
//!
//! A host scalar that a parallel loop assigns without a clause is private to each iteration
//! when every read of it in an iteration follows an assignment in the same iteration, on every
//! path (assigned at the top of the body, in both branches of an `if` before any read, by the
//! init of an inner `for`). Such a scalar carries nothing from one iteration to the next, so
//! the iterations may run in any order; what production compilers do. Two things still make
//! the sequential answer differ from the parallel one, and lowering refuses them (or, in
//! `kernels`, keeps the loop sequential):
//!
//! * a read that no assignment of the same iteration precedes (an *exposed* read): the value
//!   comes from the previous iteration ([`exposed_read`]);
//! * a read after the construct that can see the loop's last value (the scalar is *live* after
//!   it, [`live_after`]): sequentially it holds the last iteration's value, which private
//!   copies never hand back.
//!
//! Both are definite-assignment analyses over the syntax tree for one name: the state is "the
//! name certainly holds a value assigned since the start" (unreachable code counts as
//! assigned), joined by "and" where paths meet. Loop bodies may run zero times, so what they
//! assign does not count after them.

use crate::diag::Span;
use crate::front::ast::{self, BinaryOp, Expr, ExprKind, ForInit, Initializer, Stmt, StmtKind, StorageClass};

type Flow = Result<bool, Span>;

struct DefAssign<'n> {
    name: &'n str,
    /// The state at the head of each enclosing `switch` (what a `case` label starts from).
    switch_entry: Vec<bool>,
    /// Whether what follows a `break`, `continue` or `goto` counts as unreachable. Within one
    /// iteration it does; after a construct, a jump may carry the value out of its loop.
    jumps_kill: bool,
}

impl DefAssign<'_> {
    fn is_name(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Ident(n) if n == self.name)
    }

    fn expr(&mut self, e: &Expr, a: bool) -> Flow {
        match &e.kind {
            ExprKind::Ident(n) if n == self.name => {
                if a {
                    Ok(true)
                } else {
                    Err(e.span)
                }
            }
            ExprKind::Assign { op, lhs, rhs } if self.is_name(lhs) => {
                let a = self.expr(rhs, a)?;
                if op.is_some() && !a {
                    return Err(lhs.span);
                }
                Ok(true)
            }
            ExprKind::Assign { lhs, rhs, .. } => {
                let a = self.expr(lhs, a)?;
                self.expr(rhs, a)
            }
            ExprKind::Unary { operand, .. } if self.is_name(operand) => {
                // `x++`, `-x`, `&x` (the address escapes: counted as a read).
                if a {
                    Ok(true)
                } else {
                    Err(operand.span)
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand, a),
            ExprKind::Binary { op: BinaryOp::LogAnd | BinaryOp::LogOr, lhs, rhs } => {
                let a = self.expr(lhs, a)?;
                self.expr(rhs, a)?;
                Ok(a)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                let a = self.expr(lhs, a)?;
                self.expr(rhs, a)
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                let a = self.expr(cond, a)?;
                let t = self.expr(then, a)?;
                let o = self.expr(otherwise, a)?;
                Ok(t && o)
            }
            ExprKind::Cast { expr, .. } => self.expr(expr, a),
            ExprKind::Call { callee, args } => {
                let mut a = self.expr(callee, a)?;
                for x in args {
                    a = self.expr(x, a)?;
                }
                Ok(a)
            }
            ExprKind::Index { base, index } => {
                let a = self.expr(base, a)?;
                self.expr(index, a)
            }
            ExprKind::Member { base, .. } => self.expr(base, a),
            ExprKind::CompoundLiteral { init, .. } => self.init(init, a),
            ExprKind::SizeofExpr(_)
            | ExprKind::Ident(_)
            | ExprKind::IntLit { .. }
            | ExprKind::FloatLit { .. }
            | ExprKind::ImagLit { .. }
            | ExprKind::CharLit(_)
            | ExprKind::StringLit(_)
            | ExprKind::SizeofType(_) => Ok(a),
        }
    }

    fn init(&mut self, init: &Initializer, mut a: bool) -> Flow {
        match init {
            Initializer::Expr(e) => self.expr(e, a),
            // Runs of numbers name nothing.
            Initializer::List(list) => {
                for (_, i) in list.trees() {
                    a = self.init(i, a)?;
                }
                Ok(a)
            }
        }
    }

    fn decl(&mut self, d: &ast::Declaration, mut a: bool) -> Flow {
        for id in &d.declarators {
            if let Some(i) = &id.init {
                a = self.init(i, a)?;
            }
        }
        Ok(a)
    }

    fn stmts<'s>(&mut self, stmts: impl IntoIterator<Item = &'s Stmt>, mut a: bool) -> Flow {
        for s in stmts {
            a = self.stmt(s, a)?;
        }
        Ok(a)
    }

    fn stmt(&mut self, s: &Stmt, a: bool) -> Flow {
        match &s.kind {
            StmtKind::Compound(b) => self.stmts(&b.stmts, a),
            StmtKind::Expr(Some(e)) => self.expr(e, a),
            StmtKind::Expr(None) => Ok(a),
            StmtKind::Decl(d) => self.decl(d, a),
            StmtKind::If { cond, then, otherwise } => {
                let a = self.expr(cond, a)?;
                let t = self.stmt(then, a)?;
                let o = match otherwise {
                    Some(o) => self.stmt(o, a)?,
                    None => a,
                };
                Ok(t && o)
            }
            StmtKind::For { init, cond, step, body } => {
                let mut a = match init {
                    Some(ForInit::Expr(e)) => self.expr(e, a)?,
                    Some(ForInit::Decl(d)) => self.decl(d, a)?,
                    None => a,
                };
                if let Some(c) = cond {
                    a = self.expr(c, a)?;
                }
                self.stmt(body, a)?;
                if let Some(st) = step {
                    self.expr(st, a)?;
                }
                Ok(a)
            }
            StmtKind::While { cond, body } => {
                let a = self.expr(cond, a)?;
                self.stmt(body, a)?;
                Ok(a)
            }
            StmtKind::DoWhile { body, cond } => {
                // A `continue` may reach the condition before the body's assignments.
                self.stmt(body, a)?;
                self.expr(cond, a)?;
                Ok(a)
            }
            StmtKind::Switch { cond, body } => {
                let a = self.expr(cond, a)?;
                self.switch_entry.push(a);
                let r = self.stmt(body, a);
                self.switch_entry.pop();
                r?;
                Ok(a)
            }
            StmtKind::Case { body, .. } | StmtKind::Default { body } => {
                let entry = self.switch_entry.last().copied().unwrap_or(false);
                self.stmt(body, a && entry)
            }
            // A `goto` may land here from anywhere.
            StmtKind::Labeled { body, .. } => self.stmt(body, false),
            StmtKind::Return(Some(e)) => {
                self.expr(e, a)?;
                Ok(true)
            }
            StmtKind::Return(None) => Ok(true),
            StmtKind::Break | StmtKind::Continue | StmtKind::Goto(_) => Ok(self.jumps_kill || a),
            StmtKind::Acc { body: Some(b), .. } => self.stmt(b, a),
            StmtKind::Acc { body: None, .. } => Ok(a),
        }
    }
}

/// The first read of `name` in one run of `body` that no assignment of the same run precedes
/// on every path; `None` when every read is covered.
pub fn exposed_read(body: &Stmt, name: &str) -> Option<Span> {
    DefAssign { name, switch_entry: Vec::new(), jumps_kill: true }.stmt(body, false).err()
}

/// Whether a read of `name` after `target` (a statement of `function`'s body) can see the
/// value `target` left: the span of such a read, or of `target` itself when the value outlives
/// the function (`local` is false for globals and `static` locals, whose value other code sees).
pub fn live_after(function: &ast::FunctionDef, target: &Stmt, name: &str, local: bool) -> Option<Span> {
    let local = local && !declared_static(&function.body, name);
    if !local {
        return Some(target.span);
    }
    let mut path: Vec<&Stmt> = Vec::new();
    let found = function.body.stmts.iter().any(|s| path_to(s, target, &mut path));
    if !found {
        return Some(target.span);
    }
    let mut da = DefAssign { name, switch_entry: Vec::new(), jumps_kill: false };
    // `path` holds the ancestors, outermost first, then `target`.
    let mut cur = path.pop().expect("target");
    while let Some(anc) = path.pop() {
        match &anc.kind {
            StmtKind::Compound(b) => {
                let idx = b.stmts.iter().position(|s| std::ptr::eq(s, cur)).unwrap_or(b.stmts.len());
                match da.stmts(&b.stmts[idx + 1..], false) {
                    Err(span) => return Some(span),
                    Ok(true) => return None,
                    Ok(false) => {}
                }
            }
            StmtKind::For { cond, step, body, .. } => {
                // The loop runs again: its step, condition and body from the top.
                let mut check = || -> Result<(), Span> {
                    if let Some(st) = step {
                        da.expr(st, false)?;
                    }
                    if let Some(c) = cond {
                        da.expr(c, false)?;
                    }
                    da.stmt(body, false)?;
                    Ok(())
                };
                if let Err(span) = check() {
                    return Some(span);
                }
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { cond, body } => {
                if let Err(span) = da.expr(cond, false).and_then(|_| da.stmt(body, false)) {
                    return Some(span);
                }
            }
            _ => {}
        }
        cur = anc;
    }
    // The end of the function body: the last scan was the body's own statements.
    match da.stmts(function.body.stmts.iter().skip_while(|s| !std::ptr::eq(*s, cur)).skip(1), false) {
        Err(span) => Some(span),
        Ok(_) => None,
    }
}

/// Pushes the statements from `s` down to `target` (both included) onto `path`.
fn path_to<'s>(s: &'s Stmt, target: &Stmt, path: &mut Vec<&'s Stmt>) -> bool {
    path.push(s);
    if std::ptr::eq(s, target) {
        return true;
    }
    let found = match &s.kind {
        StmtKind::Compound(b) => b.stmts.iter().any(|c| path_to(c, target, path)),
        StmtKind::If { then, otherwise, .. } => {
            path_to(then, target, path) || otherwise.as_ref().is_some_and(|o| path_to(o, target, path))
        }
        StmtKind::For { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::Switch { body, .. }
        | StmtKind::Case { body, .. }
        | StmtKind::Default { body }
        | StmtKind::Labeled { body, .. } => path_to(body, target, path),
        StmtKind::Acc { body: Some(b), .. } => path_to(b, target, path),
        _ => false,
    };
    if !found {
        path.pop();
    }
    found
}

fn declared_static(body: &ast::Block, name: &str) -> bool {
    let mut found = false;
    for s in &body.stmts {
        super::walk::each_stmt(s, &mut |st| {
            if let StmtKind::Decl(d) = &st.kind {
                if d.specs.storage == Some(StorageClass::Static) && d.declarators.iter().any(|id| id.declarator.name.as_deref() == Some(name)) {
                    found = true;
                }
            }
        });
    }
    found
}
