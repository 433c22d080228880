//! Simplified display of IR expressions, for the one-line feedback (`yosegi cc -Minfo`,
//! `yosegi explain --brief`): the expression a reader would write, not the one lowering built.
//! [`super::text`] prints an expression exactly (every cast, every `ll` suffix, full
//! brackets), which is right for `yosegi emit` and the full account; here the same tree is
//! folded and printed with C's precedence:
//!
//! * constants fold (`2 + 3` is `5`); `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1`
//!   are `x`; `x + -3` is `x - 3`;
//! * widening integer casts (`(long long)n` of an `int n`) are dropped: the value is the same;
//!   narrowing casts and casts to or from floating point stay;
//! * `max(0, x)` and `max(x, 0)` are `x` when `x` is known not to be negative (a constant, an
//!   unsigned value, sums, products and quotients of such); [`trip_text`] also drops the clamp
//!   at the top of a trip count, which only says "no iterations when the bounds cross";
//! * constants print without suffixes, brackets only where precedence needs them.
//!
//! Nothing here changes the IR: it reads the arena and builds a small tree of its own.

use super::*;

/// `expr` of a kernel's body, simplified for display.
pub fn simplified_text(body: &Body, params: &[Param], expr: Handle<Expr>) -> String {
    let term = Simplifier { body, params }.term(expr);
    let mut out = String::new();
    term.write(&mut out);
    out
}

/// A loop's trip count (`max(0, end - start)` as lowering writes it), simplified for display:
/// the clamp at the top is dropped (a loop whose bounds cross runs no iterations).
pub fn trip_text(body: &Body, params: &[Param], expr: Handle<Expr>) -> String {
    let mut term = Simplifier { body, params }.term(expr);
    if let Term::Bin(BinaryOp::Max, lhs, rhs) = &term {
        term = match (lhs.as_ref(), rhs.as_ref()) {
            (Term::Int(0), other) | (other, Term::Int(0)) => other.clone(),
            _ => term,
        };
    }
    let mut out = String::new();
    term.write(&mut out);
    out
}

/// A simplified expression.
#[derive(Clone, Debug, PartialEq)]
enum Term {
    Int(i128),
    /// Printed as it is and never bracketed: a name, a load, a call, a cast.
    Atom(String),
    /// Printed as it is, bracketed as an operand: what the simplifier does not look into.
    Other(String),
    /// Non-negative as far as the simplifier knows (an unsigned value).
    NonNegative(Box<Term>),
    Neg(Box<Term>),
    Bin(BinaryOp, Box<Term>, Box<Term>),
}

struct Simplifier<'a> {
    body: &'a Body,
    params: &'a [Param],
}

fn is_integer(t: ScalarType) -> bool {
    !t.is_float() && t != ScalarType::Bool
}

impl Simplifier<'_> {
    fn exact(&self, h: Handle<Expr>) -> String {
        text::expr_text(self.body, self.params, h)
    }

    fn term(&self, h: Handle<Expr>) -> Term {
        if h.index() >= self.body.exprs.len() {
            return Term::Other(self.exact(h));
        }
        let e = &self.body.exprs[h];
        let term = match &e.kind {
            ExprKind::ConstInt(v) if e.ty == ScalarType::U64 => Term::Int(*v as u64 as i128),
            ExprKind::ConstInt(v) => Term::Int(*v as i128),
            ExprKind::Param(_) | ExprKind::Local(_) | ExprKind::Load { .. } | ExprKind::Call { .. } | ExprKind::Math { .. } => {
                Term::Atom(self.exact(h))
            }
            ExprKind::Cast { arg } if arg.index() < self.body.exprs.len() => {
                let from = self.body.exprs[*arg].ty;
                let (wider, same) = (from.size_bytes() < e.ty.size_bytes(), from.size_bytes() == e.ty.size_bytes());
                // Every value of `from` is one of the target type's.
                let keeps_value = is_integer(from)
                    && is_integer(e.ty)
                    && (wider && (e.ty.is_signed() || !from.is_signed()) || same && from.is_signed() == e.ty.is_signed());
                if keeps_value {
                    self.term(*arg)
                } else {
                    // A cast binds as tightly as a unary operator (its operand is bracketed).
                    Term::Atom(self.exact(h))
                }
            }
            ExprKind::Unary { op: UnaryOp::Neg, arg } => match self.term(*arg) {
                Term::Int(v) => Term::Int(-v),
                Term::Neg(inner) => *inner,
                t => Term::Neg(Box::new(t)),
            },
            ExprKind::Binary { op, lhs, rhs } => fold(*op, self.term(*lhs), self.term(*rhs)),
            _ => Term::Other(self.exact(h)),
        };
        if is_integer(e.ty) && !e.ty.is_signed() && !matches!(term, Term::Int(_) | Term::NonNegative(_)) {
            return Term::NonNegative(Box::new(term));
        }
        term
    }
}

/// Whether `t` is known not to be negative.
fn non_negative(t: &Term) -> bool {
    match t {
        Term::Int(v) => *v >= 0,
        Term::NonNegative(_) => true,
        Term::Bin(BinaryOp::Max, a, b) => non_negative(a) || non_negative(b),
        Term::Bin(BinaryOp::Min | BinaryOp::Add | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem, a, b) => {
            non_negative(a) && non_negative(b)
        }
        _ => false,
    }
}

/// `op` over simplified operands, folded where the rules of the module doc say.
fn fold(op: BinaryOp, lhs: Term, rhs: Term) -> Term {
    use BinaryOp::*;
    let fits = |v: i128| i64::MIN as i128 <= v && v <= u64::MAX as i128;
    if let (Term::Int(a), Term::Int(b)) = (&lhs, &rhs) {
        let (a, b) = (*a, *b);
        let folded = match op {
            Add => Some(a + b),
            Sub => Some(a - b),
            Mul => a.checked_mul(b),
            Div if b != 0 => Some(a / b),
            Rem if b != 0 => Some(a % b),
            Max => Some(a.max(b)),
            Min => Some(a.min(b)),
            _ => None,
        };
        if let Some(v) = folded.filter(|&v| fits(v)) {
            return Term::Int(v);
        }
    }
    match (op, &lhs, &rhs) {
        (Add | Sub, x, Term::Int(0)) | (Add, Term::Int(0), x) | (Mul | Div, x, Term::Int(1)) | (Mul, Term::Int(1), x) => {
            return x.clone();
        }
        (Add, x, Term::Int(v)) if *v < 0 => return fold(Sub, x.clone(), Term::Int(-v)),
        (Sub, x, Term::Int(v)) if *v < 0 => return fold(Add, x.clone(), Term::Int(-v)),
        // `(x + a) + b`, `(x - a) + b`, ...: the constants meet.
        (Add | Sub, Term::Bin(inner @ (Add | Sub), x, c), Term::Int(b)) if matches!(c.as_ref(), Term::Int(_)) => {
            let Term::Int(a) = c.as_ref() else { unreachable!() };
            let a = if *inner == Add { *a } else { -a };
            let b = if op == Add { *b } else { -b };
            return fold(Add, x.as_ref().clone(), Term::Int(a + b));
        }
        (Max, Term::Int(0), x) | (Max, x, Term::Int(0)) if non_negative(x) => return x.clone(),
        _ => {}
    }
    Term::Bin(op, Box::new(lhs), Box::new(rhs))
}

/// C's precedence of a binary operator (higher binds tighter); `max`/`min` print as calls.
fn precedence(op: BinaryOp) -> u8 {
    use BinaryOp::*;
    match op {
        Mul | Div | Rem => 13,
        Add | Sub => 12,
        Shl | Shr => 11,
        Lt | Le | Gt | Ge => 10,
        Eq | Ne => 9,
        BitAnd => 8,
        BitXor => 7,
        BitOr => 6,
        LogAnd => 5,
        LogOr => 4,
        Max | Min => 16,
    }
}

impl Term {
    /// How tightly the printed term binds.
    fn binding(&self) -> u8 {
        match self {
            Term::Int(v) if *v < 0 => 14,
            Term::Int(_) | Term::Atom(_) => 16,
            Term::Other(_) => 0,
            Term::NonNegative(t) => t.binding(),
            Term::Neg(_) => 14,
            Term::Bin(op, ..) => precedence(*op),
        }
    }

    fn write_bracketed(&self, bracket: bool, out: &mut String) {
        if bracket {
            out.push('(');
        }
        self.write(out);
        if bracket {
            out.push(')');
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Term::Int(v) => out.push_str(&v.to_string()),
            Term::Atom(s) | Term::Other(s) => out.push_str(s),
            Term::NonNegative(t) => t.write(out),
            Term::Neg(t) => {
                out.push('-');
                t.write_bracketed(t.binding() < 14, out);
            }
            Term::Bin(op @ (BinaryOp::Max | BinaryOp::Min), a, b) => {
                out.push_str(if *op == BinaryOp::Max { "max(" } else { "min(" });
                a.write(out);
                out.push_str(", ");
                b.write(out);
                out.push(')');
            }
            Term::Bin(op, a, b) => {
                let p = precedence(*op);
                a.write_bracketed(a.binding() < p, out);
                out.push(' ');
                out.push_str(op.c_operator().unwrap_or("?"));
                out.push(' ');
                b.write_bracketed(b.binding() <= p, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, scalar_param};

    fn params() -> Vec<Param> {
        vec![scalar_param("n", 0), scalar_param("m", 1)]
    }

    fn ll(b: &mut B, v: i64) -> Handle<Expr> {
        b.add_expr(ExprKind::ConstInt(v), ScalarType::I64)
    }

    /// `max(0ll, (long long)e - start)`, as lowering writes a trip count.
    fn trip(b: &mut B, end: Handle<Expr>, start: i64) -> Handle<Expr> {
        let zero = ll(b, 0);
        let wide = b.cast(end, ScalarType::I64);
        let s = ll(b, start);
        let diff = b.bin(BinaryOp::Sub, wide, s);
        b.bin(BinaryOp::Max, zero, diff)
    }

    #[test]
    fn a_clamped_trip_count_is_its_bound() {
        let mut b = B::new();
        let n = b.param(0);
        let t = trip(&mut b, n, 0);
        assert_eq!(text::expr_text(&b.body, &params(), t), "max(0ll, (long long)n - 0ll)");
        assert_eq!(trip_text(&b.body, &params(), t), "n");
        // Without knowing `n`'s sign, only the trip count drops the clamp.
        assert_eq!(simplified_text(&b.body, &params(), t), "max(0, n)");
    }

    #[test]
    fn constants_meet_and_brackets_follow_precedence() {
        let mut b = B::new();
        let n = b.param(0);
        let one = b.int(1);
        let n1 = b.bin(BinaryOp::Sub, n, one);
        let t = trip(&mut b, n1, 1);
        assert_eq!(text::expr_text(&b.body, &params(), t), "max(0ll, (long long)(n - 1) - 1ll)");
        assert_eq!(trip_text(&b.body, &params(), t), "n - 2");
        let m = b.param(1);
        let sum = b.add(n, m);
        let two = b.int(2);
        let prod = b.mul(sum, two);
        assert_eq!(simplified_text(&b.body, &params(), prod), "(n + m) * 2");
        let diff = b.bin(BinaryOp::Sub, n, sum);
        assert_eq!(simplified_text(&b.body, &params(), diff), "n - (n + m)");
        let left = b.bin(BinaryOp::Sub, n, m);
        let left = b.add(left, one);
        assert_eq!(simplified_text(&b.body, &params(), left), "n - m + 1");
    }

    #[test]
    fn identities_fold() {
        let mut b = B::new();
        let n = b.param(0);
        let zero = b.int(0);
        let one = b.int(1);
        for (op, l, r) in [
            (BinaryOp::Add, n, zero),
            (BinaryOp::Add, zero, n),
            (BinaryOp::Sub, n, zero),
            (BinaryOp::Mul, n, one),
            (BinaryOp::Mul, one, n),
            (BinaryOp::Div, n, one),
        ] {
            let e = b.bin(op, l, r);
            assert_eq!(simplified_text(&b.body, &params(), e), "n", "{op:?}");
        }
        let three = b.int(3);
        let four = b.int(4);
        let seven = b.add(three, four);
        let scaled = b.mul(seven, n);
        assert_eq!(simplified_text(&b.body, &params(), scaled), "7 * n");
        let minus = b.int(-3);
        let e = b.add(n, minus);
        assert_eq!(simplified_text(&b.body, &params(), e), "n - 3");
    }

    #[test]
    fn the_clamp_goes_when_the_value_cannot_be_negative() {
        let mut b = B::new();
        let n = b.add_expr(ExprKind::Param(0), ScalarType::U32);
        let zero = ll(&mut b, 0);
        let wide = b.cast(n, ScalarType::I64);
        let clamp = b.bin(BinaryOp::Max, wide, zero);
        assert_eq!(simplified_text(&b.body, &params(), clamp), "n");
        let five = b.int(5);
        let clamp = b.bin(BinaryOp::Max, zero, five);
        assert_eq!(simplified_text(&b.body, &params(), clamp), "5");
    }

    #[test]
    fn narrowing_and_float_casts_stay() {
        let mut b = B::new();
        let n = b.add_expr(ExprKind::Param(0), ScalarType::I64);
        let narrow = b.cast(n, ScalarType::I32);
        assert_eq!(simplified_text(&b.body, &params(), narrow), "(int)n");
        let m = b.param(1);
        let float = b.cast(m, ScalarType::F64);
        assert_eq!(simplified_text(&b.body, &params(), float), "(double)m");
        let sum = b.add(float, float);
        assert_eq!(simplified_text(&b.body, &params(), sum), "(double)m + (double)m");
    }
}
