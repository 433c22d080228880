//! `switch` in kernels. A switch whose every case ends with `break` (the common form) becomes a
//! chain of `if`s. Any other (cases that fall through into the next, `break` in the middle of a
//! case, statements before the first label) becomes a one-trip loop that walks the cases in
//! order with a "running" flag: a case runs when its label matched or an earlier case fell into
//! it, and `break` leaves the loop.

use super::*;

/// The labels of one group of a switch body (`None` is `default`) and the statements up to the
/// next label.
type Group<'s> = (Vec<Option<&'s ast::Expr>>, Vec<&'s ast::Stmt>);

/// Whether `s` contains a `break` that leaves the switch it is in (one not inside a nested
/// loop or switch).
fn breaks_out_of_switch(s: &ast::Stmt) -> bool {
    match &s.kind {
        StmtKind::Break => true,
        StmtKind::Compound(b) => b.stmts.iter().any(breaks_out_of_switch),
        StmtKind::If { then, otherwise, .. } => breaks_out_of_switch(then) || otherwise.as_deref().is_some_and(breaks_out_of_switch),
        StmtKind::Case { body, .. } | StmtKind::Default { body } | StmtKind::Labeled { body, .. } => breaks_out_of_switch(body),
        StmtKind::Acc { body: Some(b), .. } => breaks_out_of_switch(b),
        _ => false,
    }
}

impl<'a> KernelBuilder<'a> {
    pub(super) fn switch(&mut self, cond: &ast::Expr, body: &ast::Stmt, span: Span, out: &mut Block) -> R<()> {
        let c = self.expr(cond)?;
        let cty = sema::promote(self.ty(c));
        if cty.is_float() {
            return Err(err(cond.span, "switch on a floating-point value", "switch on an integer"));
        }
        let c = self.cast(c, cty);
        let stmts: Vec<&ast::Stmt> = match &body.kind {
            StmtKind::Compound(block) => block.stmts.iter().collect(),
            _ => vec![body],
        };
        // Statements before the first label never run (a declaration there still declares).
        let mut preamble: Vec<&ast::Stmt> = Vec::new();
        let mut groups: Vec<Group> = Vec::new();
        for st in stmts {
            let mut labels = Vec::new();
            let mut cur = st;
            loop {
                match &cur.kind {
                    StmtKind::Case { value, body } => {
                        labels.push(Some(value));
                        cur = body;
                    }
                    StmtKind::Default { body } => {
                        labels.push(None);
                        cur = body;
                    }
                    _ => break,
                }
            }
            match groups.last_mut() {
                _ if !labels.is_empty() => groups.push((labels, vec![cur])),
                Some(g) => g.1.push(cur),
                None => preamble.push(cur),
            }
        }
        let last = groups.len();
        let as_if_chain = preamble.is_empty()
            && groups.iter().enumerate().all(|(gi, (_, stmts))| {
                let ends_with_break = matches!(stmts.last().map(|s| &s.kind), Some(StmtKind::Break));
                let before_break = &stmts[..stmts.len() - usize::from(ends_with_break)];
                (ends_with_break || gi + 1 == last) && !before_break.iter().any(|s| breaks_out_of_switch(s))
            });
        if as_if_chain {
            self.switch_as_if_chain(c, cty, &groups, out)
        } else {
            self.switch_with_fallthrough(c, cty, &preamble, &groups, span, out)
        }
    }

    /// `selector == label` for the case label `v`, in the switch's type.
    fn case_test(&mut self, selector: Handle<Expr>, cty: ScalarType, v: &ast::Expr) -> R<Handle<Expr>> {
        let val = self.sema.const_eval(v).ok_or_else(|| err(v.span, "case label is not a constant", "use integer constants as case labels"))?;
        let k = self.int_const(val, ScalarType::I64);
        let k = self.cast(k, cty);
        Ok(self.binary(BinaryOp::Eq, selector, k, ScalarType::Bool, v.span))
    }

    fn any_of(&mut self, a: Option<Handle<Expr>>, b: Handle<Expr>, span: Span) -> Handle<Expr> {
        match a {
            Some(a) => self.binary(BinaryOp::LogOr, a, b, ScalarType::Bool, span),
            None => b,
        }
    }

    /// Every case ends with `break` (the last may end without): `if (c == 1) {..} else if ...`,
    /// with the default's statements as the final `else`.
    fn switch_as_if_chain(&mut self, c: Handle<Expr>, cty: ScalarType, groups: &[Group], out: &mut Block) -> R<()> {
        let mut arms: Vec<(Option<Handle<Expr>>, Block)> = Vec::new();
        for (labels, stmts) in groups {
            let ends_with_break = matches!(stmts.last().map(|s| &s.kind), Some(StmtKind::Break));
            let body_stmts = &stmts[..stmts.len() - usize::from(ends_with_break)];
            let mut test: Option<Handle<Expr>> = None;
            let mut is_default = false;
            for l in labels {
                match l {
                    None => is_default = true,
                    Some(v) => {
                        let eq = self.case_test(c, cty, v)?;
                        test = Some(self.any_of(test, eq, v.span));
                    }
                }
            }
            self.breaks.push(BreakTarget::Switch);
            self.push_scope();
            let mut b = Vec::new();
            for st in body_stmts {
                self.stmt(st, &mut b);
            }
            self.pop_scope();
            self.breaks.pop();
            arms.push((if is_default { None } else { test }, b));
        }
        // Build the chain from the last arm backwards; the default arm is the final else.
        let default_block = arms.iter().find(|(t, _)| t.is_none()).map(|(_, b)| b.clone()).unwrap_or_default();
        let mut chain = default_block;
        for (test, b) in arms.into_iter().rev() {
            if let Some(t) = test {
                chain = vec![Stmt::If { cond: t, then: b, otherwise: chain }];
            }
        }
        out.extend(chain);
        Ok(())
    }

    /// The general switch:
    ///
    /// ```text
    /// sel = c; running = false; [no_case = !(sel == k1 || sel == k2 ...);]
    /// do {
    ///     running = running || sel == k1;   if (running) { case 1's statements }
    ///     running = running || no_case;     if (running) { default's statements }
    ///     ...
    /// } while (0);
    /// ```
    ///
    /// `break` leaves the loop; `continue` sets a flag and leaves it, and is taken after it.
    fn switch_with_fallthrough(&mut self, c: Handle<Expr>, cty: ScalarType, preamble: &[&ast::Stmt], groups: &[Group], span: Span, out: &mut Block) -> R<()> {
        let sel = self.new_local("switch", cty, LocalKind::Var, span);
        out.push(Stmt::Assign { local: sel, value: c });
        let running = self.new_local("case_running", ScalarType::Bool, LocalKind::Var, span);
        let no = self.add(ExprKind::ConstInt(0), ScalarType::Bool, span);
        out.push(Stmt::Assign { local: running, value: no });
        let no_case = if groups.iter().any(|(labels, _)| labels.iter().any(Option::is_none)) {
            let mut any = None;
            for v in groups.iter().flat_map(|(labels, _)| labels.iter().flatten()) {
                let s = self.add(ExprKind::Local(sel), cty, span);
                let eq = self.case_test(s, cty, v)?;
                any = Some(self.any_of(any, eq, v.span));
            }
            let matched = any.unwrap_or_else(|| self.add(ExprKind::ConstInt(0), ScalarType::Bool, span));
            let none = self.add(ExprKind::Unary { op: UnaryOp::Not, arg: matched }, ScalarType::Bool, span);
            let l = self.new_local("no_case", ScalarType::Bool, LocalKind::Var, span);
            out.push(Stmt::Assign { local: l, value: none });
            Some(l)
        } else {
            None
        };

        self.breaks.push(BreakTarget::SwitchLoop);
        self.switch_continues.push(None);
        self.push_scope();
        let r = (|| -> R<Block> {
            let mut never_run = Vec::new();
            for st in preamble {
                self.stmt(st, &mut never_run);
            }
            let mut cases = Vec::new();
            for (labels, stmts) in groups {
                let mut test = None;
                for l in labels {
                    let t = match l {
                        Some(v) => {
                            let s = self.add(ExprKind::Local(sel), cty, v.span);
                            self.case_test(s, cty, v)?
                        }
                        None => self.add(ExprKind::Local(no_case.expect("made when a default exists")), ScalarType::Bool, span),
                    };
                    test = Some(self.any_of(test, t, span));
                }
                let was_running = self.add(ExprKind::Local(running), ScalarType::Bool, span);
                let now_running = match test {
                    Some(t) => self.binary(BinaryOp::LogOr, was_running, t, ScalarType::Bool, span),
                    None => was_running,
                };
                cases.push(Stmt::Assign { local: running, value: now_running });
                let mut b = Vec::new();
                for st in stmts {
                    self.stmt(st, &mut b);
                }
                let is_running = self.add(ExprKind::Local(running), ScalarType::Bool, span);
                cases.push(Stmt::If { cond: is_running, then: b, otherwise: Vec::new() });
            }
            Ok(cases)
        })();
        self.pop_scope();
        self.breaks.pop();
        let continue_flag = self.switch_continues.pop().flatten();
        let cases = r?;
        if let Some(flag) = continue_flag {
            let no = self.add(ExprKind::ConstInt(0), ScalarType::Bool, span);
            out.push(Stmt::Assign { local: flag, value: no });
        }
        let never = self.add(ExprKind::ConstInt(0), ScalarType::Bool, span);
        out.push(Stmt::Loop { cond: Some(never), test_first: false, body: cases, continuing: Vec::new(), range: None });
        // A `return` of an inlined function inside the switch left the loop: leave the rest too.
        self.after_loop(out);
        if let Some(flag) = continue_flag {
            let mut then = Vec::new();
            self.continue_stmt(span, &mut then)?;
            let taken = self.add(ExprKind::Local(flag), ScalarType::Bool, span);
            out.push(Stmt::If { cond: taken, then, otherwise: Vec::new() });
        }
        Ok(())
    }
}
