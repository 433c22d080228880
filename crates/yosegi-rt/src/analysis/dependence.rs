//! The dependence test for `kernels` regions: may all the parallel dims of a kernel run their
//! iterations in any order?
//!
//! Only array params carry dependences between iterations: host scalars are read-only params,
//! locals declared in the body are private to an iteration, reduction accumulators are combined
//! by the reduction, and atomic statements are indivisible by definition (they are left out of
//! the test). A kernel that hands a scalar back to the host (`scalar_outputs`) is sequential.
//!
//! For each pair of references to the same array param where at least one writes, we look for
//! a subscript that *pins* the parallel variables: a dimension whose subscripts are the same
//! affine form in both references and mentions only parallel variables, so equal subscripts
//! mean equal variables. For a form with several variables (`a[i*n + j]`) that needs the
//! mapping from variables to elements to be one-to-one, which we assume when their
//! coefficients are pairwise different and at most one of them is a plain number (the usual
//! row-major linearisation; `a[i + j]` is refused). A pair whose subscripts can never be equal
//! (the GCD test: `a[2*i]` against `a[2*i + 1]`) is independent. Any pair left over is a
//! possible dependence, and the message names the references (and the distance when the
//! subscripts differ by a constant).
//!
//! A store through a pointer the kernel made from an integer (`ir::ArrayRef::Address`) may
//! reach anything: such a loop stays sequential.
//!
//! Distinct array params are assumed not to overlap (lowering gives one param per host
//! object), and so are distinct rows of a table of row pointers (`a[i][j]`: the first subscript
//! pins the row); the runtime stops a launch whose written rows overlap each other or another
//! array.

use std::collections::BTreeSet;

use crate::analysis::access::{AccessKind, ArrayAccess, summarize};
use crate::analysis::affine::Affine;
use crate::ir::text::expr_text;
use crate::diag::Span;
use crate::ir::{Body, Expr, ExprKind, Handle, Kernel, Local, LocalKind, SequentialReason, Stmt};

/// `Ok` when every dim of `kernel.space` may run in parallel; otherwise why not.
pub fn check_parallel(kernel: &Kernel) -> Result<(), SequentialReason> {
    if kernel.space.is_empty() {
        return Ok(());
    }
    if let Some((local, _)) = kernel.scalar_outputs.first() {
        let name = kernel.body.locals.iter().find(|(h, _)| h == local).map_or("?", |(_, l)| l.name.as_str());
        return Err(SequentialReason {
            message: format!("the loop assigns `{name}`, which the host reads afterwards"),
            span: kernel.span,
        });
    }
    if let Some(local) = read_before_assigned(kernel) {
        let l = &kernel.body.locals[local];
        return Err(SequentialReason {
            message: format!(
                "`{}` may be read before it is assigned in an iteration, so it would carry a value from the previous iteration",
                l.name
            ),
            span: if l.span == Span::default() { kernel.span } else { l.span },
        });
    }
    let mut address_store = None;
    crate::ir::for_each_stmt(&kernel.body.block, &mut |stmt| {
        if let Stmt::Store { array: crate::ir::ArrayRef::Address(_), span, .. } = stmt {
            address_store.get_or_insert(*span);
        }
    });
    if let Some(span) = address_store {
        return Err(SequentialReason {
            message: "the loop stores through a pointer made from an integer, which may be memory other iterations use".to_string(),
            span,
        });
    }
    let parallel: Vec<Handle<Local>> = kernel.space.iter().map(|d| d.var).collect();
    let summary = summarize(kernel);
    let plain: Vec<&ArrayAccess> = summary.accesses.iter().filter(|a| a.kind != AccessKind::AtomicUpdate).collect();
    for (wi, w) in plain.iter().enumerate() {
        if w.kind != AccessKind::Write {
            continue;
        }
        for (ri, r) in plain.iter().enumerate() {
            if r.param != w.param || (r.kind == AccessKind::Write && ri < wi) {
                continue;
            }
            if let Err(message) = check_pair(kernel, &parallel, w, r, ri == wi) {
                return Err(SequentialReason { message, span: w.span });
            }
        }
    }
    Ok(())
}

pub(crate) fn check_pair(kernel: &Kernel, parallel: &[Handle<Local>], w: &ArrayAccess, r: &ArrayAccess, same_ref: bool) -> Result<(), String> {
    if w.indices.len() != r.indices.len() {
        return Err(format!("`{}` and `{}` index the array differently", ref_text(kernel, w), ref_text(kernel, r)));
    }
    let pairs: Vec<(&Affine, &Affine)> =
        w.indices.iter().zip(&r.indices).filter_map(|(a, b)| Some((a.as_affine()?, b.as_affine()?))).collect();
    if pairs.iter().any(|(a, b)| never_equal(a, b)) {
        return Ok(());
    }
    let mut pinned = BTreeSet::new();
    for (a, b) in &pairs {
        if a == b && pins(a, parallel) {
            pinned.extend(a.vars());
        }
    }
    let Some(free) = parallel.iter().find(|v| !pinned.contains(v)) else {
        return Ok(());
    };
    let var_name = |v: Handle<Local>| kernel.body.locals[v].name.clone();
    let (wt, rt) = (ref_text(kernel, w), ref_text(kernel, r));
    if w.indices.iter().any(|i| i.as_affine().is_none()) {
        return Err(format!("`{wt}` writes through an irregular index, so different iterations may write the same element"));
    }
    if !same_ref && let Some((var, distance)) = distance(&pairs, parallel) {
        let step = kernel.space.iter().find(|d| d.var == var).map_or(1, |d| d.step.signum());
        let name = var_name(var);
        return Err(if r.kind == AccessKind::Write {
            format!("`{wt}` and `{rt}` write the same element in different iterations (distance {} along `{name}`)", distance.unsigned_abs())
        } else if distance.signum() * step < 0 {
            format!("`{rt}` reads the value `{wt}` writes in an earlier iteration (distance {} along `{name}`)", distance.unsigned_abs())
        } else {
            format!("`{rt}` reads an element that `{wt}` overwrites in a later iteration (distance {} along `{name}`)", distance.unsigned_abs())
        });
    }
    let name = var_name(*free);
    Err(if same_ref {
        format!("`{wt}` may write the same element in different iterations of `{name}`")
    } else {
        format!("`{wt}` and `{rt}` may touch the same element in different iterations of `{name}`")
    })
}

/// Whether equal values of `form` (the same form in both references) imply equal variables.
fn pins(form: &Affine, parallel: &[Handle<Local>]) -> bool {
    let vars = form.vars();
    if vars.is_empty() || vars.iter().any(|v| !parallel.contains(v)) {
        return false;
    }
    let coeffs: Vec<Affine> = vars.iter().map(|v| form.coefficient_of(*v)).collect();
    let plain_numbers = coeffs.iter().filter(|c| c.as_constant().is_some()).count();
    let distinct = coeffs.iter().enumerate().all(|(i, c)| coeffs[..i].iter().all(|d| d != c));
    plain_numbers <= 1 && distinct
}

/// The GCD test with each reference's variables independent: `a(x) = b(y)` has no integer
/// solution when the constant difference is not a multiple of the gcd of the coefficients.
/// Checked: when the difference of the constants overflows `i64` nothing is proved (the
/// subscripts may meet), and the gcd is taken of magnitudes (`i64::MIN` has one, in `u64`).
fn never_equal(a: &Affine, b: &Affine) -> bool {
    let Some(delta) = b.invariant_part().sub(&a.invariant_part()).and_then(|d| d.as_constant()) else {
        return false;
    };
    let mut g: u64 = 0;
    for form in [a, b] {
        for v in form.vars() {
            match form.coefficient_of(v).as_constant() {
                Some(c) => g = gcd(g, c.unsigned_abs()),
                None => return false,
            }
        }
    }
    if g == 0 { delta != 0 } else { delta.unsigned_abs() % g != 0 }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A dimension whose subscripts differ only by a constant and mention exactly one parallel
/// variable with a numeric coefficient: `(var, w_value - r_value)` of that variable for the
/// writer and reader touching the same element.
fn distance(pairs: &[(&Affine, &Affine)], parallel: &[Handle<Local>]) -> Option<(Handle<Local>, i64)> {
    pairs.iter().find_map(|(w, r)| {
        // A difference that overflows `i64` is no distance (the pair stays a possible dependence).
        let delta = r.sub(w)?.as_constant()?;
        let vars: Vec<Handle<Local>> = w.vars().into_iter().filter(|v| parallel.contains(v)).collect();
        let [var] = vars.as_slice() else { return None };
        let c = w.coefficient_of(*var).as_constant()?;
        // Checked: a coefficient of 0, or `i64::MIN / -1`, is no distance.
        (delta != 0 && delta.checked_rem(c)? == 0).then_some((*var, delta.checked_div(c)?))
    })
}

/// A plain scalar local (`LocalKind::Var`) that some path through one iteration reads before
/// assigning: in the sequential program it would see the previous iteration's value.
fn read_before_assigned(kernel: &Kernel) -> Option<Handle<Local>> {
    let mut assigned = BTreeSet::new();
    first_early_read(&kernel.body, &kernel.body.block, &mut assigned)
}

fn first_early_read(body: &Body, block: &[Stmt], assigned: &mut BTreeSet<Handle<Local>>) -> Option<Handle<Local>> {
    for s in block {
        let found = match s {
            Stmt::Assign { local, value } => {
                let r = early_in_expr(body, *value, assigned);
                assigned.insert(*local);
                r
            }
            Stmt::Store { indices, value, .. } | Stmt::Atomic { indices, value, .. } => {
                indices.iter().find_map(|i| early_in_expr(body, *i, assigned)).or_else(|| early_in_expr(body, *value, assigned))
            }
            Stmt::If { cond, then, otherwise } => early_in_expr(body, *cond, assigned).or_else(|| {
                let mut t = assigned.clone();
                let mut o = assigned.clone();
                let r = first_early_read(body, then, &mut t).or_else(|| first_early_read(body, otherwise, &mut o));
                assigned.extend(t.intersection(&o).copied().collect::<Vec<_>>());
                r
            }),
            Stmt::Loop { cond, test_first, body: b, continuing, range } => {
                let entry = assigned.clone();
                let mut inner = entry.clone();
                if let Some(r) = range {
                    inner.insert(r.var);
                }
                let before_body = if *test_first { cond.and_then(|c| early_in_expr(body, c, &inner)) } else { None };
                // `continue` may skip the rest of the body, so the step sees only the entry set.
                let mut step = inner.clone();
                before_body
                    .or_else(|| first_early_read(body, b, &mut inner))
                    .or_else(|| first_early_read(body, continuing, &mut step))
                    .or_else(|| if *test_first { None } else { cond.and_then(|c| early_in_expr(body, c, &step)) })
            }
            Stmt::Return(Some(e)) | Stmt::Eval(e) => early_in_expr(body, *e, assigned),
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Barrier => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn early_in_expr(body: &Body, expr: Handle<Expr>, assigned: &BTreeSet<Handle<Local>>) -> Option<Handle<Local>> {
    if expr.index() >= body.exprs.len() {
        return None;
    }
    let recurse = |e: Handle<Expr>| early_in_expr(body, e, assigned);
    match &body.exprs[expr].kind {
        ExprKind::Local(l) => {
            let local = body.locals.iter().find(|(h, _)| h == l).map(|(_, x)| x)?;
            (local.kind == LocalKind::Var && local.array_dims.is_none() && !assigned.contains(l)).then_some(*l)
        }
        ExprKind::Load { indices, .. } => indices.iter().find_map(|i| recurse(*i)),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => recurse(*arg),
        ExprKind::Binary { lhs, rhs, .. } => recurse(*lhs).or_else(|| recurse(*rhs)),
        ExprKind::Select { cond, then, otherwise } => recurse(*cond).or_else(|| recurse(*then)).or_else(|| recurse(*otherwise)),
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => args.iter().find_map(|a| recurse(*a)),
        _ => None,
    }
}

pub(crate) fn ref_text(kernel: &Kernel, a: &ArrayAccess) -> String {
    let name = kernel.params.get(a.param as usize).map_or("?", |p| p.name.as_str());
    let idx: String = a.index_exprs.iter().map(|i| format!("[{}]", expr_text(&kernel.body, &kernel.params, *i))).collect();
    format!("{name}{idx}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::ir::{BinaryOp, ExprKind, ScalarType, Stmt};

    fn params() -> Vec<crate::ir::Param> {
        vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)]
    }

    /// `a[i + w_off] = a[i + r_off] + 1` over `i in 1..n`.
    fn shifted(w_off: i64, r_off: i64) -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let one = b.int(1);
        let n = b.param(0);
        let d = b.dim(i, one, n);
        let ri = b.var_plus(i, r_off);
        let wi = b.var_plus(i, w_off);
        let ld = b.load(1, vec![ri]);
        let v = b.float(1.0, ScalarType::F64);
        let sum = b.add(ld, v);
        let st = b.store(1, vec![wi], sum);
        b.body.block.push(st);
        kernel("k", params(), vec![d], b.body)
    }

    #[test]
    fn same_element_update_is_parallel() {
        assert_eq!(check_parallel(&shifted(0, 0)), Ok(()));
    }

    #[test]
    fn reading_the_previous_element_is_sequential_with_distance() {
        let err = check_parallel(&shifted(0, -1)).unwrap_err();
        assert_eq!(err.message, "`a[i - 1]` reads the value `a[i]` writes in an earlier iteration (distance 1 along `i`)");
        let err = check_parallel(&shifted(0, 2)).unwrap_err();
        assert_eq!(err.message, "`a[i + 2]` reads an element that `a[i]` overwrites in a later iteration (distance 2 along `i`)");
    }

    #[test]
    fn gcd_separates_even_and_odd_elements() {
        // a[2*i] = a[2*i + 1]
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(i, zero, n);
        let two = b.int(2);
        let ie = b.local(i);
        let even = b.mul(two, ie);
        let one = b.int(1);
        let odd = b.add(even, one);
        let ld = b.load(1, vec![odd]);
        let st = b.store(1, vec![even], ld);
        b.body.block.push(st);
        assert_eq!(check_parallel(&kernel("k", params(), vec![d], b.body)), Ok(()));
    }

    /// `a[k*i + w] = a[k*i + r]` over `i in 0..n`, every constant a `long long`.
    fn scaled(k: i64, w: i64, r: i64) -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(i, zero, n);
        let ie = b.local(i);
        let wide = b.cast(ie, ScalarType::I64);
        let long = |b: &mut B, v: i64| b.add_expr(ExprKind::ConstInt(v), ScalarType::I64);
        let kc = long(&mut b, k);
        let scaled = b.mul(kc, wide);
        let (wc, rc) = (long(&mut b, w), long(&mut b, r));
        let wi = b.add(scaled, wc);
        let ri = b.add(scaled, rc);
        let ld = b.load(1, vec![ri]);
        let st = b.store(1, vec![wi], ld);
        b.body.block.push(st);
        kernel("k", params(), vec![d], b.body)
    }

    #[test]
    fn extreme_coefficients_and_offsets_are_tested_without_overflow() {
        // The gcd of `i64::MIN`'s coefficient is 2^63 (its `abs` overflowed): 1 is no multiple.
        assert_eq!(check_parallel(&scaled(i64::MIN, 0, 1)), Ok(()));
        // The constants' difference overflows: nothing is proved, and no distance is made up.
        let err = check_parallel(&scaled(1, i64::MAX, -2)).unwrap_err();
        assert!(err.message.contains("may touch the same element in different iterations of `i`"), "{}", err.message);
        assert!(!err.message.contains("distance"), "{}", err.message);
    }

    /// `a[i][j] = a[i + di][j + dj]` over `i, j` (both parallel), `double a[][n]`.
    fn two_d(di: i64, dj: i64) -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let j = b.loop_var("j");
        let one = b.int(1);
        let n = b.param(0);
        let d0 = b.dim(i, one, n);
        let d1 = b.dim(j, one, n);
        let ri = b.var_plus(i, di);
        let rj = b.var_plus(j, dj);
        let ie = b.local(i);
        let je = b.local(j);
        let ld = b.load(1, vec![ri, rj]);
        let st = b.store(1, vec![ie, je], ld);
        b.body.block.push(st);
        let dims = vec![None, Some(n)];
        kernel("k", vec![scalar_param("n", 0), array_param("a", dims, 1)], vec![d0, d1], b.body)
    }

    #[test]
    fn two_d_dependence_along_one_dim_only() {
        assert_eq!(check_parallel(&two_d(0, 0)), Ok(()));
        let err = check_parallel(&two_d(0, -1)).unwrap_err();
        assert_eq!(err.message, "`a[i][j - 1]` reads the value `a[i][j]` writes in an earlier iteration (distance 1 along `j`)");
        let err = check_parallel(&two_d(-1, 0)).unwrap_err();
        assert!(err.message.contains("distance 1 along `i`"), "{}", err.message);
    }

    #[test]
    fn different_arrays_are_independent() {
        // b[i] = a[i - 1]
        let mut b = B::new();
        let i = b.loop_var("i");
        let one = b.int(1);
        let n = b.param(0);
        let d = b.dim(i, one, n);
        let im1 = b.var_plus(i, -1);
        let ie = b.local(i);
        let ld = b.load(1, vec![im1]);
        let st = b.store(2, vec![ie], ld);
        b.body.block.push(st);
        assert_eq!(check_parallel(&kernel("k", params(), vec![d], b.body)), Ok(()));
    }

    #[test]
    fn irregular_write_is_sequential_but_atomic_is_fine() {
        // a[b_idx[i]] = 1  vs  atomic a[b_idx[i]] += 1
        let build = |atomic: bool| {
            let mut b = B::new();
            let i = b.loop_var("i");
            let zero = b.int(0);
            let n = b.param(0);
            let d = b.dim(i, zero, n);
            let ie = b.local(i);
            let idx = b.add_expr(ExprKind::Load { array: crate::ir::ArrayRef::Param(2), indices: vec![ie] }, ScalarType::I32);
            let v = b.float(1.0, ScalarType::F64);
            let st = if atomic {
                Stmt::Atomic {
                    op: crate::ir::AtomicOp::Add,
                    array: crate::ir::ArrayRef::Param(1),
                    indices: vec![idx],
                    value: v,
                    capture: None,
                    span: Default::default(),
                }
            } else {
                b.store(1, vec![idx], v)
            };
            b.body.block.push(st);
            kernel("k", params(), vec![d], b.body)
        };
        let err = check_parallel(&build(false)).unwrap_err();
        assert_eq!(err.message, "`a[b[i]]` writes through an irregular index, so different iterations may write the same element");
        assert_eq!(check_parallel(&build(true)), Ok(()));
    }

    #[test]
    fn a_scalar_carried_between_iterations_is_sequential() {
        // t = t + a[i]; b[i] = t   (t a plain local never assigned first)
        let mut b = B::new();
        let i = b.loop_var("i");
        let t = b.new_local("t", ScalarType::F64, crate::ir::LocalKind::Var);
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(i, zero, n);
        let ie = b.local(i);
        let te = b.local(t);
        let ld = b.load(1, vec![ie]);
        let sum = b.add(te, ld);
        b.body.block.push(Stmt::Assign { local: t, value: sum });
        let st = b.store(2, vec![ie], te);
        b.body.block.push(st);
        let err = check_parallel(&kernel("k", params(), vec![d.clone()], b.body.clone())).unwrap_err();
        assert!(err.message.starts_with("`t` may be read before it is assigned"), "{}", err.message);
        // Assigning it first makes it private to the iteration.
        let init = b.float(0.0, ScalarType::F64);
        b.body.block.insert(0, Stmt::Assign { local: t, value: init });
        assert_eq!(check_parallel(&kernel("k", params(), vec![d], b.body)), Ok(()));
    }

    #[test]
    fn linearised_rows_pin_both_vars_but_plain_sums_do_not() {
        // a[i*n + j] = 0 is parallel; a[i + j] = 0 is not.
        let build = |with_stride: bool| {
            let mut b = B::new();
            let i = b.loop_var("i");
            let j = b.loop_var("j");
            let zero = b.int(0);
            let n = b.param(0);
            let d0 = b.dim(i, zero, n);
            let d1 = b.dim(j, zero, n);
            let ie = b.local(i);
            let je = b.local(j);
            let row = if with_stride { b.bin(BinaryOp::Mul, ie, n) } else { ie };
            let idx = b.add(row, je);
            let v = b.float(0.0, ScalarType::F64);
            let st = b.store(1, vec![idx], v);
            b.body.block.push(st);
            kernel("k", params(), vec![d0, d1], b.body)
        };
        assert_eq!(check_parallel(&build(true)), Ok(()));
        let err = check_parallel(&build(false)).unwrap_err();
        assert_eq!(err.message, "`a[i + j]` may write the same element in different iterations of `i`");
    }
}
