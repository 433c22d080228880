//! Dependences that a loop the user called independent provably carries.
//!
//! Inside `parallel`, `#pragma acc loop` means `independent`: the compiler may run the
//! iterations in any order. Programs written for other compilers sometimes say so of loops
//! whose iterations use each other's results (PolyBench-ACC's cholesky, trmm and durbin), and
//! running them in parallel gives a different answer from the program's sequential meaning.
//! This test looks for such a loop and, when it finds one, a concrete case: parameter values
//! and two iterations of the loop that touch the same element, one of them writing it. Only a
//! witness counts (see [`super::linear_system`]): where the analysis cannot produce one (an
//! irregular subscript, a reference under a condition, a bound it cannot read, a system too
//! large), the user's word stands.
//!
//! The system for a pair of references `W` (a write) and `R` (a read or a write) and a dim `d`
//! of the kernel's space: each side has its own copy of every loop variable, with the
//! constraints of its loop (`v = start + step*t`, `0 <= t < trip count` for a parallel dim;
//! the same with `v` short of `end` for a sequential loop), scalar params are shared unknowns,
//! the two references' subscripts are equal, the dims outside `d` take the same iteration on
//! both sides and `d` takes a different one. A witness for the smallest such `d` says which dim
//! (and those inside it) must run in order.

use std::collections::BTreeMap;

use crate::analysis::access::{AccessKind, ArrayAccess, Certainty, LoopBound, summarize};
use crate::analysis::affine::{Affine, AffineForms, Monomial};
use crate::analysis::dependence::{check_pair, ref_text};
use crate::analysis::linear_system::{Row, System};
use crate::diag::Span;
use crate::ir::{BinaryOp, ExprKind, Handle, Kernel, Local};

/// A dependence between two iterations of `kernel.space[dim]` (the outer dims equal).
#[derive(Clone, Debug, PartialEq)]
pub struct CarriedDependence {
    pub dim: usize,
    /// The write.
    pub span: Span,
    /// What touches what, with the witness: parameter values and the two iterations.
    pub message: String,
}

/// Past this many systems for one kernel the test stops (and trusts the user).
const MAX_SYSTEMS: usize = 2000;

/// The dependence carried by the outermost dim of `kernel.space`, when a witness shows one.
pub fn proven_carried(kernel: &Kernel) -> Option<CarriedDependence> {
    if kernel.space.is_empty() {
        return None;
    }
    let summary = summarize(kernel);
    let forms = AffineForms::new(&kernel.body);
    let space = SpaceBounds::of(kernel, &forms)?;
    let parallel: Vec<Handle<Local>> = kernel.space.iter().map(|d| d.var).collect();
    let mut params: Vec<u32> = summary.accesses.iter().map(|a| a.param).collect();
    params.sort_unstable();
    params.dedup();
    let one_value = crate::analysis::races::stores_of_one_value(kernel);
    let mut best: Option<CarriedDependence> = None;
    let mut systems = 0;
    for param in params {
        let refs: Vec<&ArrayAccess> = summary
            .distinct_of_param(param)
            .filter(|a| a.certainty == Certainty::Always && a.kind != AccessKind::AtomicUpdate)
            .filter(|a| a.indices.iter().all(|i| i.as_affine().is_some()))
            .collect();
        for (wi, w) in refs.iter().enumerate() {
            if w.kind != AccessKind::Write {
                continue;
            }
            for (ri, r) in refs.iter().enumerate() {
                if (r.kind == AccessKind::Write && ri < wi) || r.indices.len() != w.indices.len() {
                    continue;
                }
                if check_pair(kernel, &parallel, w, r, ri == wi).is_ok() {
                    continue;
                }
                // One store repeated with one value (`row[i] = 2.0f` in a loop over `j`):
                // any order leaves what the last iteration leaves.
                if ri == wi && one_value.contains(&w.span) {
                    continue;
                }
                let dims = best.as_ref().map_or(kernel.space.len(), |b| b.dim);
                for dim in 0..dims {
                    for earlier_write in [true, false] {
                        systems += 1;
                        if systems > MAX_SYSTEMS {
                            return best;
                        }
                        if let Some(found) = (Pair { kernel, space: &space, w, r }).witness(dim, earlier_write) {
                            best = Some(found);
                            break;
                        }
                    }
                    if best.as_ref().is_some_and(|b| b.dim == dim) {
                        break;
                    }
                }
            }
        }
    }
    best
}

/// The parallel dims' bounds as affine forms: `var = start + step*t`, `0 <= t`,
/// `trip_scale*t <= trip_last`.
struct SpaceBounds {
    dims: Vec<DimBound>,
}

struct DimBound {
    var: Handle<Local>,
    start: Affine,
    step: i64,
    trip_scale: i64,
    trip_last: Affine,
}

impl SpaceBounds {
    fn of(kernel: &Kernel, forms: &AffineForms) -> Option<SpaceBounds> {
        let body = &kernel.body;
        let mut dims = Vec::new();
        for d in &kernel.space {
            // Lowering writes the trip count as max(0, n) for a unit step, and as
            // `b < a ? (a - b - 1) / s + 1 : 0` (`<=` and `a - b` for an inclusive bound) for
            // another (`front::lower::trip_count`); an older shape, max(0, (n + s - 1) / s), is
            // read too.
            let mut count = d.trip_count;
            if let ExprKind::Binary { op: BinaryOp::Max, lhs, rhs } = &body.exprs[count].kind
                && forms.of(*lhs).and_then(|a| a.as_constant()) == Some(0)
            {
                count = *rhs;
            }
            let (trip_scale, trip_last) = match &body.exprs[count].kind {
                ExprKind::Binary { op: BinaryOp::Div, lhs, rhs } => {
                    let s = forms.of(*rhs)?.as_constant().filter(|s| *s > 0)?;
                    // t < (y + s - 1)/s rounded down  <=>  s*t <= y - 1 + ... : s*t <= y - s
                    (s, forms.of(*lhs)?.sub(&Affine::constant(s))?)
                }
                ExprKind::Select { cond, then, .. } => stepped_trip(body, forms, *cond, *then)?,
                _ => (1, forms.of(count)?.sub(&Affine::constant(1))?),
            };
            dims.push(DimBound { var: d.var, start: forms.of(d.start)?, step: d.step, trip_scale, trip_last });
        }
        Some(SpaceBounds { dims })
    }
}

/// `(s, last)` of a stepped trip count `b < a ? (a - b - 1) / s + 1 : 0` (or `b <= a ? (a - b)
/// / s + 1 : 0`): iteration `t` runs when `s*t <= last`, `last` being `a - b - 1` (or `a - b`).
fn stepped_trip(body: &crate::ir::Body, forms: &AffineForms, cond: Handle<crate::ir::Expr>, then: Handle<crate::ir::Expr>) -> Option<(i64, Affine)> {
    let ExprKind::Binary { op: op @ (BinaryOp::Lt | BinaryOp::Le), lhs: b, rhs: a } = &body.exprs[cond].kind else { return None };
    let ExprKind::Binary { op: BinaryOp::Add, lhs: quotient, rhs: one } = &body.exprs[then].kind else { return None };
    if forms.of(*one)?.as_constant() != Some(1) {
        return None;
    }
    let mut quotient = *quotient;
    if let ExprKind::Cast { arg } = &body.exprs[quotient].kind {
        quotient = *arg;
    }
    let ExprKind::Binary { op: BinaryOp::Div, rhs: divisor, .. } = &body.exprs[quotient].kind else { return None };
    let s = forms.of(*divisor)?.as_constant().filter(|s| *s > 0)?;
    let distance = forms.of(*a)?.sub(&forms.of(*b)?)?;
    let last = if *op == BinaryOp::Lt { distance.sub(&Affine::constant(1))? } else { distance };
    Some((s, last))
}

/// The variables of one system: each side's loop variables and trip counters, and the
/// scalar-param monomials both sides share.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unknown {
    Var(u8, Handle<Local>),
    Trip(u8, usize),
    LoopTrip(u8, usize),
    Params(Vec<u32>),
}

struct Pair<'a> {
    kernel: &'a Kernel,
    space: &'a SpaceBounds,
    w: &'a ArrayAccess,
    r: &'a ArrayAccess,
}

struct Builder {
    unknowns: BTreeMap<Unknown, usize>,
    equal: Vec<(Vec<(Unknown, i128)>, i128)>,
    at_least_zero: Vec<(Vec<(Unknown, i128)>, i128)>,
}

type Terms = (Vec<(Unknown, i128)>, i128);

impl Builder {
    fn unknown(&mut self, u: Unknown) -> Unknown {
        let n = self.unknowns.len();
        self.unknowns.entry(u.clone()).or_insert(n);
        u
    }

    /// `form` on `side`: `None` when it multiplies a loop variable by a param (not linear).
    fn terms(&mut self, form: &Affine, side: u8) -> Option<Terms> {
        let mut out = Vec::new();
        for (c, Monomial { params, var }) in &form.terms {
            let u = match (var, params.is_empty()) {
                (Some(v), true) => Unknown::Var(side, *v),
                (None, false) => Unknown::Params(params.clone()),
                _ => return None,
            };
            out.push((self.unknown(u), *c as i128));
        }
        Some((out, form.constant as i128))
    }

    /// `a + k*b` with `k` of 1 or -1. Unchecked on purpose: the terms are `i64` values and sums
    /// of a few of them, in `i128`, which a handful of additions cannot overflow.
    fn plus(a: Terms, b: Terms, k: i128) -> Terms {
        let mut terms = a.0;
        terms.extend(b.0.into_iter().map(|(u, c)| (u, c * k)));
        (terms, a.1 + b.1 * k)
    }

    fn system(&self) -> System {
        let n = self.unknowns.len();
        let row = |(terms, constant): &Terms| {
            let mut r = Row::zero(n);
            for (u, c) in terms {
                r.coeffs[self.unknowns[u]] += c;
            }
            r.constant = *constant;
            r
        };
        let mut s = System::new(n);
        s.equations = self.equal.iter().map(row).collect();
        s.inequalities = self.at_least_zero.iter().map(row).collect();
        s
    }
}

impl Pair<'_> {
    /// A witness that `w` in one iteration of dim `dim` and `r` in another touch one element
    /// (`earlier_write`: `w`'s iteration comes first).
    fn witness(&self, dim: usize, earlier_write: bool) -> Option<CarriedDependence> {
        let mut b = Builder { unknowns: BTreeMap::new(), equal: Vec::new(), at_least_zero: Vec::new() };
        for (side, access) in [(0u8, self.w), (1u8, self.r)] {
            for (k, d) in self.space.dims.iter().enumerate() {
                // var = start + step*t, 0 <= t, scale*t <= last
                let t = b.unknown(Unknown::Trip(side, k));
                let var = b.unknown(Unknown::Var(side, d.var));
                let start = b.terms(&d.start, side)?;
                b.equal.push(Builder::plus((vec![(var, 1)], 0), Builder::plus(start, (vec![(t.clone(), d.step as i128)], 0), 1), -1));
                b.at_least_zero.push((vec![(t.clone(), 1)], 0));
                let last = b.terms(&d.trip_last, side)?;
                b.at_least_zero.push(Builder::plus(last, (vec![(t, d.trip_scale as i128)], 0), -1));
            }
            for (k, lp) in access.loops.iter().enumerate() {
                loop_constraints(&mut b, lp, side, k)?;
            }
        }
        for (wi, ri) in self.w.indices.iter().zip(&self.r.indices) {
            let (wf, rf) = (b.terms(wi.as_affine()?, 0)?, b.terms(ri.as_affine()?, 1)?);
            b.equal.push(Builder::plus(wf, rf, -1));
        }
        for k in 0..dim {
            b.equal.push((vec![(Unknown::Trip(0, k), 1), (Unknown::Trip(1, k), -1)], 0));
        }
        // The earlier iteration's counter is at least one below the later one's.
        let (first, second) = if earlier_write { (0, 1) } else { (1, 0) };
        b.at_least_zero.push((vec![(Unknown::Trip(second, dim), 1), (Unknown::Trip(first, dim), -1)], -1));
        // Every variable the subscripts and bounds mention must be bounded on its side.
        let bounded = |u: &Unknown| match u {
            Unknown::Var(side, v) => {
                let access = if *side == 0 { self.w } else { self.r };
                self.space.dims.iter().any(|d| d.var == *v) || access.loops.iter().any(|l| l.var == *v)
            }
            _ => true,
        };
        if !b.unknowns.keys().all(bounded) {
            return None;
        }
        let x = b.system().witness()?;
        self.describe(&b, &x, dim, earlier_write)
    }

    /// The message of a witness; `None` when the element it touches cannot be computed in
    /// `i128` (a witness that far out is not worth a message that could be wrong).
    fn describe(&self, b: &Builder, x: &[i128], dim: usize, earlier_write: bool) -> Option<CarriedDependence> {
        let k = self.kernel;
        let value = |u: &Unknown| b.unknowns.get(u).map(|&i| x[i]);
        let mut params: Vec<String> = b
            .unknowns
            .keys()
            .filter_map(|u| match u {
                Unknown::Params(ps) => {
                    let name: Vec<&str> = ps.iter().map(|p| k.params.get(*p as usize).map_or("?", |p| p.name.as_str())).collect();
                    Some(format!("{} = {}", name.join("*"), value(u)?))
                }
                _ => None,
            })
            .collect();
        params.dedup();
        let iteration = |side: u8| -> String {
            let vars: Vec<String> = self.space.dims[..=dim]
                .iter()
                .map(|d| format!("{} = {}", k.body.locals[d.var].name, value(&Unknown::Var(side, d.var)).unwrap_or(0)))
                .collect();
            vars.join(", ")
        };
        let element: String = self
            .w
            .indices
            .iter()
            .map(|i| {
                let form = i.as_affine()?;
                let mut v = form.constant as i128;
                for (c, m) in &form.terms {
                    let u = match m.var {
                        Some(var) => Unknown::Var(0, var),
                        None => Unknown::Params(m.params.clone()),
                    };
                    v = v.checked_add((*c as i128).checked_mul(value(&u).unwrap_or(0))?)?;
                }
                Some(format!("[{v}]"))
            })
            .collect::<Option<String>>()?;
        let name = k.params.get(self.w.param as usize).map_or("?", |p| p.name.as_str());
        let (wt, rt) = (ref_text(k, self.w), ref_text(k, self.r));
        let var = &k.body.locals[k.space[dim].var].name;
        let verb = if self.r.kind == AccessKind::Write { "writes" } else { "reads" };
        let with = if params.is_empty() { String::new() } else { format!("with {}, ", params.join(", ")) };
        let (wi, ri) = (iteration(0), iteration(1));
        let order = if earlier_write { "a later" } else { "an earlier" };
        let message = if self.w.span == self.r.span {
            format!("`{wt}` writes the same element in different iterations of the loop over `{var}`: {with}iterations {wi} and {ri} both write {name}{element}")
        } else {
            format!(
                "`{wt}` writes an element that `{rt}` {verb} in {order} iteration of the loop over `{var}`: {with}iteration {wi} writes {name}{element} and iteration {ri} {verb} it"
            )
        };
        Some(CarriedDependence { dim, span: self.w.span, message })
    }
}

/// `var = start + step*u` with `u >= 0` and `var` short of `end`.
fn loop_constraints(b: &mut Builder, lp: &LoopBound, side: u8, k: usize) -> Option<()> {
    if lp.runs_once_at_least || lp.step == 0 {
        return None;
    }
    let u = b.unknown(Unknown::LoopTrip(side, k));
    let var = b.unknown(Unknown::Var(side, lp.var));
    let start = b.terms(lp.start.as_affine()?, side)?;
    let end = b.terms(lp.end.as_affine()?, side)?;
    b.equal.push(Builder::plus((vec![(var.clone(), 1)], 0), Builder::plus(start, (vec![(u.clone(), lp.step as i128)], 0), 1), -1));
    b.at_least_zero.push((vec![(u, 1)], 0));
    // step > 0: var <= end - 1; step < 0: var >= end + 1
    let gap = if lp.step > 0 { Builder::plus(end, (vec![(var, 1)], 0), -1) } else { Builder::plus((vec![(var, 1)], 0), end, -1) };
    b.at_least_zero.push((gap.0, gap.1 - 1));
    Some(())
}
