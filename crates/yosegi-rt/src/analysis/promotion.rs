//! Register promotion: the global elements a loop of a grid kernel reads and writes at one
//! place, which the CUDA compiler keeps in a register for the loop's life (LLVM's promotion of
//! loop-invariant memory: one load before the loop, one store after it). `C[i][j] += A[i][k] *
//! B[k][j]` over `k` touches `C[i][j]` twice an iteration in the C the back end writes, and
//! once a loop on the GPU; a thread-per-column sum `mean[j] += data[i][j]` reads one array, not
//! two. The simulator counts what the GPU does, so it counts such an element once a loop entry
//! (`runtime::sim`), and the model's memory, L2 and latency terms follow.
//!
//! The compiler may promote an element only where nothing else in the loop may reach it, and
//! only where the loop surely reaches the accesses. A param is promoted in a loop when:
//! - every access to it in the loop (its condition, body and continuing block, nested loops
//!   included) has the same subscripts, made of scalar params, thread and block indices,
//!   constants and locals the loop does not assign (no loads);
//! - none of them sits under an `if` or a `?:` inside the loop;
//! - no other global access in the loop may touch it: the other array is another param and
//!   either of the two is `__restrict__` (the back end writes every array param so when no
//!   param the kernel writes shares an allocation with another: `back::cuda::param_aliasing`),
//!   or neither the param nor the other access is written in the loop;
//! - the loop has no barrier, atomic, call of a device function, access at a computed address
//!   or through a row table, `return`, or `break`/`continue` of its own.

use std::collections::{HashMap, HashSet};

use crate::ir::{ArrayRef, Block, Body, ExprKind, GridKernel, Handle, Local, ParamKind, Stmt, Expr};

/// The params each loop of a grid kernel's body keeps in a register, by the loop statement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Promoted {
    /// Keyed by the address of the `Stmt::Loop` in the kernel's body: the body is borrowed,
    /// not moved, for as long as a launch runs.
    loops: HashMap<usize, Vec<u32>>,
}

impl Promoted {
    /// The params `stmt` (a loop of the body the promotions were found in) keeps in registers.
    pub fn of(&self, stmt: &Stmt) -> &[u32] {
        self.loops.get(&(stmt as *const Stmt as usize)).map_or(&[], Vec::as_slice)
    }

    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }
}

/// The promotions of `kernel`'s loops, with `restrict[p]` saying whether array param `p` is
/// written `__restrict__` in the CUDA C (params past the end are not).
pub fn promoted_params(kernel: &GridKernel, restrict: &[bool]) -> Promoted {
    let body = &kernel.body;
    let row_tables: HashSet<u32> = kernel
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.kind, ParamKind::RowTable { .. }))
        .map(|(i, _)| i as u32)
        .collect();
    let mut loops = HashMap::new();
    crate::ir::for_each_stmt(&body.block, &mut |stmt| {
        let Stmt::Loop { cond, body: loop_body, continuing, .. } = stmt else { return };
        let mut scan = LoopScan { body, row_tables: &row_tables, accesses: Vec::new(), assigned: HashSet::new(), blocked: false, nested: 0 };
        if let Some(c) = cond {
            scan.expr(*c, false);
        }
        scan.block(loop_body, false);
        scan.block(continuing, false);
        if scan.blocked {
            return;
        }
        let params = scan.promotable(restrict);
        if !params.is_empty() {
            loops.insert(stmt as *const Stmt as usize, params);
        }
    });
    Promoted { loops }
}

/// One global access inside the loop.
struct Access {
    array: ArrayRef,
    indices: Vec<Handle<Expr>>,
    store: bool,
    conditional: bool,
}

/// What one loop does, gathered in one walk.
struct LoopScan<'b> {
    body: &'b Body,
    row_tables: &'b HashSet<u32>,
    accesses: Vec<Access>,
    assigned: HashSet<Handle<Local>>,
    /// Something in the loop stops every promotion in it.
    blocked: bool,
    /// Loops inside the scanned one the walk is in (their `break`s are their own).
    nested: u32,
}

impl LoopScan<'_> {
    fn block(&mut self, block: &Block, conditional: bool) {
        for stmt in block {
            self.stmt(stmt, conditional);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, conditional: bool) {
        match stmt {
            Stmt::Assign { local, value } => {
                self.assigned.insert(*local);
                self.expr(*value, conditional);
            }
            Stmt::Store { array, indices, value, .. } => {
                for &i in indices {
                    self.expr(i, conditional);
                }
                self.expr(*value, conditional);
                self.access(*array, indices, true, conditional);
            }
            Stmt::If { cond, then, otherwise } => {
                self.expr(*cond, conditional);
                self.block(then, true);
                self.block(otherwise, true);
            }
            Stmt::Loop { cond, body, continuing, range, .. } => {
                if let Some(r) = range {
                    self.assigned.insert(r.var);
                }
                self.nested += 1;
                if let Some(c) = cond {
                    self.expr(*c, conditional);
                }
                self.block(body, conditional);
                self.block(continuing, conditional);
                self.nested -= 1;
            }
            Stmt::Break | Stmt::Continue => {
                if self.nested == 0 {
                    self.blocked = true;
                }
            }
            Stmt::Eval(e) => self.expr(*e, conditional),
            Stmt::Atomic { .. } | Stmt::Return(_) | Stmt::Barrier => self.blocked = true,
        }
    }

    fn expr(&mut self, e: Handle<Expr>, conditional: bool) {
        match &self.body.exprs[e].kind {
            ExprKind::Load { array, indices } => {
                for &i in indices {
                    self.expr(i, conditional);
                }
                self.access(*array, indices, false, conditional);
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.expr(*cond, conditional);
                self.expr(*then, true);
                self.expr(*otherwise, true);
            }
            ExprKind::Call { .. } => self.blocked = true,
            kind => {
                for operand in kind.operands() {
                    self.expr(operand, conditional);
                }
            }
        }
    }

    fn access(&mut self, array: ArrayRef, indices: &[Handle<Expr>], store: bool, conditional: bool) {
        match array {
            ArrayRef::Param(p) if self.row_tables.contains(&p) => self.blocked = true,
            ArrayRef::Address(_) => self.blocked = true,
            ArrayRef::Param(_) | ArrayRef::Partials(_) => {
                self.accesses.push(Access { array, indices: indices.to_vec(), store, conditional })
            }
            ArrayRef::Local(l) => {
                if store {
                    self.assigned.insert(l);
                }
            }
            ArrayRef::Shared(_) => {}
        }
    }

    /// The params of the loop's accesses that meet the rules of the module doc.
    fn promotable(&self, restrict: &[bool]) -> Vec<u32> {
        let is_restrict = |a: ArrayRef| matches!(a, ArrayRef::Param(p) if restrict.get(p as usize).copied().unwrap_or(false));
        let mut out: Vec<u32> = Vec::new();
        for first in &self.accesses {
            let ArrayRef::Param(p) = first.array else { continue };
            if out.contains(&p) {
                continue;
            }
            let (own, others): (Vec<&Access>, Vec<&Access>) = self.accesses.iter().partition(|a| a.array == first.array);
            let same_place = own.iter().all(|a| {
                !a.conditional && a.indices.len() == first.indices.len() && a.indices.iter().zip(&first.indices).all(|(&x, &y)| same_expr(self.body, x, y))
            });
            if !same_place || !first.indices.iter().all(|&i| self.invariant(i)) {
                continue;
            }
            let written = own.iter().any(|a| a.store);
            let apart = others.iter().all(|q| is_restrict(first.array) || is_restrict(q.array) || !(written || q.store));
            if apart {
                out.push(p);
            }
        }
        out.sort_unstable();
        out
    }

    /// Whether `e` has the same value in every iteration of the loop: no loads, no calls, no
    /// local the loop assigns.
    fn invariant(&self, e: Handle<Expr>) -> bool {
        match &self.body.exprs[e].kind {
            ExprKind::Load { .. } | ExprKind::Call { .. } => false,
            ExprKind::Local(l) => !self.assigned.contains(l),
            kind => kind.operands().into_iter().all(|o| self.invariant(o)),
        }
    }
}

/// Whether `a` and `b` are the same expression tree (same operations on the same leaves).
fn same_expr(body: &Body, a: Handle<Expr>, b: Handle<Expr>) -> bool {
    if a == b {
        return true;
    }
    let (ea, eb) = (&body.exprs[a], &body.exprs[b]);
    let (oa, ob) = (ea.kind.operands(), eb.kind.operands());
    ea.ty == eb.ty
        && oa.len() == ob.len()
        && ea.kind.with_operands(&ob) == eb.kind
        && oa.iter().zip(&ob).all(|(&x, &y)| same_expr(body, x, y))
}

#[cfg(test)]
mod tests;
