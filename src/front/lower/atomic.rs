//! `#pragma acc atomic` (OpenACC 3.3 section 2.12) and the element updates of reductions on
//! arrays, lowered to `Stmt::Atomic`.
//!
//! Forms (x an array element or a host scalar, v any lvalue, expr not reading x):
//! * `read`: `v = x;`   `write`: `x = expr;`
//! * `update`: `x++; x--; ++x; --x; x binop= expr; x = x binop expr; x = expr binop x;` with
//!   binop one of `+ * - / & ^ | << >>` (and, as extensions, `x = fmax(x, expr)`/`fmin`,
//!   `x = x && expr`, `x = x || expr`).
//! * `capture`, one statement: `v = x++; v = x--; v = ++x; v = --x; v = x binop= expr;
//!   v = x = x binop expr; v = x = expr binop x;`
//! * `capture`, a block of two statements: `{v = x; x binop= expr;}`, `{x binop= expr; v = x;}`,
//!   `{v = x; x = x binop expr;}`, `{v = x; x = expr binop x;}`, `{x = x binop expr; v = x;}`,
//!   `{x = expr binop x; v = x;}`, `{v = x; x = expr;}`, and `{v = x; x++;}`, `{++x; v = x;}`
//!   with every increment and decrement.
//!
//! An atomic on a kernel's own local variable (nobody else sees it) is an ordinary update.
//! A captured new value is recomputed from the captured old one with the same conversions the
//! atomic makes (`value::atomic_update`), so it is exactly the value the update stored.

use crate::diag::Span;
use crate::front::ast::{self, AtomicKind, BinaryOp as AB, ExprKind as AE, ReductionOp, StmtKind, UnaryOp as AU};
use crate::front::lower::walk;
use crate::source::SourceSet;
use crate::ir::{ArrayRef, AtomicOp, BinaryOp, Block, Expr, ExprKind, Handle, HostArg, HostArgKind, LocalKind, Param, ParamKind, ScalarType, Stmt};

use super::kernel::{KernelBuilder, R, Target, err};

/// What a capture keeps: nothing, the value before the update, or the value after it.
#[derive(Clone, Copy)]
enum Capture<'e> {
    None,
    Old(&'e ast::Expr),
    New(&'e ast::Expr),
}

/// The operand of an update: an expression, or the 1 of `++`/`--`.
#[derive(Clone, Copy)]
enum Operand<'e> {
    Expr(&'e ast::Expr),
    One,
}

/// `x op= operand`, as read from one statement.
struct Update<'e> {
    x: &'e ast::Expr,
    op: AtomicOp,
    operand: Operand<'e>,
}

const FORMS_HELP: &str = "write x op= expr, x++, x--, ++x, --x, x = x op expr or x = expr op x, with op one of + * - / & ^ | << >>";
const CAPTURE_HELP: &str = "write v = x++, v = ++x, v = x op= expr, v = x = x op expr, or a block {v = x; x op= expr;}, {x op= expr; v = x;}, {v = x; x = expr;}";

fn is_lvalue(e: &ast::Expr) -> bool {
    matches!(&e.kind, AE::Ident(_) | AE::Index { .. } | AE::Unary { op: AU::Deref, .. })
}

/// `v = x` with `x` a variable or an element: `(v, x)`.
fn read_of(e: &ast::Expr) -> Option<(&ast::Expr, &ast::Expr)> {
    match &e.kind {
        AE::Assign { op: None, lhs, rhs } if is_lvalue(rhs) => Some((lhs, rhs)),
        _ => None,
    }
}

/// Whether two expressions name the same variable or element: the same structure, or the same
/// text (casts in subscripts, `a[(int)(x / 2)]`).
type Same<'a> = &'a dyn Fn(&ast::Expr, &ast::Expr) -> bool;

fn same_place(sources: &SourceSet, a: &ast::Expr, b: &ast::Expr) -> bool {
    let key = |e: &ast::Expr| strip_parens(sources.text(e.span).chars().filter(|c| !c.is_whitespace()).collect::<String>());
    walk::same_expr(a, b) || key(a) == key(b)
}

/// `((x))` as `x`: the parentheses a span may keep around a parenthesised operand.
fn strip_parens(mut s: String) -> String {
    while s.starts_with('(') && s.ends_with(')') {
        // Only when the first parenthesis closes at the end: `(a)+(b)` keeps its own.
        let mut depth = 0usize;
        let closes_at_end = s.char_indices().all(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth > 0 || i == s.len() - 1
        });
        if !closes_at_end {
            break;
        }
        s = s[1..s.len() - 1].to_string();
    }
    s
}

/// Whether `e` reads `x` (the atomic's operand must not: that read would not be atomic).
fn reads(e: &ast::Expr, x: &ast::Expr, same: Same<'_>) -> bool {
    let mut found = false;
    walk::expr_tree(e, &mut |s| found |= same(s, x));
    found
}

fn binop(op: AB) -> Option<AtomicOp> {
    Some(match op {
        AB::Add => AtomicOp::Add,
        AB::Sub => AtomicOp::Sub,
        AB::Mul => AtomicOp::Mul,
        AB::Div => AtomicOp::Div,
        AB::BitAnd => AtomicOp::BitAnd,
        AB::BitOr => AtomicOp::BitOr,
        AB::BitXor => AtomicOp::BitXor,
        AB::Shl => AtomicOp::Shl,
        AB::Shr => AtomicOp::Shr,
        AB::LogAnd => AtomicOp::LogAnd,
        AB::LogOr => AtomicOp::LogOr,
        _ => return None,
    })
}

/// `x = expr op x`: the operation with the operand on the left.
fn reversed(op: AtomicOp) -> AtomicOp {
    match op {
        AtomicOp::Sub => AtomicOp::SubRev,
        AtomicOp::Div => AtomicOp::DivRev,
        AtomicOp::Shl => AtomicOp::ShlRev,
        AtomicOp::Shr => AtomicOp::ShrRev,
        // + * & | ^ && || commute.
        other => other,
    }
}

/// An update statement's parts, or why it is not one.
fn update_parts<'e>(e: &'e ast::Expr, same: Same<'_>) -> Result<Update<'e>, (Span, &'static str)> {
    let unsupported = (e.span, "this atomic update form is not supported");
    let upd = |x, op, operand| Ok(Update { x, op, operand });
    match &e.kind {
        AE::Assign { op: Some(op), lhs, rhs } => match binop(*op) {
            Some(a) if !matches!(a, AtomicOp::LogAnd | AtomicOp::LogOr) => upd(lhs, a, Operand::Expr(rhs)),
            _ => Err(unsupported),
        },
        AE::Unary { op: AU::PostInc | AU::PreInc, operand } => upd(operand, AtomicOp::Add, Operand::One),
        AE::Unary { op: AU::PostDec | AU::PreDec, operand } => upd(operand, AtomicOp::Sub, Operand::One),
        AE::Assign { op: None, lhs, rhs } => match &rhs.kind {
            AE::Binary { op, lhs: a, rhs: b } if same(a, lhs) => match binop(*op) {
                Some(o) => upd(lhs, o, Operand::Expr(b)),
                None => Err(unsupported),
            },
            AE::Binary { op, lhs: a, rhs: b } if same(b, lhs) => match binop(*op) {
                Some(o) => upd(lhs, reversed(o), Operand::Expr(a)),
                None => Err(unsupported),
            },
            AE::Call { callee, args } if args.len() == 2 && (same(&args[0], lhs) || same(&args[1], lhs)) => {
                let other = if same(&args[0], lhs) { &args[1] } else { &args[0] };
                match &callee.kind {
                    AE::Ident(f) if matches!(f.as_str(), "fmax" | "fmaxf") => upd(lhs, AtomicOp::Max, Operand::Expr(other)),
                    AE::Ident(f) if matches!(f.as_str(), "fmin" | "fminf") => upd(lhs, AtomicOp::Min, Operand::Expr(other)),
                    _ => Err(unsupported),
                }
            }
            _ => Err(unsupported),
        },
        _ => Err(unsupported),
    }
}

impl KernelBuilder<'_> {
    pub(super) fn atomic(&mut self, kind: AtomicKind, body: &ast::Stmt, out: &mut Block) -> R<()> {
        let sources = self.sources();
        let key_same = |a: &ast::Expr, b: &ast::Expr| same_place(sources, a, b);
        let same: Same<'_> = &key_same;
        if let (AtomicKind::Capture, StmtKind::Compound(block)) = (kind, &body.kind) {
            return self.structured_capture(&block.stmts, body.span, out);
        }
        let e = match &body.kind {
            StmtKind::Expr(Some(e)) => e,
            _ => {
                let help = if kind == AtomicKind::Capture { CAPTURE_HELP } else { "write a single expression statement such as x[i] += v" };
                return Err(err(body.span, "this atomic form is not supported", help));
            }
        };
        match kind {
            AtomicKind::Read => {
                let AE::Assign { op: None, lhs: v, rhs: x } = &e.kind else {
                    return Err(err(e.span, "atomic read needs `v = x`", "write v = x[i]; with v and x[i] variables or array elements"));
                };
                if !is_lvalue(x) {
                    return Err(err(x.span, "atomic read needs a variable or an array element on the right", "write v = x[i];"));
                }
                let t = self.atomic_target(x)?;
                let value = self.read_target(&t, x.span);
                let vt = self.target(v)?;
                self.store(vt, value, e.span, out);
                Ok(())
            }
            AtomicKind::Write => {
                let AE::Assign { op: None, lhs: x, rhs } = &e.kind else {
                    return Err(err(e.span, "atomic write needs `x = expr`", "write x[i] = value"));
                };
                self.check_operand(rhs, x)?;
                self.emit_update(x, AtomicOp::Write, Operand::Expr(rhs), Capture::None, e.span, out)
            }
            AtomicKind::Update => {
                let u = update_parts(e, same).map_err(|(s, m)| err(s, m, FORMS_HELP))?;
                self.emit_checked(&u, Capture::None, e.span, out)
            }
            AtomicKind::Capture => {
                let bad = || err(e.span, "this atomic capture form is not supported", CAPTURE_HELP);
                let AE::Assign { op: None, lhs: v, rhs } = &e.kind else { return Err(bad()) };
                let (u, capture) = match &rhs.kind {
                    AE::Unary { op: AU::PostInc | AU::PostDec, .. } => (update_parts(rhs, same), Capture::Old(v)),
                    AE::Unary { op: AU::PreInc | AU::PreDec, .. } => (update_parts(rhs, same), Capture::New(v)),
                    AE::Assign { op: Some(_), .. } => (update_parts(rhs, same), Capture::New(v)),
                    // `v = x = x op expr`: an update, not `v = x = expr`.
                    AE::Assign { op: None, .. } => match update_parts(rhs, same) {
                        Ok(u) if u.op != AtomicOp::Write => (Ok(u), Capture::New(v)),
                        _ => return Err(bad()),
                    },
                    _ => return Err(bad()),
                };
                let u = u.map_err(|(s, m)| err(s, m, FORMS_HELP))?;
                self.emit_checked(&u, capture, e.span, out)
            }
        }
    }

    /// `{v = x; update x;}`, `{update x; v = x;}`, `{v = x; x = expr;}`.
    fn structured_capture(&mut self, stmts: &[ast::Stmt], span: Span, out: &mut Block) -> R<()> {
        let bad = |s: Span| err(s, "this structured atomic capture is not supported", CAPTURE_HELP);
        let sources = self.sources();
        let key_same = |a: &ast::Expr, b: &ast::Expr| same_place(sources, a, b);
        let same: Same<'_> = &key_same;
        let exprs: Vec<&ast::Expr> = stmts
            .iter()
            .filter(|s| !matches!(s.kind, StmtKind::Expr(None)))
            .map(|s| match &s.kind {
                StmtKind::Expr(Some(e)) => Ok(e),
                _ => Err(bad(s.span)),
            })
            .collect::<R<_>>()?;
        let [first, second] = exprs[..] else { return Err(bad(span)) };
        // `{v = x; x op= expr;}` or the swap `{v = x; x = expr;}`.
        if let Some((v, x)) = read_of(first) {
            if let Ok(u) = update_parts(second, same) {
                if same(u.x, x) {
                    return self.emit_checked(&u, Capture::Old(v), span, out);
                }
            }
            if let AE::Assign { op: None, lhs: x2, rhs } = &second.kind {
                if same(x2, x) {
                    self.check_operand(rhs, x)?;
                    return self.emit_update(x, AtomicOp::Write, Operand::Expr(rhs), Capture::Old(v), span, out);
                }
            }
        }
        // `{x op= expr; v = x;}`.
        if let Some((v, x)) = read_of(second) {
            if let Ok(u) = update_parts(first, same) {
                if same(u.x, x) {
                    return self.emit_checked(&u, Capture::New(v), span, out);
                }
            }
        }
        Err(bad(span))
    }

    fn check_operand(&self, operand: &ast::Expr, x: &ast::Expr) -> R<()> {
        let sources = self.sources();
        if reads(operand, x, &|a: &ast::Expr, b: &ast::Expr| same_place(sources, a, b)) {
            return Err(err(
                operand.span,
                format!("the operand of this atomic reads `{}`, the variable it updates", self.text(x.span)),
                "compute the operand into a variable first; an atomic reads its variable once",
            ));
        }
        Ok(())
    }

    fn emit_checked(&mut self, u: &Update<'_>, capture: Capture<'_>, span: Span, out: &mut Block) -> R<()> {
        if let Operand::Expr(e) = u.operand {
            self.check_operand(e, u.x)?;
        }
        self.emit_update(u.x, u.op, u.operand, capture, span, out)
    }

    /// `x op= operand` indivisibly, keeping the old or new value in `v` for a capture.
    fn emit_update(&mut self, x: &ast::Expr, op: AtomicOp, operand: Operand<'_>, capture: Capture<'_>, span: Span, out: &mut Block) -> R<()> {
        let target = self.atomic_target(x)?;
        let ty = self.target_type(&target);
        let mut value = self.atomic_operand(op, ty, operand, span)?;
        match target {
            Target::Element { array, indices, .. } => {
                if let ArrayRef::Param(p) = array
                    && matches!(self.params[p as usize].kind, ParamKind::Array { elem: ScalarType::F80, .. })
                {
                    return Err(err(
                        x.span,
                        "atomic updates of `long double` elements are not supported",
                        "use an array of `double`, which the device updates atomically",
                    ));
                }
                // A captured new value is recomputed from the old one: the operand is read once.
                if matches!(capture, Capture::New(_)) && !self.is_simple(value) {
                    let vty = self.ty(value);
                    let tmp = self.new_local("atomic_operand", vty, LocalKind::Var, span);
                    out.push(Stmt::Assign { local: tmp, value });
                    value = self.add(ExprKind::Local(tmp), vty, span);
                }
                let old = match capture {
                    Capture::None => None,
                    _ => Some(self.new_local("atomic_old", ty, LocalKind::Var, span)),
                };
                out.push(Stmt::Atomic { op, array, indices, value, capture: old, span });
                if let Some(old) = old {
                    let old_value = self.add(ExprKind::Local(old), ty, span);
                    let (v, result) = match capture {
                        Capture::Old(v) => (v, old_value),
                        Capture::New(v) => (v, self.combine(op, ty, old_value, value, span)),
                        Capture::None => unreachable!("no capture local without a capture"),
                    };
                    let vt = self.target(v)?;
                    self.store(vt, result, span, out);
                }
                Ok(())
            }
            Target::Local(l) => {
                // The thread's own variable: an ordinary update.
                let cur = self.add(ExprKind::Local(l), ty, span);
                if let Capture::Old(v) = capture {
                    let vt = self.target(v)?;
                    self.store(vt, cur, span, out);
                }
                let next = self.combine(op, ty, cur, value, span);
                out.push(Stmt::Assign { local: l, value: next });
                if let Capture::New(v) = capture {
                    let now = self.add(ExprKind::Local(l), ty, span);
                    let vt = self.target(v)?;
                    self.store(vt, now, span, out);
                }
                Ok(())
            }
        }
    }

    fn is_simple(&self, h: Handle<Expr>) -> bool {
        matches!(self.body.exprs[h].kind, ExprKind::ConstInt(_) | ExprKind::ConstFloat(_) | ExprKind::Local(_) | ExprKind::Param(_))
    }

    /// The operand, converted to the type the update computes in (`AtomicOp::compute_type`),
    /// or to the element's type where that gives the same result (then the GPU's own atomic
    /// instructions apply).
    fn atomic_operand(&mut self, op: AtomicOp, elem: ScalarType, operand: Operand<'_>, span: Span) -> R<Handle<Expr>> {
        let h = match operand {
            Operand::Expr(e) => self.expr(e)?,
            Operand::One => self.int_const(1, ScalarType::I32),
        };
        let vty = self.ty(h);
        let integer_only = matches!(
            op.binary(),
            Some(BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr)
        );
        if integer_only && (elem.is_float() || vty.is_float()) {
            return Err(err(span, "this atomic operator needs integer operands", "use + - * / on floating-point values"));
        }
        let ct = op.compute_type(elem, vty);
        // Wrapping operations give the same low bits whatever the integer width they run in.
        let modular = matches!(
            op,
            AtomicOp::Add | AtomicOp::Sub | AtomicOp::SubRev | AtomicOp::Mul | AtomicOp::BitAnd | AtomicOp::BitOr | AtomicOp::BitXor
        ) && !elem.is_float()
            && !vty.is_float();
        Ok(match op {
            AtomicOp::Write => self.cast(h, elem),
            AtomicOp::LogAnd | AtomicOp::LogOr => h,
            _ if ct == elem || modular => self.cast(h, elem),
            AtomicOp::Shl | AtomicOp::Shr => self.cast(h, sema_promote(vty)),
            _ => self.cast(h, ct),
        })
    }

    /// The value `op` leaves in an element of type `ty` holding `cur` (the IR form of
    /// `value::atomic_update`).
    fn combine(&mut self, op: AtomicOp, ty: ScalarType, cur: Handle<Expr>, v: Handle<Expr>, span: Span) -> Handle<Expr> {
        let Some(bin) = op.binary() else {
            return self.cast(v, ty);
        };
        if matches!(bin, BinaryOp::LogAnd | BinaryOp::LogOr) {
            let (a, b) = (self.truth(cur), self.truth(v));
            let r = self.binary(bin, a, b, ScalarType::Bool, span);
            return self.cast(r, ty);
        }
        let vty = self.ty(v);
        let ct = op.compute_type(ty, vty);
        let (a, b) = (self.cast(cur, ct), self.cast(v, ct));
        let (a, b) = if op.reversed() { (b, a) } else { (a, b) };
        let r = self.binary(bin, a, b, ct, span);
        self.cast(r, ty)
    }

    /// The target of an atomic: a host scalar is updated in place, through its address (a
    /// one-element array param), so every iteration sees the others' updates.
    pub(super) fn atomic_target(&mut self, lhs: &ast::Expr) -> R<Target> {
        if self.is_complex(lhs) {
            return Err(err(
                lhs.span,
                "atomic updates of complex numbers are not supported",
                "update each part under its own atomic (`__real__ z += ...`), or use reduction(+:z)",
            ));
        }
        if let AE::Ident(name) = &lhs.kind {
            if !self.is_kernel_name(name) && !self.host_locals.contains_key(name.as_str()) && !self.treatments.contains_key(name.as_str()) {
                // The variable's own format: a `long double` is refused below, not updated as
                // a `double`.
                if let Some(ty) = self.host_var(name).and_then(|v| v.ty.element_scalar()) {
                    self.check_default_none(name, lhs.span);
                    let key = format!("&({name})");
                    let p = match self.param_keys.get(&key) {
                        Some(&p) => p,
                        None => {
                            let arg = self.add_arg(HostArg { c_expr: key.clone(), kind: HostArgKind::Pointer, size_expr: Some(format!("sizeof({name})")) });
                            self.params.push(Param {
                                name: key.clone(),
                                kind: ParamKind::Array { elem: ty, dims: vec![None], restrict: false, read_only: false },
                                arg,
                            });
                            let p = (self.params.len() - 1) as u32;
                            self.param_keys.insert(key, p);
                            p
                        }
                    };
                    let zero = self.int_const(0, ScalarType::I32);
                    return Ok(Target::Element { array: ArrayRef::Param(p), indices: vec![zero], ty });
                }
            }
        }
        self.reduction_update_target = true;
        let t = self.target(lhs);
        self.reduction_update_target = false;
        t
    }

    /// `a[i] op= e` where `a` is under `reduction(op:a)` (a whole array or a section): the
    /// update goes atomically into the array itself, which starts from its value at the
    /// construct, so the result is the sequential one. The statement must update with the
    /// clause's operator; `None` when `e` does not write such an array.
    pub(super) fn array_reduction_update(&mut self, e: &ast::Expr, out: &mut Block) -> Option<R<()>> {
        let written = match &e.kind {
            AE::Assign { lhs, .. } => lhs,
            AE::Unary { op: AU::PostInc | AU::PreInc | AU::PostDec | AU::PreDec, operand } => operand,
            _ => return None,
        };
        let (name, rop, _) = self.array_reduction_of(written)?;
        let sources = self.sources();
        let key_same = |a: &ast::Expr, b: &ast::Expr| same_place(sources, a, b);
        let same: Same<'_> = &key_same;
        let u = match update_parts(e, same) {
            Ok(u) => u,
            Err(_) => {
                return Some(Err(err(
                    e.span,
                    format!("`{name}` is under a `{}` reduction, and this statement is not an update of its elements", rop.symbol()),
                    format!("update the elements with `{name}[i] {}`", rop_form(rop)),
                )));
            }
        };
        let fits = matches!(
            (rop, u.op),
            (ReductionOp::Add, AtomicOp::Add | AtomicOp::Sub)
                | (ReductionOp::Mul, AtomicOp::Mul)
                | (ReductionOp::Max, AtomicOp::Max)
                | (ReductionOp::Min, AtomicOp::Min)
                | (ReductionOp::BitAnd, AtomicOp::BitAnd)
                | (ReductionOp::BitOr, AtomicOp::BitOr)
                | (ReductionOp::BitXor, AtomicOp::BitXor)
                | (ReductionOp::LogAnd, AtomicOp::LogAnd)
                | (ReductionOp::LogOr, AtomicOp::LogOr)
        );
        if !fits {
            return Some(Err(err(
                e.span,
                format!("this update of `{name}` does not use the operator of its `{}` reduction", rop.symbol()),
                format!("update the elements with `{name}[i] {}`", rop_form(rop)),
            )));
        }
        Some(self.emit_checked(&u, Capture::None, e.span, out))
    }

    /// The array-reduction clause that covers the array `e` indexes, if any.
    fn array_reduction_of(&self, e: &ast::Expr) -> Option<(String, ReductionOp, Span)> {
        let mut cur = e;
        while let AE::Index { base, .. } = &cur.kind {
            cur = base;
        }
        let AE::Ident(name) = &cur.kind else { return None };
        if self.is_kernel_name(name) {
            return None;
        }
        match self.treatments.get(name.as_str()) {
            Some(super::kernel::Treatment::ArrayReduction(op, span)) => Some((name.clone(), *op, *span)),
            _ => None,
        }
    }

    /// Refuses a read or write of a reduction array outside its updates.
    pub(super) fn check_array_reduction_use(&self, base: &ast::Expr, span: Span) -> R<()> {
        if let Some((name, op, _)) = self.array_reduction_of(base) {
            return Err(err(
                span,
                format!("`{name}` is under a `{}` reduction and is used here other than by an update of its elements", op.symbol()),
                format!("inside the loop only update it (`{name}[i] {}`); read it after the loop", rop_form(op)),
            ));
        }
        Ok(())
    }
}

fn sema_promote(t: ScalarType) -> ScalarType {
    crate::front::sema::promote(t)
}


fn rop_form(op: ReductionOp) -> &'static str {
    match op {
        ReductionOp::Add => "+= v",
        ReductionOp::Mul => "*= v",
        ReductionOp::Max => "= fmax(a[i], v)",
        ReductionOp::Min => "= fmin(a[i], v)",
        ReductionOp::BitAnd => "&= v",
        ReductionOp::BitOr => "|= v",
        ReductionOp::BitXor => "^= v",
        ReductionOp::LogAnd => "= a[i] && v",
        ReductionOp::LogOr => "= a[i] || v",
    }
}
