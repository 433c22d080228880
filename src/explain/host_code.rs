//! Where the regions sit in the host code, read from the program's syntax trees for the brief
//! account ([`super::brief`]): the host loops (`for`, `while`, `do` outside compute
//! constructs), so that a data movement can say "once, before the loop at line 45" or "per
//! iteration", and the compute constructs as written (`parallel loop`, `collapse(2)`), which
//! also finds those the front end kept on the host (they have no region).

use crate::diag::Span;
use crate::front::ast::{ClauseKind, DirectiveKind, ExternalDecl, Stmt, StmtKind, TranslationUnit};

/// A compute construct as the source writes it.
pub(super) struct Construct {
    /// The directive and the statement it covers (a compute region's span).
    pub span: Span,
    /// `parallel loop`, `kernels`, `serial`, ...
    pub name: &'static str,
    /// The construct's own `collapse(n)`.
    pub collapse: Option<u32>,
}

#[derive(Default)]
pub(super) struct HostCode {
    loops: Vec<Span>,
    pub constructs: Vec<Construct>,
}

/// `inner` lies in `outer` (or is it).
fn covers(outer: Span, inner: Span) -> bool {
    outer.tu == inner.tu && outer.lo <= inner.lo && inner.hi <= outer.hi
}

/// `inner` lies in `outer` and is not it.
fn contains(outer: Span, inner: Span) -> bool {
    covers(outer, inner) && outer != inner
}

impl HostCode {
    pub fn of(units: &[TranslationUnit]) -> HostCode {
        let mut code = HostCode::default();
        for unit in units {
            for item in &unit.items {
                if let ExternalDecl::Function(f) = item {
                    for s in &f.body.stmts {
                        code.stmt(s, false);
                    }
                }
            }
        }
        code
    }

    fn stmt(&mut self, s: &Stmt, in_compute: bool) {
        match &s.kind {
            StmtKind::Compound(block) => block.stmts.iter().for_each(|s| self.stmt(s, in_compute)),
            StmtKind::If { then, otherwise, .. } => {
                self.stmt(then, in_compute);
                if let Some(o) = otherwise {
                    self.stmt(o, in_compute);
                }
            }
            StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } | StmtKind::For { body, .. } => {
                if !in_compute {
                    self.loops.push(s.span);
                }
                self.stmt(body, in_compute);
            }
            StmtKind::Switch { body, .. } | StmtKind::Case { body, .. } | StmtKind::Default { body } | StmtKind::Labeled { body, .. } => {
                self.stmt(body, in_compute)
            }
            StmtKind::Acc { directive, body } => {
                let name = match directive.kind {
                    DirectiveKind::Parallel => Some("parallel"),
                    DirectiveKind::Kernels => Some("kernels"),
                    DirectiveKind::Serial => Some("serial"),
                    DirectiveKind::ParallelLoop => Some("parallel loop"),
                    DirectiveKind::KernelsLoop => Some("kernels loop"),
                    DirectiveKind::SerialLoop => Some("serial loop"),
                    DirectiveKind::CudaKernel(_) => Some("kernel launch"),
                    _ => None,
                };
                if let (Some(name), false) = (name, in_compute) {
                    let collapse = directive.clauses.iter().find_map(|c| match c.kind {
                        ClauseKind::Collapse(n) => Some(n),
                        _ => None,
                    });
                    self.constructs.push(Construct { span: s.span, name, collapse });
                }
                if let Some(b) = body {
                    self.stmt(b, in_compute || name.is_some());
                }
            }
            _ => {}
        }
    }

    /// The innermost host loop around `span`.
    pub fn loop_around(&self, span: Span) -> Option<Span> {
        self.loops.iter().copied().filter(|l| contains(*l, span)).max_by_key(|l| l.lo)
    }

    /// The host loops in `outer` (a data region's body, which may be a loop itself) to name as
    /// those its data stays on the device for: the outermost ones around any of `inner` (the
    /// compute regions inside), in order, else the longest one.
    pub fn loops_inside(&self, outer: Span, inner: &[Span]) -> Vec<Span> {
        let within: Vec<Span> = self.loops.iter().copied().filter(|l| covers(outer, *l)).collect();
        let around: Vec<Span> = within.iter().copied().filter(|l| inner.iter().any(|i| contains(*l, *i))).collect();
        let mut outermost: Vec<Span> = around.iter().copied().filter(|l| !around.iter().any(|o| contains(*o, *l))).collect();
        outermost.sort_by_key(|l| l.lo);
        if outermost.is_empty() {
            outermost.extend(within.iter().copied().max_by_key(|l| l.hi - l.lo));
        }
        outermost
    }

    /// The construct whose statement holds `span` (a kernel's loop).
    pub fn construct_around(&self, span: Span) -> Option<&Construct> {
        self.constructs.iter().filter(|c| covers(c.span, span)).max_by_key(|c| c.span.lo)
    }

    /// Whether some region covers `construct` (compute regions of consecutive constructs may
    /// be one region); one that none covers runs on the host.
    pub fn offloaded(construct: &Construct, regions: &[crate::ir::Region]) -> bool {
        regions.iter().any(|r| covers(r.span, construct.span))
    }
}
