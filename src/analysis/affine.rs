//! Recognition of affine index expressions.
//!
//! An index is *affine* when it is a sum of integer multiples of monomials, each monomial a
//! product of scalar params and at most one loop variable: `i*n + j`, `(k+1)*rows*cols + c`,
//! `2*i - 1`. Such a form is what the section computation ([`super::access`]) can bound with
//! interval arithmetic and what the dependence test ([`super::dependence`]) can compare.
//! Anything else is *irregular*: a load in the index (`p[colidx[k]]`), a product of loop
//! variables (`i*i`), division or remainder (`i/2`, `i%n`), float arithmetic, calls.
//!
//! Loop variables are locals of kind [`LocalKind::LoopIndex`] (parallel-dim variables and the
//! variables of sequential loops). Other locals are irregular: we do not propagate
//! single-assignment locals (`int row = i*n; a[row + j]`), which keeps the recogniser local to
//! one expression tree at the cost of treating such indices as irregular (the sections become
//! `Whole`, which is safe). Casts between integer types are looked through: like C compilers,
//! we assume index arithmetic does not overflow.

use crate::ir::{BinaryOp, Body, Expr, ExprKind, Handle, Local, LocalKind, UnaryOp};

/// A product of scalar params (sorted, with repetition: `n*n` is `[n, n]`) and at most one loop
/// variable. The empty monomial is the constant `1`, which [`Affine`] keeps in `constant`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Monomial {
    pub params: Vec<u32>,
    pub var: Option<Handle<Local>>,
}

impl Monomial {
    fn is_unit(&self) -> bool {
        self.params.is_empty() && self.var.is_none()
    }
    fn times(&self, other: &Monomial) -> Option<Monomial> {
        let var = match (self.var, other.var) {
            (Some(_), Some(_)) => return None,
            (a, b) => a.or(b),
        };
        let mut params = self.params.clone();
        params.extend_from_slice(&other.params);
        params.sort_unstable();
        Some(Monomial { params, var })
    }
}

/// `constant + sum(coeff * monomial)`, normalised: terms sorted by monomial, each monomial at
/// most once, no zero coefficients, no unit monomial (that is `constant`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Affine {
    pub constant: i64,
    pub terms: Vec<(i64, Monomial)>,
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine { constant: c, terms: Vec::new() }
    }
    pub fn monomial(m: Monomial) -> Affine {
        Affine { constant: 0, terms: vec![(1, m)] }.normalised()
    }

    fn normalised(mut self) -> Affine {
        let mut merged: Vec<(i64, Monomial)> = Vec::new();
        self.terms.sort_by(|a, b| a.1.cmp(&b.1));
        for (c, m) in self.terms {
            if m.is_unit() {
                self.constant = self.constant.wrapping_add(c);
            } else if let Some(last) = merged.last_mut().filter(|l| l.1 == m) {
                last.0 = last.0.wrapping_add(c);
            } else {
                merged.push((c, m));
            }
        }
        merged.retain(|(c, _)| *c != 0);
        Affine { constant: self.constant, terms: merged }
    }

    pub fn add(&self, other: &Affine) -> Affine {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        Affine { constant: self.constant.wrapping_add(other.constant), terms }.normalised()
    }
    pub fn scale(&self, k: i64) -> Affine {
        Affine {
            constant: self.constant.wrapping_mul(k),
            terms: self.terms.iter().map(|(c, m)| (c.wrapping_mul(k), m.clone())).collect(),
        }
        .normalised()
    }
    pub fn sub(&self, other: &Affine) -> Affine {
        self.add(&other.scale(-1))
    }
    /// The product, when it is still affine (no monomial with two loop variables).
    pub fn mul(&self, other: &Affine) -> Option<Affine> {
        let mut terms = Vec::new();
        let unit = Monomial { params: Vec::new(), var: None };
        let lhs: Vec<(i64, Monomial)> =
            std::iter::once((self.constant, unit.clone())).chain(self.terms.iter().cloned()).collect();
        let rhs: Vec<(i64, Monomial)> =
            std::iter::once((other.constant, unit)).chain(other.terms.iter().cloned()).collect();
        for (a, ma) in &lhs {
            for (b, mb) in &rhs {
                let c = a.wrapping_mul(*b);
                if c == 0 {
                    continue;
                }
                terms.push((c, ma.times(mb)?));
            }
        }
        Some(Affine { constant: 0, terms }.normalised())
    }

    /// The loop variables the form mentions, in order, without repetition.
    pub fn vars(&self) -> Vec<Handle<Local>> {
        let mut vars: Vec<Handle<Local>> = self.terms.iter().filter_map(|(_, m)| m.var).collect();
        vars.sort();
        vars.dedup();
        vars
    }

    /// The terms without a loop variable (constant and param products) as their own form.
    pub fn invariant_part(&self) -> Affine {
        Affine {
            constant: self.constant,
            terms: self.terms.iter().filter(|(_, m)| m.var.is_none()).cloned().collect(),
        }
    }

    /// The terms mentioning `var`, with `var` removed from the monomials: its coefficient.
    pub fn coefficient_of(&self, var: Handle<Local>) -> Affine {
        Affine {
            constant: 0,
            terms: self
                .terms
                .iter()
                .filter(|(_, m)| m.var == Some(var))
                .map(|(c, m)| (*c, Monomial { params: m.params.clone(), var: None }))
                .collect(),
        }
        .normalised()
    }

    /// `Some(c)` when the form is the plain constant `c`.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }
}

/// The affine form of `expr`, or `None` when it is irregular (see the module doc).
pub fn affine_of(body: &Body, expr: Handle<Expr>) -> Option<Affine> {
    if expr.index() >= body.exprs.len() {
        return None;
    }
    let e = &body.exprs[expr];
    if e.ty.is_float() {
        return None;
    }
    match &e.kind {
        ExprKind::ConstInt(v) => Some(Affine::constant(*v)),
        ExprKind::Param(n) => Some(Affine::monomial(Monomial { params: vec![*n], var: None })),
        ExprKind::Local(l) => {
            if l.index() >= body.locals.len() {
                return None;
            }
            let local = &body.locals[*l];
            (local.kind == LocalKind::LoopIndex && local.array_dims.is_none())
                .then(|| Affine::monomial(Monomial { params: Vec::new(), var: Some(*l) }))
        }
        ExprKind::Cast { arg } => {
            if body.exprs[*arg].ty.is_float() {
                None
            } else {
                affine_of(body, *arg)
            }
        }
        ExprKind::Unary { op: UnaryOp::Neg, arg } => Some(affine_of(body, *arg)?.scale(-1)),
        ExprKind::Binary { op, lhs, rhs } => {
            let l = affine_of(body, *lhs)?;
            let r = affine_of(body, *rhs)?;
            match op {
                BinaryOp::Add => Some(l.add(&r)),
                BinaryOp::Sub => Some(l.sub(&r)),
                BinaryOp::Mul => l.mul(&r),
                BinaryOp::Shl => {
                    let k = r.as_constant().filter(|k| (0..62).contains(k))?;
                    Some(l.scale(1i64 << k))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::B;
    use crate::ir::ScalarType;

    fn var(v: Handle<Local>) -> Monomial {
        Monomial { params: Vec::new(), var: Some(v) }
    }

    #[test]
    fn constants_params_and_loop_vars() {
        let mut b = B::new();
        let i = b.loop_var("i");
        let c = b.int(7);
        let n = b.param(0);
        let ie = b.local(i);
        assert_eq!(affine_of(&b.body, c), Some(Affine::constant(7)));
        assert_eq!(affine_of(&b.body, n), Some(Affine { constant: 0, terms: vec![(1, Monomial { params: vec![0], var: None })] }));
        assert_eq!(affine_of(&b.body, ie), Some(Affine { constant: 0, terms: vec![(1, var(i))] }));
    }

    #[test]
    fn row_major_index_with_param_stride() {
        // i*n + j - 1
        let mut b = B::new();
        let i = b.loop_var("i");
        let j = b.loop_var("j");
        let ie = b.local(i);
        let n = b.param(0);
        let row = b.mul(ie, n);
        let jm1 = b.var_plus(j, -1);
        let idx = b.add(row, jm1);
        let a = affine_of(&b.body, idx).unwrap();
        assert_eq!(a.constant, -1);
        assert_eq!(a.terms, vec![(1, var(j)), (1, Monomial { params: vec![0], var: Some(i) })]);
        assert_eq!(a.coefficient_of(i), Affine { constant: 0, terms: vec![(1, Monomial { params: vec![0], var: None })] });
    }

    #[test]
    fn nested_offsets_distribute_over_param_products_and_casts() {
        // (long)((k+1)*rows*cols + c) with rows, cols params 1, 2
        let mut b = B::new();
        let k = b.loop_var("k");
        let kp1 = b.var_plus(k, 1);
        let rows = b.param(1);
        let cols = b.param(2);
        let t = b.mul(kp1, rows);
        let t = b.mul(t, cols);
        let c = b.int(3);
        let sum = b.add(t, c);
        let wide = b.cast(sum, ScalarType::I64);
        let a = affine_of(&b.body, wide).unwrap();
        assert_eq!(a.constant, 3);
        assert_eq!(
            a.terms,
            vec![(1, Monomial { params: vec![1, 2], var: None }), (1, Monomial { params: vec![1, 2], var: Some(k) })]
        );
    }

    #[test]
    fn irregular_forms() {
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let square = b.mul(ie, ie);
        let two = b.int(2);
        let half = b.bin(BinaryOp::Div, ie, two);
        let n = b.param(0);
        let rem = b.bin(BinaryOp::Rem, ie, n);
        let col = b.add_expr(ExprKind::Load { array: crate::ir::ArrayRef::Param(1), indices: vec![ie] }, ScalarType::I32);
        let plain = b.new_local("row", ScalarType::I32, LocalKind::Var);
        let plain_e = b.local(plain);
        for e in [square, half, rem, col, plain_e] {
            assert_eq!(affine_of(&b.body, e), None, "{:?}", b.body.exprs[e]);
        }
    }

    #[test]
    fn shifts_by_constants_scale_and_terms_cancel() {
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let three = b.int(3);
        let sh = b.bin(BinaryOp::Shl, ie, three);
        let diff = b.bin(BinaryOp::Sub, sh, sh);
        assert_eq!(affine_of(&b.body, sh), Some(Affine { constant: 0, terms: vec![(8, var(i))] }));
        assert_eq!(affine_of(&b.body, diff), Some(Affine::constant(0)));
    }
}
