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
//!
//! The form's own arithmetic is checked (`i64`): an index whose constants or coefficients
//! overflow while the form is built (`a[i + 0x7fffffffffffffff + 1]`) is irregular, so no
//! analysis ever reasons about a wrapped value. So is a form that does not fit the type of its
//! node, where C's conversions and unsigned arithmetic wrap on purpose (`(int)(i + 4294967296LL)`
//! is `i`; see [`fits`]).

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use crate::ir::{BinaryOp, Body, Expr, ExprKind, Handle, Local, LocalKind, ScalarType, Stmt, UnaryOp};

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
        if m.is_unit() { Affine::constant(1) } else { Affine { constant: 0, terms: vec![(1, m)] } }
    }

    /// Sorts and merges the terms; `None` when merging two coefficients overflows `i64`.
    fn normalised(mut self) -> Option<Affine> {
        let mut merged: Vec<(i64, Monomial)> = Vec::new();
        self.terms.sort_by(|a, b| a.1.cmp(&b.1));
        for (c, m) in self.terms {
            if m.is_unit() {
                self.constant = self.constant.checked_add(c)?;
            } else if let Some(last) = merged.last_mut().filter(|l| l.1 == m) {
                last.0 = last.0.checked_add(c)?;
            } else {
                merged.push((c, m));
            }
        }
        merged.retain(|(c, _)| *c != 0);
        Some(Affine { constant: self.constant, terms: merged })
    }

    // The arithmetic is checked: a sum, difference or product whose constant or coefficients
    // leave `i64` is no form at all (`None`), never a wrapped one that every user of the form
    // (sections, dependences, halos, fusion) would then reason about as if it were the program's.

    /// The sum, `None` on overflow.
    pub fn add(&self, other: &Affine) -> Option<Affine> {
        self.combine(other, i64::checked_add)
    }
    /// The difference, `None` on overflow. Each coefficient is the difference of the two
    /// (`(i + MIN) - MIN` is `i`): no `-MIN` is formed on the way.
    pub fn sub(&self, other: &Affine) -> Option<Affine> {
        self.combine(other, i64::checked_sub)
    }
    /// `k` times the form, `None` on overflow.
    pub fn scale(&self, k: i64) -> Option<Affine> {
        let terms = self.terms.iter().map(|(c, m)| Some((c.checked_mul(k)?, m.clone()))).collect::<Option<Vec<_>>>()?;
        Affine { constant: self.constant.checked_mul(k)?, terms }.normalised()
    }

    /// `op` of the constants and of each monomial's coefficients (0 where a form lacks it).
    fn combine(&self, other: &Affine, op: fn(i64, i64) -> Option<i64>) -> Option<Affine> {
        let (a, b) = (self.clone().normalised()?, other.clone().normalised()?);
        let mut terms = Vec::with_capacity(a.terms.len() + b.terms.len());
        let (mut x, mut y) = (a.terms.into_iter().peekable(), b.terms.into_iter().peekable());
        loop {
            let order = match (x.peek(), y.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some((_, ma)), Some((_, mb))) => ma.cmp(mb),
            };
            let (c, m) = match order {
                std::cmp::Ordering::Less => x.next().map(|(c, m)| (op(c, 0), m)),
                std::cmp::Ordering::Greater => y.next().map(|(c, m)| (op(0, c), m)),
                std::cmp::Ordering::Equal => x.next().zip(y.next()).map(|((ca, m), (cb, _))| (op(ca, cb), m)),
            }?;
            let c = c?;
            if c != 0 {
                terms.push((c, m));
            }
        }
        Some(Affine { constant: op(a.constant, b.constant)?, terms })
    }
    /// The product, when it is still affine (no monomial with two loop variables) and no
    /// coefficient overflows.
    pub fn mul(&self, other: &Affine) -> Option<Affine> {
        let mut terms = Vec::new();
        let unit = Monomial { params: Vec::new(), var: None };
        let lhs: Vec<(i64, Monomial)> =
            std::iter::once((self.constant, unit.clone())).chain(self.terms.iter().cloned()).collect();
        let rhs: Vec<(i64, Monomial)> =
            std::iter::once((other.constant, unit)).chain(other.terms.iter().cloned()).collect();
        for (a, ma) in &lhs {
            for (b, mb) in &rhs {
                let c = a.checked_mul(*b)?;
                if c == 0 {
                    continue;
                }
                terms.push((c, ma.times(mb)?));
            }
        }
        Affine { constant: 0, terms }.normalised()
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
    /// (The form's monomials are distinct and sorted, so those of `var` stay so without it, and
    /// at most one of them, `c*var`, becomes the constant: nothing merges, nothing overflows.)
    pub fn coefficient_of(&self, var: Handle<Local>) -> Affine {
        let mut out = Affine::constant(0);
        for (c, m) in self.terms.iter().filter(|(_, m)| m.var == Some(var)) {
            if m.params.is_empty() {
                out.constant = *c;
            } else {
                out.terms.push((*c, Monomial { params: m.params.clone(), var: None }));
            }
        }
        out
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
    /// The form of `expr`, when it also fits the node's type (see [`fits`]).
    fn affine(&self, expr: Handle<Expr>) -> Option<Affine> {
        let form = self.form(expr)?;
        fits(&form, self.body.exprs[expr].ty).then_some(form)
    }

    fn form(&self, expr: Handle<Expr>) -> Option<Affine> {
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
                // Assigning converts the value to the local's type, as a cast does.
                self.affine(value).filter(|form| fits(form, local.ty))
            }
            ExprKind::Cast { arg } => {
                if body.exprs[*arg].ty.is_float() {
                    None
                } else {
                    self.affine(*arg)
                }
            }
            ExprKind::Unary { op: UnaryOp::Neg, arg } => self.affine(*arg)?.scale(-1),
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.affine(*lhs)?;
                let r = self.affine(*rhs)?;
                match op {
                    BinaryOp::Add => l.add(&r),
                    BinaryOp::Sub => l.sub(&r),
                    BinaryOp::Mul => l.mul(&r),
                    BinaryOp::Shl => {
                        let k = r.as_constant().filter(|k| (0..62).contains(k))?;
                        l.scale(1i64 << k)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Whether `form` may stand for a value of type `ty`: every constant and coefficient within
/// the signed range of `ty`'s width. A form outside it is a value the type's conversion or
/// unsigned wrap-around changes: `(int)(i + 4294967296LL)` is `i`, `u + 4294967295u` (with
/// `u` unsigned) is `u - 1`, and such an index is irregular rather than planned at the
/// unconverted value. (Signed arithmetic that overflows its type is undefined in C, and
/// `unsigned long` arithmetic wraps where the `i64` form would have overflowed already, so
/// only the narrower types need the test.) A `_Bool` is affine only as the constant 0 or 1.
fn fits(form: &Affine, ty: ScalarType) -> bool {
    let bits = ty.size_bytes() * 8;
    if ty == ScalarType::Bool {
        return form.as_constant().is_some_and(|c| c == 0 || c == 1);
    }
    if bits >= 64 {
        return true;
    }
    let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
    std::iter::once(form.constant).chain(form.terms.iter().map(|(c, _)| *c)).all(|c| (lo..=hi).contains(&c))
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

    #[test]
    fn arithmetic_that_overflows_is_no_form() {
        let i = Affine::monomial(var(Handle::new(0)));
        let max = Affine::constant(i64::MAX);
        let min = Affine::constant(i64::MIN);
        assert_eq!(max.add(&Affine::constant(1)), None);
        assert_eq!(min.sub(&Affine::constant(1)), None);
        assert_eq!(min.scale(-1), None);
        assert_eq!(Affine::constant(1 << 32).mul(&Affine::constant(1 << 31)), None);
        assert_eq!(i.scale(i64::MAX).and_then(|f| f.add(&i)), None, "coefficients overflow too");
        // Each coefficient is a difference, so no `-MIN` is formed on the way back to `i`.
        let shifted = i.add(&min).unwrap();
        assert_eq!(shifted.sub(&min), Some(i.clone()));
        assert_eq!(i.add(&max).unwrap().sub(&max), Some(i.clone()));
        assert_eq!(i.sub(&i), Some(Affine::constant(0)));
        assert_eq!(i.scale(i64::MIN).and_then(|f| f.sub(&i.scale(i64::MIN).unwrap())), Some(Affine::constant(0)));
    }

    #[test]
    fn indices_whose_constants_overflow_are_irregular() {
        // i + MAX + 1, -(MIN), i * 2^32 * 2^31, (i << 61) * 4
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let max = b.add_expr(ExprKind::ConstInt(i64::MAX), ScalarType::I64);
        let min = b.add_expr(ExprKind::ConstInt(i64::MIN), ScalarType::I64);
        let one = b.add_expr(ExprKind::ConstInt(1), ScalarType::I64);
        let wide = b.cast(ie, ScalarType::I64);
        let plus_max = b.add(wide, max);
        let past = b.add(plus_max, one);
        let negated = b.add_expr(ExprKind::Unary { op: UnaryOp::Neg, arg: min }, ScalarType::I64);
        let big = b.add_expr(ExprKind::ConstInt(1 << 32), ScalarType::I64);
        let bigger = b.add_expr(ExprKind::ConstInt(1 << 31), ScalarType::I64);
        let t = b.mul(wide, big);
        let product = b.mul(t, bigger);
        let sixty_one = b.add_expr(ExprKind::ConstInt(61), ScalarType::I64);
        let four = b.add_expr(ExprKind::ConstInt(4), ScalarType::I64);
        let shifted = b.bin(BinaryOp::Shl, wide, sixty_one);
        let shifted_more = b.mul(shifted, four);
        for e in [past, negated, product, shifted_more] {
            assert_eq!(affine_of(&b.body, e), None, "{:?}", b.body.exprs[e]);
        }
        // (i + MAX) - MAX is `i` again, and so is (i + MIN) - MIN.
        let back = b.bin(BinaryOp::Sub, plus_max, max);
        assert_eq!(affine_of(&b.body, back), Some(Affine { constant: 0, terms: vec![(1, var(i))] }));
        let plus_min = b.add(wide, min);
        let back = b.bin(BinaryOp::Sub, plus_min, min);
        assert_eq!(affine_of(&b.body, back), Some(Affine { constant: 0, terms: vec![(1, var(i))] }));
    }

    #[test]
    fn a_form_that_its_type_wraps_is_irregular() {
        // (int)(i + 4294967296LL) is `i` in C, not `i + 2^32`; u + 4294967295u is `u - 1`.
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        let wide = b.cast(ie, ScalarType::I64);
        let two_32 = b.add_expr(ExprKind::ConstInt(1 << 32), ScalarType::I64);
        let sum = b.add(wide, two_32);
        let narrowed = b.cast(sum, ScalarType::I32);
        assert_eq!(affine_of(&b.body, narrowed), None);
        assert!(affine_of(&b.body, sum).is_some(), "the long long sum itself is affine");
        let u = b.cast(ie, ScalarType::U32);
        let all_ones = b.add_expr(ExprKind::ConstInt(u32::MAX as i64), ScalarType::U32);
        let wrapped = b.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: u, rhs: all_ones }, ScalarType::U32);
        assert_eq!(affine_of(&b.body, wrapped), None);
        // A local of a narrower type converts what is assigned to it: int row = i + 2^32.
        let row = b.new_local("row", ScalarType::I32, LocalKind::Var);
        let row_e = b.local(row);
        b.body.block.push(Stmt::Assign { local: row, value: sum });
        assert_eq!(affine_of(&b.body, row_e), None);
        // Small constants in narrow types stay affine, and a `_Bool` only as 0 or 1.
        let seven = b.add_expr(ExprKind::ConstInt(7), ScalarType::U32);
        let fine = b.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: u, rhs: seven }, ScalarType::U32);
        assert_eq!(affine_of(&b.body, fine), Some(Affine { constant: 7, terms: vec![(1, var(i))] }));
        let truth = b.cast(ie, ScalarType::Bool);
        assert_eq!(affine_of(&b.body, truth), None);
    }
}
