//! C99 complex numbers in kernels: `float _Complex`, `double _Complex`, `long double _Complex`
//! (computed as `double _Complex`), `I` and imaginary constants, the operators C defines on
//! them, the functions of <complex.h> below, and GNU C's `__real__`, `__imag__` and `~`
//! (conjugate).
//!
//! The IR has no complex values: a complex value is lowered to its real and imaginary parts
//! ([`Parts`]), two values of the part type (`F32` or `F64`). A complex local is two locals
//! (`z.re`, `z.im`); an element of a complex array is the row of 2 that the array is seen as
//! (the param has the part type and one more dimension, of length 2); a host complex variable
//! the kernel reads is two params (`creal(z)`, `cimag(z)`), one it reduces is two reductions
//! marked as a pair (`ir::ComplexPart`), one it assigns in a single thread two scalar outputs,
//! each written back through its part's address (`(double *)&(z) + 1`: C lays a complex out
//! as an array of two parts).
//!
//! Arithmetic follows C (C11 6.3.1.8, Annex G's mixed forms): a real operand is not made
//! complex first (`r * z` is `(r*re, r*im)`); `*` of two complex values is
//! `(ac - bd) + (ad + bc)i` and `/` is Smith's algorithm, which avoids the overflow of the
//! textbook formula; both agree with C's library routines for finite values. A complex value
//! used where C wants a real one loses its imaginary part, except as a truth value (`z != 0`).
//! C refuses `<` and the integer operators on complex values; so do kernels.
//!
//! Functions: `creal`, `cimag`, `conj`, `cabs` (`hypot`), `carg` (`atan2`), `cproj`, `cexp`,
//! `clog`, `csqrt`, `cpow` (`cexp(w * clog(z))`, as glibc computes it), each with its `f` and
//! `l` forms, and `__builtin_complex` (`CMPLX`). A construct that calls another function of
//! <complex.h> runs on the host (lowering's usual rule for library calls).

use super::expr::{flatten_sum, subscripts};
use super::*;
use crate::ir::{ComplexPart, MathFn};

/// A complex value: its real and imaginary parts, two values of type `ty` (`F32` or `F64`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Parts {
    pub re: Handle<Expr>,
    pub im: Handle<Expr>,
    pub ty: ScalarType,
}

/// An operand of a complex operator: C keeps a real operand real.
#[derive(Clone, Copy, Debug)]
enum Operand {
    Real(Handle<Expr>),
    Complex(Parts),
}

/// Where a complex value lives, to be read or assigned.
#[derive(Clone, Debug)]
pub(super) enum ComplexTarget {
    /// A kernel local, or a host variable the kernel holds in locals (reduction, private,
    /// output): the locals of the real and imaginary parts.
    Locals(Handle<Local>, Handle<Local>),
    /// An element of a complex array: its parts are the elements `[.., 0]` and `[.., 1]` of the
    /// param (`elem` its part format).
    Element { array: ArrayRef, indices: Vec<Handle<Expr>>, elem: ScalarType },
}

/// How a kernel sees a host complex variable: in locals, or read-only as two params.
#[derive(Clone, Copy, Debug)]
pub(super) enum HostComplex {
    Locals(Handle<Local>, Handle<Local>),
    Params(u32, u32),
}

/// The complex functions of <complex.h> a kernel evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ComplexFn {
    Real,
    Imag,
    Abs,
    Arg,
    Conj,
    Proj,
    Exp,
    Log,
    Sqrt,
    Pow,
    /// `__builtin_complex(re, im)`, what `CMPLX` expands to.
    Make,
}

/// A <complex.h> function a kernel evaluates: the function and the part type its `f`/`l`
/// suffix gives (`long double` computes as `double`).
fn complex_function(name: &str) -> Option<(ComplexFn, ScalarType)> {
    let known = |base: &str| {
        Some(match base {
            "creal" => ComplexFn::Real,
            "cimag" => ComplexFn::Imag,
            "cabs" => ComplexFn::Abs,
            "carg" => ComplexFn::Arg,
            "conj" => ComplexFn::Conj,
            "cproj" => ComplexFn::Proj,
            "cexp" => ComplexFn::Exp,
            "clog" => ComplexFn::Log,
            "csqrt" => ComplexFn::Sqrt,
            "cpow" => ComplexFn::Pow,
            _ => return None,
        })
    };
    if name == "__builtin_complex" {
        return Some((ComplexFn::Make, ScalarType::F64));
    }
    if let Some(f) = known(name) {
        return Some((f, ScalarType::F64));
    }
    if let Some(f) = name.strip_suffix('f').and_then(known) {
        return Some((f, ScalarType::F32));
    }
    name.strip_suffix('l').and_then(known).map(|f| (f, ScalarType::F64))
}

/// Whether a kernel may call `name` as a function of <complex.h> it evaluates itself.
pub fn is_complex_function(name: &str) -> bool {
    complex_function(name).is_some()
}

fn arith_name(op: AB) -> &'static str {
    match op {
        AB::Lt => "<",
        AB::Gt => ">",
        AB::Le => "<=",
        AB::Ge => ">=",
        AB::Rem => "%",
        AB::Shl => "<<",
        AB::Shr => ">>",
        AB::BitAnd => "&",
        AB::BitOr => "|",
        AB::BitXor => "^",
        _ => "this operator",
    }
}

impl<'a> KernelBuilder<'a> {
    // -----------------------------------------------------------------------------------------
    // Types

    /// Whether `e` has a complex type. Memoised per node: lowering asks at every node of an
    /// expression, and the answer for a node only depends on the names in scope, which are
    /// the same each time the node is lowered. The key is the node's address and its source
    /// span: a copy of a node (a variable-length dimension in a cloned type) may later lie at
    /// an address another copy had, but then it is a copy of the same source expression.
    pub(in crate::front::lower) fn is_complex(&mut self, e: &ast::Expr) -> bool {
        let key = (e as *const ast::Expr as usize, e.span);
        if let Some(&known) = self.complex_nodes.get(&key) {
            return known;
        }
        let complex = match &e.kind {
            AE::ImagLit { .. } => true,
            AE::Ident(name) => self.name_is_complex(name),
            AE::Index { .. } => {
                let (base, subs) = subscripts(e);
                self.element_is_complex(base, subs.len())
            }
            AE::Unary { op: AU::Neg | AU::Plus | AU::BitNot, operand } => self.is_complex(operand),
            AE::Unary { op: AU::Deref, operand } => self.points_to_complex(operand),
            AE::Binary { op: AB::Add | AB::Sub | AB::Mul | AB::Div, lhs, rhs } => {
                // Both sides first: deep chains are then answered from the memo.
                let l = self.is_complex(lhs);
                let r = self.is_complex(rhs);
                l || r
            }
            AE::Binary { op: AB::Comma, rhs, .. } => self.is_complex(rhs),
            AE::Assign { lhs, .. } => self.is_complex(lhs),
            AE::Conditional { then, otherwise, .. } => {
                let t = self.is_complex(then);
                let o = self.is_complex(otherwise);
                t || o
            }
            AE::Cast { ty, .. } | AE::CompoundLiteral { ty, .. } => {
                matches!(self.sema.declared_type(&ty.specs, &ty.declarator), Ok(CType::Complex(_)))
            }
            AE::Call { callee, .. } => match &callee.kind {
                AE::Ident(name) if !self.is_kernel_name(name) => match complex_function(name) {
                    Some((f, _)) => !matches!(f, ComplexFn::Real | ComplexFn::Imag | ComplexFn::Abs | ComplexFn::Arg),
                    None => matches!(
                        self.sema.lookup(name),
                        Some(Symbol::Function(CType::Function { ret, .. })) if matches!(**ret, CType::Complex(_))
                    ),
                },
                _ => false,
            },
            AE::Member { .. } => matches!(self.member_type(e), Ok(CType::Complex(_))),
            _ => false,
        };
        self.complex_nodes.insert(key, complex);
        complex
    }

    fn name_is_complex(&self, name: &str) -> bool {
        if self.is_kernel_name(name) {
            return self.kernel_complex(name).is_some();
        }
        self.host_var(name).is_some_and(|v| matches!(v.ty, CType::Complex(_)))
    }

    /// Whether `e` (`p`, `p + i`) points to complex numbers.
    fn points_to_complex(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            AE::Binary { op: AB::Add | AB::Sub, lhs, rhs } => self.points_to_complex(lhs) || self.points_to_complex(rhs),
            _ => self.element_is_complex(e, 1),
        }
    }

    /// Whether indexing `base` `n` times reaches a complex element.
    fn element_is_complex(&mut self, base: &ast::Expr, n: usize) -> bool {
        self.complex_array_format(base, n).is_some()
    }

    // -----------------------------------------------------------------------------------------
    // Values

    /// `e` as a complex value (a real one with a zero imaginary part).
    pub(super) fn complex_value(&mut self, e: &ast::Expr) -> R<Parts> {
        match self.operand(e)? {
            Operand::Complex(p) => Ok(p),
            Operand::Real(v) => {
                let ty = self.ty(v);
                let ty = if ty.is_float() { ty } else { ScalarType::F64 };
                Ok(self.real_parts(v, ty))
            }
        }
    }

    /// A real value as the complex value `(v, 0)` of part type `ty`.
    fn real_parts(&mut self, v: Handle<Expr>, ty: ScalarType) -> Parts {
        let re = self.cast(v, ty);
        let im = self.add(ExprKind::ConstFloat(0.0), ty, Span::default());
        Parts { re, im, ty }
    }

    fn operand(&mut self, e: &ast::Expr) -> R<Operand> {
        if !self.is_complex(e) {
            return Ok(Operand::Real(self.expr(e)?));
        }
        let span = e.span;
        let parts = match &e.kind {
            AE::ImagLit { value, single, long_double } => {
                if *long_double {
                    self.warn_once(span, "`long double` constants are computed as `double`");
                }
                let ty = if *single { ScalarType::F32 } else { ScalarType::F64 };
                let re = self.add(ExprKind::ConstFloat(0.0), ty, span);
                let im = self.add(ExprKind::ConstFloat(*value), ty, span);
                Parts { re, im, ty }
            }
            AE::Ident(name) if !self.is_kernel_name(name) => {
                let format = match self.host_var(name).map(|v| v.ty) {
                    Some(CType::Complex(f)) => f,
                    _ => return Err(err(span, format!("`{name}` is not a complex variable"), "check the declaration")),
                };
                self.check_default_none(name, span);
                match self.host_complex(name, format, span, false)? {
                    HostComplex::Locals(re, im) => self.read_complex(&ComplexTarget::Locals(re, im), span),
                    HostComplex::Params(pr, pi) => self.host_complex_parts(pr, pi, span),
                }
            }
            AE::Ident(_) | AE::Index { .. } => {
                let t = self.complex_target(e, false)?;
                self.read_complex(&t, span)
            }
            AE::Unary { op: AU::Plus, operand } => self.complex_value(operand)?,
            AE::Unary { op: AU::Neg, operand } => {
                let p = self.complex_value(operand)?;
                let re = self.add(ExprKind::Unary { op: UnaryOp::Neg, arg: p.re }, p.ty, span);
                let im = self.add(ExprKind::Unary { op: UnaryOp::Neg, arg: p.im }, p.ty, span);
                Parts { re, im, ty: p.ty }
            }
            // GNU C: `~z` is the conjugate.
            AE::Unary { op: AU::BitNot, operand } => {
                let p = self.complex_value(operand)?;
                self.conjugate(p, span)
            }
            AE::Unary { op: AU::Deref, .. } => {
                let t = self.complex_target(e, false)?;
                self.read_complex(&t, span)
            }
            AE::Binary { op: AB::Comma, lhs, rhs } => {
                let mut effects = Vec::new();
                self.expr_stmt(lhs, &mut effects)?;
                self.pending.append(&mut effects);
                self.complex_value(rhs)?
            }
            AE::Binary { op, lhs, rhs } => {
                let a = self.operand(lhs)?;
                let b = self.operand(rhs)?;
                self.complex_arith(*op, a, b, span)?
            }
            AE::Assign { op, lhs, rhs } => self.complex_assignment_value(*op, lhs, rhs, span)?,
            AE::Conditional { cond, then, otherwise } => self.complex_conditional(cond, then, otherwise, span)?,
            AE::Cast { ty, expr } => {
                let Ok(CType::Complex(format)) = self.sema.declared_type(&ty.specs, &ty.declarator) else {
                    return Err(err(span, "this cast is not supported in kernels", "cast only between number types in kernels"));
                };
                let p = self.complex_value(expr)?;
                self.cast_parts(p, format.value_type())
            }
            AE::Call { callee, args } => self.complex_call(callee, args, span)?,
            AE::Member { .. } => {
                return Err(err(span, "complex members of structs are not supported in kernels", "copy the member to a complex variable on the host"));
            }
            _ => return Err(err(span, "this complex expression is not supported in kernels", "compute it on the host, or write it with the parts")),
        };
        Ok(Operand::Complex(parts))
    }

    fn cast_parts(&mut self, p: Parts, ty: ScalarType) -> Parts {
        Parts { re: self.cast(p.re, ty), im: self.cast(p.im, ty), ty }
    }

    fn conjugate(&mut self, p: Parts, span: Span) -> Parts {
        let im = self.add(ExprKind::Unary { op: UnaryOp::Neg, arg: p.im }, p.ty, span);
        Parts { re: p.re, im, ty: p.ty }
    }

    /// A value used more than once, computed once: itself when it is a local, a param or a
    /// constant, else a copy in a new local.
    fn once(&mut self, v: Handle<Expr>, span: Span) -> Handle<Expr> {
        match self.body.exprs[v].kind {
            ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::ConstInt(_) | ExprKind::ConstFloat(_) => v,
            _ => self.snapshot(v, "part", span),
        }
    }

    fn once_parts(&mut self, p: Parts, span: Span) -> Parts {
        Parts { re: self.once(p.re, span), im: self.once(p.im, span), ty: p.ty }
    }

    fn op(&mut self, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>, span: Span) -> Handle<Expr> {
        let ty = self.ty(a);
        self.binary(op, a, b, ty, span)
    }

    fn neg(&mut self, a: Handle<Expr>, span: Span) -> Handle<Expr> {
        let ty = self.ty(a);
        self.add(ExprKind::Unary { op: UnaryOp::Neg, arg: a }, ty, span)
    }

    fn math1(&mut self, func: MathFn, a: Handle<Expr>, span: Span) -> Handle<Expr> {
        let ty = self.ty(a);
        self.add(ExprKind::Math { func, args: vec![a] }, ty, span)
    }

    fn math2(&mut self, func: MathFn, a: Handle<Expr>, b: Handle<Expr>, span: Span) -> Handle<Expr> {
        let ty = self.ty(a);
        self.add(ExprKind::Math { func, args: vec![a, b] }, ty, span)
    }

    /// `a op b` with at least one complex operand, for `+ - * /` (C refuses the others, and
    /// comparisons are [`Self::complex_compare`]).
    fn complex_arith(&mut self, op: AB, a: Operand, b: Operand, span: Span) -> R<Parts> {
        let type_of = |this: &Self, o: &Operand| match o {
            Operand::Real(v) => this.ty(*v),
            Operand::Complex(p) => p.ty,
        };
        let ty = sema::common_type(type_of(self, &a), type_of(self, &b));
        let at = |this: &mut Self, o: Operand| match o {
            Operand::Real(v) => Operand::Real(this.cast(v, ty)),
            Operand::Complex(p) => Operand::Complex(this.cast_parts(p, ty)),
        };
        let (a, b) = (at(self, a), at(self, b));
        use Operand::{Complex as C, Real as Re};
        Ok(match (op, a, b) {
            (AB::Add, C(x), C(y)) => Parts { re: self.op(BinaryOp::Add, x.re, y.re, span), im: self.op(BinaryOp::Add, x.im, y.im, span), ty },
            (AB::Add, Re(r), C(y)) => Parts { re: self.op(BinaryOp::Add, r, y.re, span), im: y.im, ty },
            (AB::Add, C(x), Re(r)) => Parts { re: self.op(BinaryOp::Add, x.re, r, span), im: x.im, ty },
            (AB::Sub, C(x), C(y)) => Parts { re: self.op(BinaryOp::Sub, x.re, y.re, span), im: self.op(BinaryOp::Sub, x.im, y.im, span), ty },
            (AB::Sub, Re(r), C(y)) => Parts { re: self.op(BinaryOp::Sub, r, y.re, span), im: self.neg(y.im, span), ty },
            (AB::Sub, C(x), Re(r)) => Parts { re: self.op(BinaryOp::Sub, x.re, r, span), im: x.im, ty },
            (AB::Mul, C(x), C(y)) => self.complex_mul(x, y, span),
            (AB::Mul, Re(r), C(y)) | (AB::Mul, C(y), Re(r)) => {
                let r = self.once(r, span);
                Parts { re: self.op(BinaryOp::Mul, y.re, r, span), im: self.op(BinaryOp::Mul, y.im, r, span), ty }
            }
            (AB::Div, C(x), Re(r)) => {
                let r = self.once(r, span);
                Parts { re: self.op(BinaryOp::Div, x.re, r, span), im: self.op(BinaryOp::Div, x.im, r, span), ty }
            }
            (AB::Div, Re(r), C(y)) => {
                let x = self.real_parts(r, ty);
                self.complex_div(x, y, span)
            }
            (AB::Div, C(x), C(y)) => self.complex_div(x, y, span),
            (AB::Lt | AB::Gt | AB::Le | AB::Ge, ..) => {
                return Err(err(
                    span,
                    format!("complex numbers cannot be compared with `{}`", arith_name(op)),
                    "compare their real parts (creal), or their magnitudes (cabs)",
                ));
            }
            (op, ..) => {
                return Err(err(
                    span,
                    format!("`{}` is not defined on complex numbers", arith_name(op)),
                    "apply it to the parts (creal, cimag) if that is what you mean",
                ));
            }
        })
    }

    /// `(a + bi)(c + di) = (ac - bd) + (ad + bc)i`.
    fn complex_mul(&mut self, x: Parts, y: Parts, span: Span) -> Parts {
        let (x, y) = (self.once_parts(x, span), self.once_parts(y, span));
        let ac = self.op(BinaryOp::Mul, x.re, y.re, span);
        let bd = self.op(BinaryOp::Mul, x.im, y.im, span);
        let ad = self.op(BinaryOp::Mul, x.re, y.im, span);
        let bc = self.op(BinaryOp::Mul, x.im, y.re, span);
        Parts { re: self.op(BinaryOp::Sub, ac, bd, span), im: self.op(BinaryOp::Add, ad, bc, span), ty: x.ty }
    }

    /// `(a + bi) / (c + di)` by Smith's algorithm: with `|c| >= |d|`, `r = d/c`, `t = c + d*r`,
    /// the result is `((a + b*r) + (b - a*r)i) / t`; otherwise the same with the roles of `c`
    /// and `d` exchanged. Over zero, `copysign(inf, c) * (a + bi)`, as C's library gives
    /// (Annex G: a non-zero number over zero is infinite). Other infinite or NaN operands may
    /// give other non-finite parts than C's library recovers.
    fn complex_div(&mut self, x: Parts, y: Parts, span: Span) -> Parts {
        let (x, y) = (self.once_parts(x, span), self.once_parts(y, span));
        let ty = x.ty;
        let (a, b, c, d) = (x.re, x.im, y.re, y.im);
        let abs_c = self.math1(MathFn::Fabs, c, span);
        let abs_d = self.math1(MathFn::Fabs, d, span);
        let c_wider = self.binary(BinaryOp::Ge, abs_c, abs_d, ScalarType::Bool, span);
        let c_wider = self.once(c_wider, span);
        // |c| >= |d|
        let r1 = self.op(BinaryOp::Div, d, c, span);
        let r1 = self.once(r1, span);
        let dr = self.op(BinaryOp::Mul, d, r1, span);
        let t1 = self.op(BinaryOp::Add, c, dr, span);
        let br = self.op(BinaryOp::Mul, b, r1, span);
        let re1_n = self.op(BinaryOp::Add, a, br, span);
        let re1 = self.op(BinaryOp::Div, re1_n, t1, span);
        let ar = self.op(BinaryOp::Mul, a, r1, span);
        let im1_n = self.op(BinaryOp::Sub, b, ar, span);
        let im1 = self.op(BinaryOp::Div, im1_n, t1, span);
        // |c| < |d|
        let r2 = self.op(BinaryOp::Div, c, d, span);
        let r2 = self.once(r2, span);
        let cr = self.op(BinaryOp::Mul, c, r2, span);
        let t2 = self.op(BinaryOp::Add, cr, d, span);
        let ar2 = self.op(BinaryOp::Mul, a, r2, span);
        let re2_n = self.op(BinaryOp::Add, ar2, b, span);
        let re2 = self.op(BinaryOp::Div, re2_n, t2, span);
        let br2 = self.op(BinaryOp::Mul, b, r2, span);
        let im2_n = self.op(BinaryOp::Sub, br2, a, span);
        let im2 = self.op(BinaryOp::Div, im2_n, t2, span);
        let re = self.add(ExprKind::Select { cond: c_wider, then: re1, otherwise: re2 }, ty, span);
        let im = self.add(ExprKind::Select { cond: c_wider, then: im1, otherwise: im2 }, ty, span);
        let zero = self.float_const(0.0, ty);
        let c_zero = self.binary(BinaryOp::Eq, c, zero, ScalarType::Bool, span);
        let d_zero = self.binary(BinaryOp::Eq, d, zero, ScalarType::Bool, span);
        let over_zero = self.binary(BinaryOp::LogAnd, c_zero, d_zero, ScalarType::Bool, span);
        let over_zero = self.once(over_zero, span);
        let inf = self.float_const(f64::INFINITY, ty);
        let inf = self.math2(MathFn::Copysign, inf, c, span);
        let inf = self.once(inf, span);
        let re_inf = self.op(BinaryOp::Mul, inf, a, span);
        let im_inf = self.op(BinaryOp::Mul, inf, b, span);
        let re = self.add(ExprKind::Select { cond: over_zero, then: re_inf, otherwise: re }, ty, span);
        let im = self.add(ExprKind::Select { cond: over_zero, then: im_inf, otherwise: im }, ty, span);
        Parts { re, im, ty }
    }

    /// `z != 0`, as a truth value.
    fn complex_truth(&mut self, p: Parts, span: Span) -> Handle<Expr> {
        let re = self.truth(p.re);
        let im = self.truth(p.im);
        self.binary(BinaryOp::LogOr, re, im, ScalarType::Bool, span)
    }

    /// A condition (`if`, loops, `!`, `&&`, `||`, `?:`): a complex value is true when either
    /// part is non-zero.
    pub(super) fn condition(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        if self.is_pointer(e) {
            return self.pointer_truth(e);
        }
        if self.is_complex(e) {
            let p = self.complex_value(e)?;
            return Ok(self.complex_truth(p, e.span));
        }
        let c = self.expr(e)?;
        Ok(self.truth(c))
    }

    /// `e` converted to the real type `ty` as C converts it: a complex value becomes its real
    /// part, or for `_Bool` the truth of `e != 0`, both parts counting.
    pub(in crate::front::lower) fn value_as(&mut self, e: &ast::Expr, ty: ScalarType) -> R<Handle<Expr>> {
        if ty == ScalarType::Bool && self.is_pointer(e) {
            return self.pointer_truth(e);
        }
        if ty == ScalarType::Bool && self.is_complex(e) {
            let p = self.complex_value(e)?;
            return Ok(self.complex_truth(p, e.span));
        }
        let v = self.expr(e)?;
        Ok(self.cast(v, ty))
    }

    /// [`Self::condition`] evaluated only sometimes: its value and the statements it needs.
    pub(super) fn condition_deferred(&mut self, e: &ast::Expr) -> R<(Handle<Expr>, Block)> {
        let outer = std::mem::take(&mut self.pending);
        let value = self.condition(e);
        let needed = std::mem::replace(&mut self.pending, outer);
        Ok((value?, needed))
    }

    /// `a == b` or `a != b` with a complex operand (`Some`), or `None` when neither is complex.
    pub(super) fn complex_compare(&mut self, op: AB, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> R<Option<Handle<Expr>>> {
        let (l, r) = (self.is_complex(lhs), self.is_complex(rhs));
        if !l && !r {
            return Ok(None);
        }
        if !matches!(op, AB::Eq | AB::Ne) {
            let a = self.operand(lhs)?;
            let b = self.operand(rhs)?;
            // Reports why (`<` on complex numbers).
            self.complex_arith(op, a, b, span)?;
            return Err(err(span, "this operator is not defined on complex numbers", "apply it to the parts (creal, cimag)"));
        }
        let a = self.complex_value(lhs)?;
        let b = self.complex_value(rhs)?;
        let ty = sema::common_type(a.ty, b.ty);
        let (a, b) = (self.cast_parts(a, ty), self.cast_parts(b, ty));
        let (cmp, join) = if op == AB::Eq { (BinaryOp::Eq, BinaryOp::LogAnd) } else { (BinaryOp::Ne, BinaryOp::LogOr) };
        let re = self.binary(cmp, a.re, b.re, ScalarType::Bool, span);
        let im = self.binary(cmp, a.im, b.im, ScalarType::Bool, span);
        Ok(Some(self.binary(join, re, im, ScalarType::Bool, span)))
    }

    /// `__real__ e` / `__imag__ e`, and `creal`/`cimag` at `e`'s own part type.
    pub(super) fn part_value(&mut self, part: ComplexPart, e: &ast::Expr) -> R<Handle<Expr>> {
        if self.is_complex(e) {
            let p = self.complex_value(e)?;
            return Ok(if part == ComplexPart::Real { p.re } else { p.im });
        }
        let v = self.expr(e)?;
        Ok(match part {
            ComplexPart::Real => v,
            ComplexPart::Imag => {
                let ty = self.ty(v);
                self.zero_of(ty)
            }
        })
    }

    /// `sizeof` of a complex expression: twice its part format's size (`long double _Complex`
    /// is 32 bytes though it computes in `double`). A variable or an element has its declared
    /// format; another expression the part type it computes in.
    pub(super) fn complex_size(&mut self, e: &ast::Expr) -> R<u64> {
        let format = match &e.kind {
            AE::Ident(n) if self.is_kernel_name(n) => self.kernel_complex(n).map(|(_, _, f)| f),
            AE::Ident(n) => match self.host_var(n).map(|v| v.ty) {
                Some(CType::Complex(f)) => Some(f),
                _ => None,
            },
            AE::Index { .. } => {
                let (base, subs) = subscripts(e);
                self.complex_array_format(base, subs.len())
            }
            AE::ImagLit { single: true, .. } => Some(ScalarType::F32),
            AE::ImagLit { long_double: true, .. } => Some(ScalarType::F80),
            _ => None,
        };
        let format = match format {
            Some(f) => f,
            None => self.complex_value(e)?.ty,
        };
        Ok(2 * format.size_bytes() as u64)
    }

    /// The part format of the complex elements of host array `base` indexed `n` times.
    fn complex_array_format(&mut self, base: &ast::Expr, n: usize) -> Option<ScalarType> {
        let ty = match &base.kind {
            // Kernel locals and inlined functions' array parameters hold no complex numbers.
            AE::Ident(name) if self.is_kernel_name(name) => return None,
            AE::Ident(name) => self.host_var(name)?.ty,
            AE::Member { .. } => self.member_type(base).ok()?,
            _ => return None,
        };
        let mut cur = &ty;
        for _ in 0..n {
            cur = match cur {
                CType::Pointer { to, .. } => to,
                CType::Array { elem, .. } => elem,
                _ => return None,
            };
        }
        match cur {
            CType::Complex(f) => Some(*f),
            _ => None,
        }
    }

    /// `c ? a : b` with a complex arm: only the chosen arm is evaluated.
    fn complex_conditional(&mut self, cond: &ast::Expr, then: &ast::Expr, otherwise: &ast::Expr, span: Span) -> R<Parts> {
        let c = self.condition(cond)?;
        let outer = std::mem::take(&mut self.pending);
        let a = self.complex_value(then);
        let mut then_needed = std::mem::take(&mut self.pending);
        let b = self.complex_value(otherwise);
        let mut else_needed = std::mem::replace(&mut self.pending, outer);
        let (a, b) = (a?, b?);
        let ty = sema::common_type(a.ty, b.ty);
        let (a, b) = (self.cast_parts(a, ty), self.cast_parts(b, ty));
        if then_needed.is_empty() && else_needed.is_empty() {
            let re = self.add(ExprKind::Select { cond: c, then: a.re, otherwise: b.re }, ty, span);
            let im = self.add(ExprKind::Select { cond: c, then: a.im, otherwise: b.im }, ty, span);
            return Ok(Parts { re, im, ty });
        }
        let re = self.new_local("chosen.re", ty, LocalKind::Var, span);
        let im = self.new_local("chosen.im", ty, LocalKind::Var, span);
        then_needed.push(Stmt::Assign { local: re, value: a.re });
        then_needed.push(Stmt::Assign { local: im, value: a.im });
        else_needed.push(Stmt::Assign { local: re, value: b.re });
        else_needed.push(Stmt::Assign { local: im, value: b.im });
        self.pending.push(Stmt::If { cond: c, then: then_needed, otherwise: else_needed });
        Ok(Parts { re: self.add(ExprKind::Local(re), ty, span), im: self.add(ExprKind::Local(im), ty, span), ty })
    }

    // -----------------------------------------------------------------------------------------
    // Functions

    /// A call of a <complex.h> function with a real result (`creal`, `cimag`, `cabs`, `carg`),
    /// or `None` when `name` is none of them.
    pub(super) fn real_complex_call(&mut self, name: &str, args: &[ast::Expr], span: Span) -> R<Option<Handle<Expr>>> {
        let Some((f, ty)) = complex_function(name) else { return Ok(None) };
        if !matches!(f, ComplexFn::Real | ComplexFn::Imag | ComplexFn::Abs | ComplexFn::Arg) {
            return Ok(None);
        }
        let [arg] = args else { return Err(err(span, format!("`{name}` takes 1 argument"), "check the call")) };
        // C converts the argument to the function's complex type first.
        let p = self.complex_value(arg)?;
        let p = self.cast_parts(p, ty);
        Ok(Some(match f {
            ComplexFn::Real => p.re,
            ComplexFn::Imag => p.im,
            ComplexFn::Abs => self.math2(MathFn::Hypot, p.re, p.im, span),
            _ => self.math2(MathFn::Atan2, p.im, p.re, span),
        }))
    }

    fn complex_call(&mut self, callee: &ast::Expr, args: &[ast::Expr], span: Span) -> R<Parts> {
        let AE::Ident(name) = &callee.kind else {
            return Err(err(span, "calls through function pointers are not supported in kernels", "call the function by name"));
        };
        let Some((f, ty)) = complex_function(name) else {
            return Err(err(
                span,
                format!("`{name}` returns a complex number, which device functions cannot do"),
                "return the parts through two calls, or inline the computation",
            ));
        };
        let arity = if matches!(f, ComplexFn::Pow | ComplexFn::Make) { 2 } else { 1 };
        if args.len() != arity {
            return Err(err(span, format!("`{name}` takes {arity} argument(s)"), "check the call"));
        }
        if f == ComplexFn::Make {
            // `__builtin_complex(re, im)`: both parts of one real floating type.
            let re = self.expr(&args[0])?;
            let im = self.expr(&args[1])?;
            let ty = sema::common_type(self.ty(re), self.ty(im));
            let ty = if ty.is_float() { ty } else { ScalarType::F64 };
            return Ok(Parts { re: self.cast(re, ty), im: self.cast(im, ty), ty });
        }
        let z = self.complex_value(&args[0])?;
        let z = self.cast_parts(z, ty);
        Ok(match f {
            ComplexFn::Conj => self.conjugate(z, span),
            ComplexFn::Proj => self.complex_proj(z, span),
            ComplexFn::Exp => self.complex_exp(z, span),
            ComplexFn::Log => self.complex_log(z, span),
            ComplexFn::Sqrt => self.complex_sqrt(z, span),
            ComplexFn::Pow => {
                let w = self.complex_value(&args[1])?;
                let w = self.cast_parts(w, ty);
                let log = self.complex_log(z, span);
                let product = self.complex_mul(w, log, span);
                self.complex_exp(product, span)
            }
            ComplexFn::Real | ComplexFn::Imag | ComplexFn::Abs | ComplexFn::Arg | ComplexFn::Make => {
                return Err(err(span, format!("`{name}` does not return a complex number"), "check the call"));
            }
        })
    }

    fn float_const(&mut self, v: f64, ty: ScalarType) -> Handle<Expr> {
        self.add(ExprKind::ConstFloat(v), ty, Span::default())
    }

    /// `e^a (cos b + i sin b)`.
    fn complex_exp(&mut self, z: Parts, span: Span) -> Parts {
        let z = self.once_parts(z, span);
        let m = self.math1(MathFn::Exp, z.re, span);
        let m = self.once(m, span);
        let cos = self.math1(MathFn::Cos, z.im, span);
        let sin = self.math1(MathFn::Sin, z.im, span);
        Parts { re: self.op(BinaryOp::Mul, m, cos, span), im: self.op(BinaryOp::Mul, m, sin, span), ty: z.ty }
    }

    /// `log|z| + i arg z`.
    fn complex_log(&mut self, z: Parts, span: Span) -> Parts {
        let z = self.once_parts(z, span);
        let abs = self.math2(MathFn::Hypot, z.re, z.im, span);
        let re = self.math1(MathFn::Log, abs, span);
        let im = self.math2(MathFn::Atan2, z.im, z.re, span);
        Parts { re, im, ty: z.ty }
    }

    /// The principal square root: with `t = sqrt((|a| + |z|) / 2)`, `t + (b / 2t)i` when
    /// `a >= 0`, else `|b| / 2t + copysign(t, b) i`; `sqrt(±0 + bi)` of a zero `z` keeps the
    /// sign of `b`'s zero.
    fn complex_sqrt(&mut self, z: Parts, span: Span) -> Parts {
        let z = self.once_parts(z, span);
        let ty = z.ty;
        let (a, b) = (z.re, z.im);
        let abs_z = self.math2(MathFn::Hypot, a, b, span);
        let abs_a = self.math1(MathFn::Fabs, a, span);
        let sum = self.op(BinaryOp::Add, abs_a, abs_z, span);
        let half = self.float_const(0.5, ty);
        let halved = self.op(BinaryOp::Mul, sum, half, span);
        let t = self.math1(MathFn::Sqrt, halved, span);
        let t = self.once(t, span);
        let two = self.float_const(2.0, ty);
        let two_t = self.op(BinaryOp::Mul, two, t, span);
        let two_t = self.once(two_t, span);
        let zero = self.float_const(0.0, ty);
        let is_zero = self.binary(BinaryOp::Eq, t, zero, ScalarType::Bool, span);
        let non_negative = self.binary(BinaryOp::Ge, a, zero, ScalarType::Bool, span);
        let b_over = self.op(BinaryOp::Div, b, two_t, span);
        let abs_b = self.math1(MathFn::Fabs, b, span);
        let abs_b_over = self.op(BinaryOp::Div, abs_b, two_t, span);
        let signed_t = self.math2(MathFn::Copysign, t, b, span);
        let re_nz = self.add(ExprKind::Select { cond: non_negative, then: t, otherwise: abs_b_over }, ty, span);
        let im_nz = self.add(ExprKind::Select { cond: non_negative, then: b_over, otherwise: signed_t }, ty, span);
        let zero_re = self.float_const(0.0, ty);
        let re = self.add(ExprKind::Select { cond: is_zero, then: zero_re, otherwise: re_nz }, ty, span);
        let im = self.add(ExprKind::Select { cond: is_zero, then: b, otherwise: im_nz }, ty, span);
        Parts { re, im, ty }
    }

    /// `z`, or `inf + copysign(0, b) i` when a part is infinite.
    fn complex_proj(&mut self, z: Parts, span: Span) -> Parts {
        let z = self.once_parts(z, span);
        let ty = z.ty;
        let inf = self.float_const(f64::INFINITY, ty);
        let abs_a = self.math1(MathFn::Fabs, z.re, span);
        let abs_b = self.math1(MathFn::Fabs, z.im, span);
        let a_inf = self.binary(BinaryOp::Eq, abs_a, inf, ScalarType::Bool, span);
        let b_inf = self.binary(BinaryOp::Eq, abs_b, inf, ScalarType::Bool, span);
        let infinite = self.binary(BinaryOp::LogOr, a_inf, b_inf, ScalarType::Bool, span);
        let infinite = self.once(infinite, span);
        let zero = self.float_const(0.0, ty);
        let signed_zero = self.math2(MathFn::Copysign, zero, z.im, span);
        let inf2 = self.float_const(f64::INFINITY, ty);
        let re = self.add(ExprKind::Select { cond: infinite, then: inf2, otherwise: z.re }, ty, span);
        let im = self.add(ExprKind::Select { cond: infinite, then: signed_zero, otherwise: z.im }, ty, span);
        Parts { re, im, ty }
    }

    // -----------------------------------------------------------------------------------------
    // Places

    /// The locals and part format of the complex local `name` declared in the kernel.
    pub(super) fn kernel_complex(&self, name: &str) -> Option<(Handle<Local>, Handle<Local>, ScalarType)> {
        match self.binding(name) {
            Some(Binding::Complex { re, im, format }) => Some((re, im, format)),
            _ => None,
        }
    }

    /// Declares the complex local `name` (parts of format `format`), with its initial value.
    pub(super) fn declare_complex_local(&mut self, name: &str, format: ScalarType, init: Option<&ast::Initializer>, span: Span, out: &mut Block) -> R<()> {
        let ty = format.value_type();
        let re = self.new_local(&format!("{name}.re"), ty, LocalKind::Var, span);
        let im = self.new_local(&format!("{name}.im"), ty, LocalKind::Var, span);
        if let Some(init) = init {
            let ast::Initializer::Expr(e) = init else {
                return Err(err(span, "brace initializers of complex numbers are not supported in kernels", "initialise it with an expression: re + im * I"));
            };
            let v = self.complex_value(e)?;
            let v = self.cast_parts(v, ty);
            out.append(&mut std::mem::take(&mut self.pending));
            out.push(Stmt::Assign { local: re, value: v.re });
            out.push(Stmt::Assign { local: im, value: v.im });
        }
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), Binding::Complex { re, im, format });
        }
        Ok(())
    }

    /// Where the complex lvalue `e` lives (`writing`: the kernel assigns it).
    pub(super) fn complex_target(&mut self, e: &ast::Expr, writing: bool) -> R<ComplexTarget> {
        let span = e.span;
        match &e.kind {
            AE::Ident(name) => {
                if let Some((re, im, _)) = self.kernel_complex(name) {
                    return Ok(ComplexTarget::Locals(re, im));
                }
                let format = match self.host_var(name).map(|v| v.ty) {
                    Some(CType::Complex(f)) => f,
                    _ => return Err(err(span, format!("`{name}` is not a complex variable"), "assign complex values to complex variables")),
                };
                self.check_default_none(name, span);
                match self.host_complex(name, format, span, writing)? {
                    HostComplex::Locals(re, im) => Ok(ComplexTarget::Locals(re, im)),
                    HostComplex::Params(..) => Err(err(span, format!("`{name}` cannot be assigned here"), "declare it inside the construct")),
                }
            }
            AE::Index { .. } => {
                let (base, subs) = subscripts(e);
                let view = self.array_base(base)?;
                let (array, ndims, elem) = (view.array, view.ndims, view.elem);
                if subs.len() + 1 != ndims {
                    return Err(err(
                        span,
                        format!("`{}` indexes {} of the array's {} dimensions", self.text(span), subs.len(), ndims - 1),
                        "index every dimension of the array (rows of arrays cannot be used as values in kernels)",
                    ));
                }
                let mut indices = Vec::new();
                for ix in subs {
                    indices.push(self.index_expr(ix)?);
                }
                Ok(ComplexTarget::Element { array, indices, elem })
            }
            AE::Unary { op: AU::Deref, operand } => {
                // `*(p + i)`: one term is the pointer, the others sum to the index.
                let mut terms = Vec::new();
                flatten_sum(operand, &mut terms);
                let Some(k) = terms.iter().position(|t| self.is_host_pointer(t)) else {
                    return Err(err(span, "only pointers into arrays can be dereferenced in kernels", "index the array directly: p[i]"));
                };
                let base = terms.remove(k);
                let view = self.array_base(base)?;
                let (array, ndims, elem) = (view.array, view.ndims, view.elem);
                if ndims != 2 {
                    return Err(err(span, "dereferencing a multi-dimensional array is not supported", "index every dimension: a[i][j]"));
                }
                let mut index: Option<Handle<Expr>> = None;
                for t in terms {
                    let h = self.index_expr(t)?;
                    index = Some(match index {
                        None => h,
                        Some(prev) => self.arith(AB::Add, prev, h, t.span)?,
                    });
                }
                let index = index.unwrap_or_else(|| self.int_const(0, ScalarType::I32));
                let indices = vec![index];
                Ok(ComplexTarget::Element { array, indices, elem })
            }
            _ => Err(err(span, "this complex expression cannot be assigned", "assign complex variables and array elements")),
        }
    }

    /// The value of a complex place.
    fn read_complex(&mut self, t: &ComplexTarget, span: Span) -> Parts {
        match t {
            ComplexTarget::Locals(re, im) => {
                let ty = self.body.locals[*re].ty;
                Parts { re: self.add(ExprKind::Local(*re), ty, span), im: self.add(ExprKind::Local(*im), ty, span), ty }
            }
            ComplexTarget::Element { array, indices, elem } => {
                let ty = elem.value_type();
                let part = |this: &mut Self, k: i64| {
                    let mut ix = indices.clone();
                    ix.push(this.int_const(k, ScalarType::I32));
                    this.add(ExprKind::Load { array: *array, indices: ix }, ty, span)
                };
                Parts { re: part(self, 0), im: part(self, 1), ty }
            }
        }
    }

    /// Stores `v` into the complex place `t`, the imaginary part first: both values are of the
    /// place's old parts (`z = z * w` reads both parts for each), so the real part goes through
    /// a copy when its value reads what the first store changes.
    fn store_complex(&mut self, t: &ComplexTarget, v: Parts, span: Span, out: &mut Block) {
        let ty = match t {
            ComplexTarget::Locals(re, _) => self.body.locals[*re].ty,
            ComplexTarget::Element { elem, .. } => elem.value_type(),
        };
        let v = self.cast_parts(v, ty);
        let re = if self.reads_place(v.re, t) {
            let copy = self.new_local("part", ty, LocalKind::Var, span);
            out.push(Stmt::Assign { local: copy, value: v.re });
            self.add(ExprKind::Local(copy), ty, span)
        } else {
            v.re
        };
        match t {
            ComplexTarget::Locals(lr, li) => {
                out.push(Stmt::Assign { local: *li, value: v.im });
                out.push(Stmt::Assign { local: *lr, value: re });
            }
            ComplexTarget::Element { array, indices, .. } => {
                for (k, value) in [(1, v.im), (0, re)] {
                    let mut ix = indices.clone();
                    ix.push(self.int_const(k, ScalarType::I32));
                    out.push(Stmt::Store { array: *array, indices: ix, value, span });
                }
            }
        }
    }

    /// Whether `e` reads the imaginary part of the place `t` (any element of its array, for an
    /// element: the indices may coincide).
    fn reads_place(&self, e: Handle<Expr>, t: &ComplexTarget) -> bool {
        let x = &self.body.exprs[e];
        let here = match (&x.kind, t) {
            (ExprKind::Local(l), ComplexTarget::Locals(_, im)) => l == im,
            (ExprKind::Load { array, .. }, ComplexTarget::Element { array: a, .. }) => array == a,
            _ => false,
        };
        here || x.kind.operands().iter().any(|&o| self.reads_place(o, t))
    }

    /// `lhs = rhs` or `lhs op= rhs` as a statement, with a complex `lhs`.
    pub(super) fn complex_assignment(&mut self, op: Option<AB>, lhs: &ast::Expr, rhs: &ast::Expr, span: Span, out: &mut Block) -> R<()> {
        self.complex_store(op, lhs, rhs, span, out).map(|_| ())
    }

    /// [`Self::complex_assignment`], returning the place it stored to (its subscripts lowered
    /// once: `a[k++] = z` increments `k` once).
    fn complex_store(&mut self, op: Option<AB>, lhs: &ast::Expr, rhs: &ast::Expr, span: Span, out: &mut Block) -> R<ComplexTarget> {
        let t = self.complex_target(lhs, true)?;
        let value = match op {
            None => self.complex_value(rhs)?,
            Some(op) => {
                let current = self.read_complex(&t, lhs.span);
                let r = self.operand(rhs)?;
                self.complex_arith(op, Operand::Complex(current), r, span)?
            }
        };
        out.append(&mut std::mem::take(&mut self.pending));
        self.store_complex(&t, value, span, out);
        Ok(t)
    }

    /// A complex assignment used as a value: stored before the statement, then read back.
    fn complex_assignment_value(&mut self, op: Option<AB>, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> R<Parts> {
        let mut block = Vec::new();
        let t = self.complex_store(op, lhs, rhs, span, &mut block)?;
        self.pending.append(&mut block);
        let p = self.read_complex(&t, span);
        Ok(match t {
            ComplexTarget::Locals(..) => p,
            // The element's value now, whatever later statements store there.
            ComplexTarget::Element { .. } => self.once_parts(p, span),
        })
    }

    /// `x op= rhs` for a real place `x` and a complex `rhs`: computed in complex, then the real
    /// part kept (`x /= z` is not `x / creal(z)`). `None` when `rhs` is real.
    pub(super) fn real_update_by_complex(&mut self, op: AB, current: Handle<Expr>, rhs: &ast::Expr, span: Span) -> R<Option<Handle<Expr>>> {
        if !self.is_complex(rhs) {
            return Ok(None);
        }
        let r = self.operand(rhs)?;
        let p = self.complex_arith(op, Operand::Real(current), r, span)?;
        Ok(Some(p.re))
    }

    /// `__real__ x` or `__imag__ x` as an assignment target.
    pub(super) fn part_target(&mut self, part: ComplexPart, operand: &ast::Expr, span: Span) -> R<Target> {
        if !self.is_complex(operand) {
            if part == ComplexPart::Real {
                return self.target(operand);
            }
            return Err(err(span, "`__imag__` of a real number cannot be assigned", "assign complex variables' parts only"));
        }
        Ok(match self.complex_target(operand, true)? {
            ComplexTarget::Locals(re, im) => Target::Local(if part == ComplexPart::Real { re } else { im }),
            ComplexTarget::Element { array, mut indices, elem } => {
                indices.push(self.int_const(if part == ComplexPart::Real { 0 } else { 1 }, ScalarType::I32));
                Target::Element { array, indices, ty: elem.value_type() }
            }
        })
    }

    /// C allows `++` and `--` on real numbers and pointers only.
    pub(super) fn no_complex_increment(&mut self, operand: &ast::Expr, span: Span) -> R<()> {
        if self.is_complex(operand) {
            return Err(err(span, "`++` and `--` are not defined on complex numbers", "write `z += 1` or `z -= 1`"));
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Host variables

    /// A host complex variable named in the kernel: the locals that stand for it, or its
    /// params (as [`Self::host_scalar`] decides for a real one).
    fn host_complex(&mut self, name: &str, format: ScalarType, span: Span, writing: bool) -> R<HostComplex> {
        if self.reading_bounds && !writing {
            // A parallel loop's bounds read host values at launch, whatever the body does.
            let (pr, pi) = self.complex_params(name, format);
            return Ok(HostComplex::Params(pr, pi));
        }
        if let Some(&h) = self.host_complexes.get(name) {
            return Ok(h);
        }
        let ty = format.value_type();
        let place = match self.treatments.get(name).cloned() {
            Some(Treatment::Private) => {
                let re = self.new_local(&format!("{name}.re"), ty, LocalKind::Private, span);
                let im = self.new_local(&format!("{name}.im"), ty, LocalKind::Private, span);
                HostComplex::Locals(re, im)
            }
            Some(Treatment::FirstPrivate) => {
                let (pr, pi) = self.complex_params(name, format);
                let re = self.new_local(&format!("{name}.re"), ty, LocalKind::FirstPrivate(pr), span);
                let im = self.new_local(&format!("{name}.im"), ty, LocalKind::FirstPrivate(pi), span);
                HostComplex::Locals(re, im)
            }
            Some(Treatment::Reduction(op, rspan)) => {
                if !matches!(op, ReductionOp::Add | ReductionOp::Mul) {
                    return Err(err(rspan, format!("`{}` reductions are not defined on complex numbers", op.symbol()), "reduce complex numbers with + or *"));
                }
                if self.mode == Mode::Single {
                    self.complex_output(name, format, span)?
                } else {
                    if format == ScalarType::F80 {
                        long_double_format(span)?;
                    }
                    let n = self.reductions.len() as u32;
                    let re = self.new_local(&format!("{name}.re"), ty, LocalKind::Reduction(n), span);
                    let im = self.new_local(&format!("{name}.im"), ty, LocalKind::Reduction(n + 1), span);
                    for (k, local, part) in [(0, re, ComplexPart::Real), (1, im, ComplexPart::Imag)] {
                        let target_arg = self.add_arg(HostArg { c_expr: part_address(name, format, k), kind: HostArgKind::ScalarOut(format), size_expr: None });
                        self.reductions.push(Reduction { op, ty, local, target_arg, span: rspan, part: Some(part) });
                    }
                    HostComplex::Locals(re, im)
                }
            }
            _ if self.written.contains(name) => match self.mode {
                Mode::Single | Mode::Function => self.complex_output(name, format, span)?,
                Mode::Parallel if writing => {
                    return Err(err(
                        span,
                        format!("`{name}` is assigned in a parallel loop but is shared by all iterations"),
                        format!("declare it inside the loop, or add private({name}) or reduction(+:{name})"),
                    ));
                }
                Mode::Parallel => {
                    let (pr, pi) = self.complex_params(name, format);
                    HostComplex::Params(pr, pi)
                }
            },
            _ => {
                let (pr, pi) = self.complex_params(name, format);
                HostComplex::Params(pr, pi)
            }
        };
        self.host_complexes.insert(name.to_string(), place);
        Ok(place)
    }

    /// The params holding the parts of host complex variable `name` at launch.
    fn complex_params(&mut self, name: &str, format: ScalarType) -> (u32, u32) {
        let ty = format.value_type();
        let param = |this: &mut Self, k: u32, label: &str| {
            let c_expr = format!("*({})", part_address(name, format, k));
            if let Some(&p) = this.param_keys.get(&c_expr) {
                return p;
            }
            let arg = this.add_arg(HostArg { c_expr: c_expr.clone(), kind: HostArgKind::Float, size_expr: None });
            this.params.push(Param { name: format!("{label}({name})"), kind: ParamKind::Scalar(ty), arg });
            let p = (this.params.len() - 1) as u32;
            this.param_keys.insert(c_expr, p);
            p
        };
        (param(self, 0, "creal"), param(self, 1, "cimag"))
    }

    /// A host complex variable a single-thread kernel assigns: locals starting at its value,
    /// written back part by part.
    fn complex_output(&mut self, name: &str, format: ScalarType, span: Span) -> R<HostComplex> {
        if format == ScalarType::F80 {
            long_double_format(span)?;
        }
        let ty = format.value_type();
        let (pr, pi) = self.complex_params(name, format);
        let re = self.new_local(&format!("{name}.re"), ty, LocalKind::FirstPrivate(pr), span);
        let im = self.new_local(&format!("{name}.im"), ty, LocalKind::FirstPrivate(pi), span);
        for (k, local) in [(0, re), (1, im)] {
            let arg = self.add_arg(HostArg { c_expr: part_address(name, format, k), kind: HostArgKind::ScalarOut(format), size_expr: None });
            self.scalar_outputs.push((local, arg));
        }
        Ok(HostComplex::Locals(re, im))
    }

    /// The value of `name`'s host params as parts (a read-only host complex variable).
    pub(super) fn host_complex_parts(&mut self, pr: u32, pi: u32, span: Span) -> Parts {
        let ty = match self.params[pr as usize].kind {
            ParamKind::Scalar(t) => t,
            ParamKind::Array { .. } | ParamKind::RowTable { .. } => ScalarType::F64,
        };
        Parts { re: self.add(ExprKind::Param(pr), ty, span), im: self.add(ExprKind::Param(pi), ty, span), ty }
    }
}

/// The C address of part `k` (0 real, 1 imaginary) of the host complex variable `name` whose
/// parts have format `format`: C lays a complex number out as an array of its two parts.
fn part_address(name: &str, format: ScalarType, k: u32) -> String {
    let base = format!("({} *)&({name})", format.c_name());
    if k == 0 { base } else { format!("{base} + {k}") }
}
