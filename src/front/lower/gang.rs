//! OpenACC 3.3 gang dimensions: `num_gangs(n1, n2, n3)` on a `parallel` construct asks for
//! gangs in up to three dimensions, and `loop gang(dim: d)` spreads a loop across dimension
//! `d`. Both are scheduling: every iteration of such a loop runs once whatever the gangs, so
//! Yosegi runs them as it runs any loop nest of a construct. Each loop becomes a parallel
//! dimension laid onto a grid axis by nesting (innermost on `x`), one iteration per thread and
//! as many blocks as the trip counts need. Gang loops nested as OpenACC requires (dims
//! decreasing inward) thus land dimension `d` on axis `d - 1` (`gang(dim: 1)` on `x`, 2 on `y`,
//! 3 on `z`); `explain` says which axis each one got. The numbers of gangs asked for are not
//! the numbers of blocks launched, which the trip counts decide.
//!
//! Checked here, each an error at its clause: `num_gangs` takes one value on `kernels`
//! (OpenACC 3.3 2.5.10); a `dim` is a constant 1, 2 or 3, and no more than the number of
//! values of its construct's `num_gangs` when there is one; a gang loop inside another gang
//! loop has a lower dim when either of them gives one (a plain `gang` is dimension 1).

use super::*;

/// The innermost gang loop around the statements being checked.
#[derive(Clone, Copy)]
struct Enclosing {
    dim: u8,
    /// The loop wrote `dim:` (a plain `gang` is dimension 1 without saying so).
    explicit: bool,
}

impl<'a> Lowerer<'a> {
    /// Checks the gang dimensions of compute construct `d` whose statement is `body`. Returns
    /// its `num_gangs` values as written, or `None` after reporting an error.
    pub(super) fn check_gang_dimensions(&mut self, d: &Directive, body: &Stmt, sema: &Sema) -> Option<Vec<String>> {
        let errors_before = self.diags.iter().filter(|x| x.is_error()).count();
        let mut limit = None;
        let mut values = Vec::new();
        for c in &d.clauses {
            if let ClauseKind::NumGangs(v) = &c.kind {
                if v.len() > 1 && matches!(d.kind, DirectiveKind::Kernels | DirectiveKind::KernelsLoop) {
                    self.diags.push(
                        Diagnostic::error(c.span, "`num_gangs` takes one value on a `kernels` construct")
                            .with_help("gang dimensions are for `parallel` constructs: use `parallel`, or give one number of gangs"),
                    );
                }
                limit = Some(v.len());
                values = v.iter().map(|e| norm(&self.text(e.span))).collect();
            }
        }
        if matches!(d.kind, DirectiveKind::ParallelLoop | DirectiveKind::KernelsLoop | DirectiveKind::SerialLoop) {
            // The combined construct's loop clauses are the first loop's.
            let clauses: Vec<&Clause> = d.clauses.iter().collect();
            self.gang_loop(&clauses, Some(body), None, limit, sema);
        } else {
            self.gang_stmt(body, None, limit, sema);
        }
        let errors_after = self.diags.iter().filter(|x| x.is_error()).count();
        (errors_after == errors_before).then_some(values)
    }

    /// A loop with `clauses` around `body`, inside the gang loop `enclosing`.
    fn gang_loop(&mut self, clauses: &[&Clause], body: Option<&Stmt>, enclosing: Option<Enclosing>, limit: Option<usize>, sema: &Sema) {
        let gang = clauses.iter().find_map(|c| match &c.kind {
            ClauseKind::Gang { dim, .. } => Some((dim.as_ref(), c.span)),
            _ => None,
        });
        let mut inner = enclosing;
        if let Some((dim, clause_span)) = gang {
            let here = match dim {
                None => Some(Enclosing { dim: 1, explicit: false }),
                Some(e) => match sema.const_eval(e) {
                    Some(v @ 1..=3) => Some(Enclosing { dim: v as u8, explicit: true }),
                    _ => {
                        self.diags.push(
                            Diagnostic::error(e.span, format!("`dim: {}` is not a gang dimension", norm(&self.text(e.span))))
                                .with_help("a gang dimension is a constant 1, 2 or 3"),
                        );
                        None
                    }
                },
            };
            if let (Some(h), Some(e)) = (here, dim)
                && let Some(n) = limit.filter(|&n| h.dim as usize > n)
            {
                self.diags.push(
                    Diagnostic::error(e.span, format!("`gang(dim: {})` names gang dimension {}, but the construct's `num_gangs` gives {n}", h.dim, h.dim))
                        .with_help(format!("give `num_gangs` a value per dimension up to {}: num_gangs(n1, ..., n{})", h.dim, h.dim)),
                );
            }
            if let (Some(h), Some(outer)) = (here, enclosing)
                && (h.explicit || outer.explicit)
                && h.dim >= outer.dim
            {
                self.diags.push(
                    Diagnostic::error(clause_span, format!("a `gang(dim: {})` loop cannot be inside a `gang(dim: {})` loop", h.dim, outer.dim))
                        .with_help("nest gang loops with decreasing dimensions: gang(dim: 2) outside gang(dim: 1)"),
                );
            }
            inner = here.or(enclosing);
        }
        if let Some(b) = body {
            self.gang_stmt(b, inner, limit, sema);
        }
    }

    /// The loops `s` holds.
    fn gang_stmt(&mut self, s: &Stmt, enclosing: Option<Enclosing>, limit: Option<usize>, sema: &Sema) {
        let each = |this: &mut Self, inner: &Stmt| this.gang_stmt(inner, enclosing, limit, sema);
        match &s.kind {
            StmtKind::Acc { directive, body } if matches!(directive.kind, DirectiveKind::Loop) => {
                let clauses: Vec<&Clause> = directive.clauses.iter().collect();
                self.gang_loop(&clauses, body.as_deref(), enclosing, limit, sema);
            }
            StmtKind::Acc { body: Some(b), .. } => each(self, b),
            StmtKind::Compound(b) => {
                for st in &b.stmts {
                    each(self, st);
                }
            }
            StmtKind::If { then, otherwise, .. } => {
                each(self, then);
                if let Some(o) = otherwise {
                    each(self, o);
                }
            }
            StmtKind::While { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Switch { body, .. }
            | StmtKind::Case { body, .. }
            | StmtKind::Default { body }
            | StmtKind::Labeled { body, .. } => each(self, body),
            StmtKind::Acc { body: None, .. }
            | StmtKind::Expr(_)
            | StmtKind::Decl(_)
            | StmtKind::Goto(_)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Return(_) => {}
        }
    }
}
