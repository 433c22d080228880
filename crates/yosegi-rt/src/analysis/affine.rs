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
//! variables of sequential loops) and the variables of counted loops (`LoopRange::var`)
//! whatever their kind. A loop variable is a symbol here; what values it takes is for the
//! users of the form to bound (the section computation bounds it only inside its loop). Another scalar local is looked through when it is a
//! *single assignment* ([`single_assignments`]): assigned exactly once, every read of it comes
//! after that assignment in the same block (or nested in a later statement of it), and none of
//! the locals its value reads is assigned between the two, so each read sees exactly the value
//! expression evaluated in the current iteration (`int row = i*n; a[row + j]`). A local assigned
//! several times is looked through at each read that one assignment reaches alone
//! ([`reaching_assignments`]: the read follows it in its block, before the next assignment, and
//! nothing assigns the value's inputs between them), as the sibling loops of NPB MG's `rprj3`
//! each compute `i123` before they index with it. Any other local is irregular. Casts between integer types are looked through: like C compilers, we assume
//! index arithmetic does not overflow.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use crate::ir::{BinaryOp, Body, Expr, ExprKind, Handle, Local, LocalKind, Stmt, UnaryOp};

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
    AffineForms::new(body).of(expr)
}

/// Affine forms of many expressions of one body: what the body's single assignments bind is
/// found once for all of them (finding it walks the whole body per assignment).
pub struct AffineForms<'a>(Recogniser<'a>);

impl<'a> AffineForms<'a> {
    pub fn new(body: &'a Body) -> AffineForms<'a> {
        AffineForms(Recogniser { body, bindings: OnceCell::new(), reaching: OnceCell::new(), range_vars: OnceCell::new() })
    }
    /// As [`affine_of`].
    pub fn of(&self, expr: Handle<Expr>) -> Option<Affine> {
        self.0.affine(expr)
    }
}

/// The variables of counted loops (`Stmt::Loop::range`), whatever their local kind.
fn range_vars(body: &Body) -> HashSet<Handle<Local>> {
    fn walk(block: &[Stmt], out: &mut HashSet<Handle<Local>>) {
        for s in block {
            match s {
                Stmt::If { then, otherwise, .. } => {
                    walk(then, out);
                    walk(otherwise, out);
                }
                Stmt::Loop { body, continuing, range, .. } => {
                    if let Some(r) = range {
                        out.insert(r.var);
                    }
                    walk(body, out);
                    walk(continuing, out);
                }
                _ => {}
            }
        }
    }
    let mut out = HashSet::new();
    walk(&body.block, &mut out);
    out
}

/// The scalar locals that are single assignments (see the module doc), with their values.
pub fn single_assignments(body: &Body) -> HashMap<Handle<Local>, Handle<Expr>> {
    let mut found = HashMap::new();
    collect_single_assignments(body, &body.block, &mut found);
    found
}

fn collect_single_assignments(body: &Body, block: &[Stmt], found: &mut HashMap<Handle<Local>, Handle<Expr>>) {
    for (p, s) in block.iter().enumerate() {
        match s {
            Stmt::Assign { local, value } => {
                if local.index() >= body.locals.len() {
                    continue;
                }
                let l = &body.locals[*local];
                if l.kind == LocalKind::LoopIndex || l.array_dims.is_some() {
                    continue;
                }
                let rest = &block[p + 1..];
                let once = count_assigns(&body.block, *local) == 1;
                let all_reads_after = count_reads(body, &body.block, *local) == count_reads(body, rest, *local);
                let mut inputs = Vec::new();
                body.locals_read(*value, &mut inputs);
                let inputs_stable = inputs.iter().all(|i| count_assigns(rest, *i) == 0);
                if once && all_reads_after && inputs_stable {
                    found.insert(*local, *value);
                }
            }
            Stmt::If { then, otherwise, .. } => {
                collect_single_assignments(body, then, found);
                collect_single_assignments(body, otherwise, found);
            }
            Stmt::Loop { body: b, continuing, .. } => {
                collect_single_assignments(body, b, found);
                collect_single_assignments(body, continuing, found);
            }
            _ => {}
        }
    }
}

/// For locals assigned more than once: each read that exactly one assignment reaches, bound
/// to that assignment's value. An assignment reaches the reads in the statements after it in
/// its block (nested in them too) up to the next statement that assigns the local again,
/// provided no statement there assigns a local the value reads.
pub fn reaching_assignments(body: &Body) -> HashMap<Handle<Expr>, Handle<Expr>> {
    let mut found = HashMap::new();
    collect_reaching(body, &body.block, &mut found);
    found
}

fn collect_reaching(body: &Body, block: &[Stmt], found: &mut HashMap<Handle<Expr>, Handle<Expr>>) {
    for (p, s) in block.iter().enumerate() {
        match s {
            Stmt::Assign { local, value } => {
                if local.index() >= body.locals.len() {
                    continue;
                }
                let l = &body.locals[*local];
                if l.kind == LocalKind::LoopIndex || l.array_dims.is_some() || count_assigns(&body.block, *local) < 2 {
                    continue;
                }
                let rest = &block[p + 1..];
                let end = rest.iter().position(|st| count_assigns(std::slice::from_ref(st), *local) > 0).unwrap_or(rest.len());
                let window = &rest[..end];
                let mut inputs = Vec::new();
                body.locals_read(*value, &mut inputs);
                if inputs.iter().any(|i| count_assigns(window, *i) > 0) {
                    continue;
                }
                for st in window {
                    for root in st.root_exprs() {
                        reads_of(body, root, *local, &mut |node| {
                            found.insert(node, *value);
                        });
                    }
                }
            }
            Stmt::If { then, otherwise, .. } => {
                collect_reaching(body, then, found);
                collect_reaching(body, otherwise, found);
            }
            Stmt::Loop { body: b, continuing, .. } => {
                collect_reaching(body, b, found);
                collect_reaching(body, continuing, found);
            }
            _ => {}
        }
    }
}

/// Calls `f` on every node of `expr`'s tree that reads `local` as a value.
fn reads_of(body: &Body, expr: Handle<Expr>, local: Handle<Local>, f: &mut impl FnMut(Handle<Expr>)) {
    if expr.index() >= body.exprs.len() {
        return;
    }
    let kind = &body.exprs[expr].kind;
    if matches!(kind, ExprKind::Local(l) if *l == local) {
        f(expr);
    }
    for operand in kind.operands() {
        reads_of(body, operand, local, f);
    }
}

pub(crate) fn count_assigns(block: &[Stmt], local: Handle<Local>) -> usize {
    block
        .iter()
        .map(|s| match s {
            Stmt::Assign { local: l, .. } => (*l == local) as usize,
            Stmt::Atomic { capture, .. } => (*capture == Some(local)) as usize,
            Stmt::If { then, otherwise, .. } => count_assigns(then, local) + count_assigns(otherwise, local),
            Stmt::Loop { body, continuing, range, .. } => {
                count_assigns(body, local)
                    + count_assigns(continuing, local)
                    + range.as_ref().is_some_and(|r| r.var == local) as usize
            }
            _ => 0,
        })
        .sum()
}

/// Reads of `local` in the expressions of `block`'s statements, counted per occurrence.
fn count_reads(body: &Body, block: &[Stmt], local: Handle<Local>) -> usize {
    let in_expr = |e: Handle<Expr>| {
        let mut all = Vec::new();
        body.locals_read(e, &mut all);
        all.iter().filter(|l| **l == local).count()
    };
    block
        .iter()
        .map(|s| match s {
            Stmt::Assign { value, .. } => in_expr(*value),
            Stmt::Store { indices, value, .. } | Stmt::Atomic { indices, value, .. } => {
                indices.iter().map(|i| in_expr(*i)).sum::<usize>() + in_expr(*value)
            }
            Stmt::If { cond, then, otherwise } => {
                in_expr(*cond) + count_reads(body, then, local) + count_reads(body, otherwise, local)
            }
            Stmt::Loop { cond, body: b, continuing, range, .. } => {
                cond.map_or(0, in_expr)
                    + count_reads(body, b, local)
                    + count_reads(body, continuing, local)
                    + range.as_ref().map_or(0, |r| in_expr(r.start) + in_expr(r.end))
            }
            Stmt::Return(Some(e)) | Stmt::Eval(e) => in_expr(*e),
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Barrier => 0,
        })
        .sum()
}

struct Recogniser<'a> {
    body: &'a Body,
    /// Computed on the first non-loop local met, as most indices have none.
    bindings: OnceCell<HashMap<Handle<Local>, Handle<Expr>>>,
    /// Reads of locals assigned several times, by node ([`reaching_assignments`]).
    reaching: OnceCell<HashMap<Handle<Expr>, Handle<Expr>>>,
    range_vars: OnceCell<HashSet<Handle<Local>>>,
}

impl Recogniser<'_> {
    fn affine(&self, expr: Handle<Expr>) -> Option<Affine> {
        let body = self.body;
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
                if local.array_dims.is_some() {
                    return None;
                }
                if local.kind == LocalKind::LoopIndex || self.range_vars.get_or_init(|| range_vars(body)).contains(l) {
                    return Some(Affine::monomial(Monomial { params: Vec::new(), var: Some(*l) }));
                }
                let value = match self.bindings.get_or_init(|| single_assignments(body)).get(l) {
                    Some(v) => *v,
                    None => *self.reaching.get_or_init(|| reaching_assignments(body)).get(&expr)?,
                };
                self.affine(value)
            }
            ExprKind::Cast { arg } => {
                if body.exprs[*arg].ty.is_float() {
                    None
                } else {
                    self.affine(*arg)
                }
            }
            ExprKind::Unary { op: UnaryOp::Neg, arg } => Some(self.affine(*arg)?.scale(-1)),
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.affine(*lhs)?;
                let r = self.affine(*rhs)?;
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
        let unassigned = b.new_local("unassigned", ScalarType::I32, LocalKind::Var);
        let unassigned_e = b.local(unassigned);
        // `row` is assigned twice: not a single assignment.
        b.body.block.push(Stmt::Assign { local: plain, value: ie });
        b.body.block.push(Stmt::Assign { local: plain, value: n });
        for e in [square, half, rem, col, plain_e, unassigned_e] {
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

    #[test]
    fn single_assignment_locals_are_looked_through() {
        // row = i*n; x = a[row + 1];
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let n = b.param(0);
        let row_value = b.mul(ie, n);
        let row = b.new_local("row", ScalarType::I32, LocalKind::Var);
        let row_e = b.local(row);
        let idx = b.var_plus(row, 1);
        let ld = b.load(1, vec![idx]);
        let x = b.new_local("x", ScalarType::F64, LocalKind::Var);
        b.body.block.push(Stmt::Assign { local: row, value: row_value });
        b.body.block.push(Stmt::Assign { local: x, value: ld });
        let a = affine_of(&b.body, idx).unwrap();
        assert_eq!(a.constant, 1);
        assert_eq!(a.terms, vec![(1, Monomial { params: vec![0], var: Some(i) })]);
        let _ = row_e;
    }

    #[test]
    fn reads_before_the_assignment_or_after_an_input_changes_are_irregular() {
        // x = a[row]; row = i;   and   row = i; i = 0; x = a[row]
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let row = b.new_local("row", ScalarType::I32, LocalKind::Var);
        let row_e = b.local(row);
        let ld = b.load(1, vec![row_e]);
        let x = b.new_local("x", ScalarType::F64, LocalKind::Var);
        b.body.block.push(Stmt::Assign { local: x, value: ld });
        b.body.block.push(Stmt::Assign { local: row, value: ie });
        assert_eq!(affine_of(&b.body, row_e), None);

        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let row = b.new_local("row", ScalarType::I32, LocalKind::Var);
        let row_e = b.local(row);
        let zero = b.int(0);
        let ld = b.load(1, vec![row_e]);
        let x = b.new_local("x", ScalarType::F64, LocalKind::Var);
        b.body.block.push(Stmt::Assign { local: row, value: ie });
        b.body.block.push(Stmt::Assign { local: i, value: zero });
        b.body.block.push(Stmt::Assign { local: x, value: ld });
        assert_eq!(affine_of(&b.body, row_e), None);
    }

    #[test]
    fn counted_loop_variables_are_loop_variables_whatever_their_kind() {
        let mut b = B::new();
        let i = b.new_local("i", ScalarType::I32, LocalKind::Var);
        let zero = b.int(0);
        let n = b.param(0);
        let ie = b.local(i);
        let lp = b.counted_loop(i, zero, n, vec![]);
        assert_eq!(affine_of(&b.body, ie), None, "not yet a loop variable");
        b.body.block.extend(lp);
        assert_eq!(affine_of(&b.body, ie), Some(Affine { constant: 0, terms: vec![(1, var(i))] }));
    }
}
