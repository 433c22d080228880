//! Expressions with side effects inside kernel expressions: assignments (`a[i] = b[i] = 0`,
//! `x = (y = 3) + 1`, `s += c[i] = e`), increments (`a[i++]`), the comma operator, and the
//! operators that evaluate an operand only sometimes (`&&`, `||`, `?:`).
//!
//! An expression's side effects become statements run before the statement that holds it
//! (`pending`, as for inlined calls): C sequences an assignment's store before any use of its
//! value, and leaves unsequenced two effects on one object (undefined behaviour), so running
//! them first in source order gives C's result. An operand that is evaluated only under a
//! condition keeps its statements under that condition: `c && (x = f)` sets `x` only when `c`.

use super::*;

impl<'a> KernelBuilder<'a> {
    /// Lowers `e` where it is evaluated only sometimes: its value, and the statements it needs
    /// run before it, which the caller places under the same condition.
    pub(super) fn expr_deferred(&mut self, e: &ast::Expr) -> R<(Handle<Expr>, Block)> {
        let outer = std::mem::take(&mut self.pending);
        let value = self.expr(e);
        let needed = std::mem::replace(&mut self.pending, outer);
        Ok((value?, needed))
    }

    /// Lowers `e` for a value computed a second time, outside the flow of the statements (a
    /// loop's range, a parallel loop's bounds): `None` when it needs statements run first
    /// (an assignment, an inlined call), which must not run twice.
    pub fn effect_free_expr(&mut self, e: &ast::Expr) -> R<Option<Handle<Expr>>> {
        let (value, needed) = self.expr_deferred(e)?;
        Ok(needed.is_empty().then_some(value))
    }

    /// `value` as it is now, for use after later statements of the same expression: itself
    /// when it reads only params and constants, else a copy in a new local.
    pub(super) fn snapshot(&mut self, value: Handle<Expr>, name: &str, span: Span) -> Handle<Expr> {
        if self.is_uniform(value) {
            return value;
        }
        let ty = self.ty(value);
        let local = self.new_local(name, ty, LocalKind::Var, span);
        self.pending.push(Stmt::Assign { local, value });
        self.add(ExprKind::Local(local), ty, span)
    }

    /// Stores `value` (of the target's type) into `target` before the current statement and
    /// returns what the assignment expression yields: the value stored.
    fn store_before(&mut self, target: Target, value: Handle<Expr>, span: Span) -> Handle<Expr> {
        match target {
            Target::Local(local) => {
                self.pending.push(Stmt::Assign { local, value });
                self.add(ExprKind::Local(local), self.body.locals[local].ty, span)
            }
            Target::Element { array, indices, .. } => {
                let value = self.snapshot(value, "assigned", span);
                self.pending.push(Stmt::Store { array, indices, value, span });
                value
            }
        }
    }

    /// `lhs = rhs` or `lhs op= rhs` used as a value.
    pub(super) fn assignment_value(&mut self, op: Option<AB>, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        let target = self.target(lhs)?;
        let value = match op {
            None => self.value_as(rhs, self.target_type(&target))?,
            Some(op) => {
                let current = self.read_target(&target, lhs.span);
                match self.real_update_by_complex(op, current, rhs, span)? {
                    Some(v) => v,
                    None => {
                        let r = self.expr(rhs)?;
                        self.arith(op, current, r, span)?
                    }
                }
            }
        };
        let value = self.cast(value, self.target_type(&target));
        Ok(self.store_before(target, value, span))
    }

    /// `x++`, `--a[i]`... used as a value: the old value for postfix forms, the new for prefix.
    pub(super) fn increment_value(&mut self, op: AU, operand: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        let target = self.target(operand)?;
        let ty = self.target_type(&target);
        let current = self.read_target(&target, operand.span);
        let postfix = matches!(op, AU::PostInc | AU::PostDec);
        let old = if postfix { self.snapshot(current, "old", span) } else { current };
        let one = self.int_const(1, ScalarType::I32);
        let arith_op = if matches!(op, AU::PreInc | AU::PostInc) { AB::Add } else { AB::Sub };
        let new = self.arith(arith_op, old, one, span)?;
        let new = self.cast(new, ty);
        let stored = self.store_before(target, new, span);
        Ok(if postfix { old } else { stored })
    }

    /// `lhs, rhs`: `lhs` for its effects, then the value of `rhs`.
    pub(super) fn comma(&mut self, lhs: &ast::Expr, rhs: &ast::Expr) -> R<Handle<Expr>> {
        let mut effects = Vec::new();
        self.expr_stmt(lhs, &mut effects)?;
        self.pending.append(&mut effects);
        self.expr(rhs)
    }

    /// `lhs && rhs` (`and`) or `lhs || rhs`: `rhs` is evaluated only when `lhs` does not decide.
    pub(super) fn logical(&mut self, and: bool, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        let a = self.condition(lhs)?;
        let (b, mut needed) = self.condition_deferred(rhs)?;
        let op = if and { BinaryOp::LogAnd } else { BinaryOp::LogOr };
        if needed.is_empty() {
            return Ok(self.binary(op, a, b, ScalarType::Bool, span));
        }
        // flag = a; if (flag) { rhs's statements; flag = b; }   (`if (!flag)` for `||`)
        let flag = self.new_local(if and { "and" } else { "or" }, ScalarType::Bool, LocalKind::Var, span);
        self.pending.push(Stmt::Assign { local: flag, value: a });
        let mut cond = self.add(ExprKind::Local(flag), ScalarType::Bool, span);
        if !and {
            cond = self.add(ExprKind::Unary { op: UnaryOp::Not, arg: cond }, ScalarType::Bool, span);
        }
        needed.push(Stmt::Assign { local: flag, value: b });
        self.pending.push(Stmt::If { cond, then: needed, otherwise: Vec::new() });
        Ok(self.add(ExprKind::Local(flag), ScalarType::Bool, span))
    }

    /// `cond ? then : otherwise`: only the chosen operand is evaluated.
    pub(super) fn conditional(&mut self, cond: &ast::Expr, then: &ast::Expr, otherwise: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        let c = self.condition(cond)?;
        let (a, mut then_needed) = self.expr_deferred(then)?;
        let (b, mut else_needed) = self.expr_deferred(otherwise)?;
        let ty = sema::common_type(self.ty(a), self.ty(b));
        let (a, b) = (self.cast(a, ty), self.cast(b, ty));
        if then_needed.is_empty() && else_needed.is_empty() {
            return Ok(self.add(ExprKind::Select { cond: c, then: a, otherwise: b }, ty, span));
        }
        let chosen = self.new_local("chosen", ty, LocalKind::Var, span);
        then_needed.push(Stmt::Assign { local: chosen, value: a });
        else_needed.push(Stmt::Assign { local: chosen, value: b });
        self.pending.push(Stmt::If { cond: c, then: then_needed, otherwise: else_needed });
        Ok(self.add(ExprKind::Local(chosen), ty, span))
    }
}
