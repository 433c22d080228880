//! Which redundant iterations each statement of a fused member runs: the effect of the paper's
//! loop distribution, without making new loops.
//!
//! The paper distributes a loop that defines several arrays into one loop per array before it
//! fuses, so that each array is computed only on the redundant iterations its readers need.
//! Here the member stays one loop and each of its statements runs only where its result is
//! needed:
//!
//! * a store of an intermediate: where its readers need it ([`Intermediate::needed`]);
//! * any other store: on the block's own iterations only;
//! * an assignment of a local: where the statements that read the local run (the bounding box
//!   of their ranges), so a temporary that only one array's store uses is computed only where
//!   that array is.
//!
//! Anything else (conditions, inner loops, atomics, calls) runs on the member's whole extension,
//! and so does every local it reads: the slice only ever narrows what is provably unused.

use std::collections::{BTreeSet, HashMap};

use crate::ir::*;

use super::chain::ChainPlan;

/// Redundant iterations `(left, right)` per space dim.
pub type Range = Vec<(i64, i64)>;

/// Per top-level statement of member `m`'s body: the redundant iterations it must run, where
/// fewer than the member's extension (`None`: all of them).
pub fn statement_ranges(module: &Module, plan: &ChainPlan, m: usize) -> Vec<Option<Range>> {
    let k = &module.kernels[plan.members[m]];
    let extension = &plan.extension[m];
    let own: Range = vec![(0, 0); plan.dims];
    let block = &k.body.block;
    let assignments = assignment_counts(block);
    let sliceable = |l: Handle<Local>| {
        let local = &k.body.locals[l];
        matches!(local.kind, LocalKind::Var) && local.array_dims.is_none() && assignments.get(&l) == Some(&1)
    };
    // Walked from the last statement back, so each local's readers are known at its assignment.
    let mut needed_of: HashMap<Handle<Local>, Range> = HashMap::new();
    let mut ranges: Vec<Range> = vec![extension.clone(); block.len()];
    for (i, stmt) in block.iter().enumerate().rev() {
        let range = match stmt {
            Stmt::Store { array: ArrayRef::Param(p), value, indices, .. } if pure(&k.body, indices.iter().chain([value])) => {
                let version = plan.versions.write(m, k.params[*p as usize].arg);
                match plan.intermediates.get(&version).filter(|i| i.producer == m) {
                    Some(inter) => inter.needed.clone(),
                    None => own.clone(),
                }
            }
            Stmt::Assign { local, value } if sliceable(*local) && pure(&k.body, [value]) => {
                needed_of.get(local).cloned().unwrap_or_else(|| own.clone())
            }
            _ => extension.clone(),
        };
        for l in locals_read(&k.body, stmt) {
            let entry = needed_of.entry(l).or_insert_with(|| own.clone());
            for (e, r) in entry.iter_mut().zip(&range) {
                *e = (e.0.max(r.0), e.1.max(r.1));
            }
        }
        ranges[i] = range;
    }
    ranges
        .into_iter()
        .zip(block)
        .map(|(range, stmt)| {
            let narrower = range.iter().zip(extension).any(|(r, e)| r.0 < e.0 || r.1 < e.1);
            (narrower && matches!(stmt, Stmt::Assign { .. })).then_some(range)
        })
        .collect()
}

/// How many times each local is assigned anywhere in `block` (a loop's counter and an atomic's
/// capture count twice: they are never sliced).
fn assignment_counts(block: &[Stmt]) -> HashMap<Handle<Local>, usize> {
    let mut counts: HashMap<Handle<Local>, usize> = HashMap::new();
    for_each_stmt(block, &mut |s| match s {
        Stmt::Assign { local, .. } => *counts.entry(*local).or_default() += 1,
        Stmt::Loop { range: Some(r), .. } => *counts.entry(r.var).or_default() += 2,
        Stmt::Atomic { capture: Some(c), .. } => *counts.entry(*c).or_default() += 2,
        Stmt::Store { array: ArrayRef::Local(l), .. } | Stmt::Atomic { array: ArrayRef::Local(l), .. } => {
            *counts.entry(*l).or_default() += 2
        }
        _ => {}
    });
    counts
}

/// Every local `stmt` (and the statements nested in it) reads, arrays indexed included.
fn locals_read(body: &Body, stmt: &Stmt) -> BTreeSet<Handle<Local>> {
    let mut read = Vec::new();
    for_each_stmt(std::slice::from_ref(stmt), &mut |s| match s {
        Stmt::Store { array: ArrayRef::Local(l), .. } | Stmt::Atomic { array: ArrayRef::Local(l), .. } => read.push(*l),
        Stmt::Loop { range: Some(r), .. } => read.push(r.var),
        _ => {}
    });
    for root in stmt.root_exprs() {
        body.locals_read(root, &mut read);
    }
    read.into_iter().collect()
}

/// Whether evaluating `roots` has no effect but its value (no call of a device function, which
/// may write memory).
fn pure<'a>(body: &Body, roots: impl IntoIterator<Item = &'a Handle<Expr>>) -> bool {
    let mut stack: Vec<Handle<Expr>> = roots.into_iter().copied().collect();
    let mut seen = BTreeSet::new();
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        if matches!(body.exprs[e].kind, ExprKind::Call { .. }) {
            return false;
        }
        stack.extend(body.exprs[e].kind.operands());
    }
    true
}
