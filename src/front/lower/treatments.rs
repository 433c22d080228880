//! What a compute construct makes of the host scalars its loops use: the treatments its
//! `private`, `firstprivate` and `reduction` clauses give (and what they refuse), the reductions
//! a `kernels` loop is recognised to make without a clause, and the scalars a parallel loop
//! assigns that are made private to each iteration automatically.

use super::*;

/// What [`Lowerer::auto_privatize`] made of the host scalars a parallel loop nest assigns
/// without a clause.
#[derive(Default)]
pub(super) struct Implicit {
    /// Private to each iteration (for explain).
    pub private: Vec<String>,
    /// C statements the host runs after the construct: the final values of loop variables
    /// the iterations keep private and the host reads afterwards.
    pub host_after: Vec<String>,
    /// One line each, for explain: what was decided beyond making a scalar private.
    pub notes: Vec<String>,
}

impl<'a> Lowerer<'a> {
    /// The host scalars a parallel loop nest assigns without a clause: private to each
    /// iteration (added to `treatments`), stored in place when every iteration that assigns
    /// one gives it the same value ([`Treatment::SameValue`]), and, for a loop variable the
    /// host reads after the loop, private with its final value computed by the host (the loop
    /// header run with an empty body, `for (i = 0; i < n; i++);`). `Err` with a diagnostic and
    /// a short reason when one carries a value between iterations (read before an iteration
    /// assigns it) or out of the loop (read after the construct): then the sequential answer
    /// depends on the order of the iterations.
    pub(super) fn auto_privatize(
        &self,
        outer: &Stmt,
        nest: &[loops::NestLoop],
        counted: &[loops::CountedLoop],
        sema: &Sema,
        site: &Site,
        treatments: &mut HashMap<String, Treatment>,
    ) -> Result<Implicit, (Diagnostic, String)> {
        let iteration = loops::for_body(outer);
        let nest_vars: HashSet<&str> = counted.iter().map(|c| c.var.as_str()).collect();
        let written = walk::written_names(outer);
        let mut names: Vec<String> = written.iter().cloned().collect();
        names.sort();
        // A host scalar updated under `atomic` is shared on purpose (updated in place).
        let mut atomic_targets = HashSet::new();
        walk::each_stmt(outer, &mut |st| {
            if let StmtKind::Acc { directive, body: Some(b) } = &st.kind {
                if matches!(directive.kind, DirectiveKind::Atomic(_)) {
                    atomic_targets.extend(walk::written_names(b));
                }
            }
        });
        let mut found = Implicit::default();
        for n in names {
            if treatments.contains_key(&n) || declared_in(outer, &n) || atomic_targets.contains(&n) {
                continue;
            }
            let Some(v) = sema.lookup_var(&n) else { continue };
            if !v.ty.is_arithmetic() {
                continue;
            }
            let is_nest_var = nest_vars.contains(n.as_str());
            if !is_nest_var && v.ty.scalar().is_some() {
                if let Some(value) = same_value_writes(outer, &n, &written) {
                    treatments.insert(n.clone(), Treatment::SameValue);
                    found.notes.push(format!(
                        "`{n}`: every iteration that assigns it stores `{}`, so the iterations store it in place (equal values race harmlessly)",
                        self.text(value.span)
                    ));
                    continue;
                }
            }
            if !is_nest_var {
                if let Some(span) = private::exposed_read(iteration, &n) {
                    let line = self.sources.location(span).line;
                    return Err((
                        Diagnostic::error(span, format!("`{n}` is read here before this iteration assigns it, so the iterations of the parallel loop share it"))
                            .with_help(format!(
                                "if it accumulates, add reduction(op:{n}) (or update it under `#pragma acc atomic`); if each iteration computes it, assign it before reading it, or declare it inside the loop"
                            )),
                        format!("`{n}` is read (line {line}) before an iteration assigns it, so each iteration would read the value the one before it left"),
                    ));
                }
            }
            let local = matches!(v.storage, Storage::Local | Storage::Param);
            if let Some(f) = self.current_function {
                if let Some(read) = private::live_after(f, site.construct, &n, local) {
                    if let Some(statement) = self.final_value_statement(outer, nest, counted, sema, &n, &written) {
                        found.notes.push(format!("`{n}`: private to each iteration; the host gives it its final value after the loop (`{statement}`)"));
                        found.host_after.push(statement);
                        if !is_nest_var {
                            treatments.insert(n.clone(), Treatment::Private);
                            found.private.push(n);
                        }
                        continue;
                    }
                    let mut first_write = outer.span;
                    walk::each_expr(outer, &mut |e| {
                        if first_write == outer.span && walk::assigned_name(e) == Some(n.as_str()) {
                            first_write = e.span;
                        }
                    });
                    let message = if local {
                        let line = self.sources.location(read).line;
                        format!("`{n}` is assigned in this parallel loop and read after it (line {line}), where it holds the value of the last iteration")
                    } else {
                        format!("`{n}` is assigned in this parallel loop and is not local to the function, so code after the loop may read the value of the last iteration")
                    };
                    return Err((
                        Diagnostic::error(first_write, message).with_help(format!(
                            "declare `{n}` inside the loop if only the loop uses it; to combine the iterations' values use reduction(op:{n}); or compute the final value after the loop"
                        )),
                        format!("`{n}` is read after the loop, which needs the value its last iteration leaves"),
                    ));
                }
            }
            if !is_nest_var {
                treatments.insert(n.clone(), Treatment::Private);
                found.private.push(n);
            }
        }
        Ok(found)
    }

    /// For a loop variable `name` the host reads after the construct, whose value after the
    /// loop does not depend on the order of the iterations: the C statement that gives it
    /// that value on the host. A loop of the nest: its header with an empty body. A loop
    /// every iteration runs, whose bounds nothing in the construct changes: its header, run
    /// when the nest runs an iteration at all (its loops' bounds then must not depend on
    /// each other).
    fn final_value_statement(
        &self,
        outer: &Stmt,
        nest: &[loops::NestLoop],
        counted: &[loops::CountedLoop],
        sema: &Sema,
        name: &str,
        written: &HashSet<String>,
    ) -> Option<String> {
        let header = |this: &Self, stmt: &Stmt| -> Option<String> {
            let StmtKind::For { init: Some(ast::ForInit::Expr(init)), cond: Some(cond), step: Some(step), .. } = &stmt.kind else { return None };
            Some(format!("for ({}; {}; {});", this.text(init.span), this.text(cond.span), this.text(step.span)))
        };
        let invariant = |e: &ast::Expr, except: &str| invariant_expr(e, except, outer, written);
        if let Some(k) = counted.iter().position(|c| c.var == name) {
            let c = &counted[k];
            let others: Vec<&str> = counted.iter().filter(|o| o.var != name).map(|o| o.var.as_str()).collect();
            let mentions_other = |e: &ast::Expr| others.iter().any(|o| walk::count_name(e, o) > 0);
            if c.decl.is_some() || mentions_other(c.lo) || mentions_other(c.bound) || !invariant(c.lo, name) || !invariant(c.bound, name) {
                return None;
            }
            return header(self, nest.get(k)?.stmt);
        }
        // A sequential loop of the iteration body, run whole by every iteration.
        let body = loops::for_body(nest.last()?.stmt);
        let mut candidates = Vec::new();
        always_run_fors(body, &mut candidates);
        let inner = candidates.into_iter().find(|s| matches!(loops::counted_loop(sema, s), Ok(c) if c.var == name))?;
        let StmtKind::For { init: Some(ast::ForInit::Expr(init)), cond: Some(cond), step: Some(step), body: loop_body } = &inner.kind else { return None };
        if walk::count_name_in_stmt(outer, name) != walk::count_name_in_stmt(inner, name) || leaves_early(loop_body, true) || leaves_early(body, false) {
            return None;
        }
        let AE::Assign { op: None, rhs: start, .. } = &init.kind else { return None };
        // (A counted loop's step is a constant change of the variable itself.)
        let _ = step;
        if !invariant(start, name) || !invariant(cond, name) {
            return None;
        }
        // The nest runs at least one iteration: each loop's start passes its test.
        let mut tests = Vec::new();
        for c in counted {
            let mentions_nest = counted.iter().any(|o| walk::count_name(c.lo, &o.var) + walk::count_name(c.bound, &o.var) > 0);
            if mentions_nest || !invariant(c.lo, &c.var) || !invariant(c.bound, &c.var) {
                return None;
            }
            let cmp = match c.cmp {
                loops::Cmp::Lt => "<",
                loops::Cmp::Le => "<=",
                loops::Cmp::Gt => ">",
                loops::Cmp::Ge => ">=",
            };
            tests.push(format!("({}) {cmp} ({})", self.text(c.lo.span), self.text(c.bound.span)));
        }
        Some(format!("if ({}) {}", tests.join(" && "), header(self, inner)?))
    }
}

/// `for` statements of `s` that run whenever `s` runs: `s` itself, or those in the
/// compound statements it is made of.
fn always_run_fors<'s>(s: &'s Stmt, out: &mut Vec<&'s Stmt>) {
    match &s.kind {
        StmtKind::For { .. } => out.push(s),
        StmtKind::Compound(b) => b.stmts.iter().for_each(|st| always_run_fors(st, out)),
        _ => {}
    }
}

/// Whether `s` can end before it runs to its end: `return`, `goto` or `continue` at any
/// depth, and, when `s` is a loop's body (`loop_body`), a `break` of that loop.
fn leaves_early(s: &Stmt, loop_body: bool) -> bool {
    fn scan(s: &Stmt, nested: bool, loop_body: bool, leaves: &mut bool) {
        match &s.kind {
            StmtKind::Return(_) | StmtKind::Goto(_) | StmtKind::Continue => *leaves = true,
            StmtKind::Break if loop_body && !nested => *leaves = true,
            StmtKind::Compound(b) => b.stmts.iter().for_each(|st| scan(st, nested, loop_body, leaves)),
            StmtKind::If { then, otherwise, .. } => {
                scan(then, nested, loop_body, leaves);
                if let Some(o) = otherwise {
                    scan(o, nested, loop_body, leaves);
                }
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } | StmtKind::Switch { body, .. } => {
                scan(body, true, loop_body, leaves)
            }
            StmtKind::Case { body, .. } | StmtKind::Default { body } | StmtKind::Labeled { body, .. } => scan(body, nested, loop_body, leaves),
            StmtKind::Acc { body: Some(b), .. } => scan(b, nested, loop_body, leaves),
            _ => {}
        }
    }
    let mut leaves = false;
    scan(s, false, loop_body, &mut leaves);
    leaves
}

/// `e` has the same value in every iteration of `body`: it names no variable `body` assigns
/// or declares (but `except`), reads no array element, calls only math functions and
/// `acc_on_device`, and has no side effects.
fn invariant_expr(e: &ast::Expr, except: &str, body: &Stmt, written: &HashSet<String>) -> bool {
    let mut ok = true;
    walk::expr_tree(e, &mut |x| match &x.kind {
        AE::Ident(n) if n != except && (written.contains(n) || declared_in(body, n)) => ok = false,
        AE::Index { .. } | AE::Assign { .. } | AE::StringLit(_) | AE::CompoundLiteral { .. } => ok = false,
        AE::Unary { op: ast::UnaryOp::PreInc | ast::UnaryOp::PreDec | ast::UnaryOp::PostInc | ast::UnaryOp::PostDec | ast::UnaryOp::Deref, .. } => ok = false,
        AE::Member { arrow: true, .. } => ok = false,
        AE::Call { callee, .. } => {
            let pure = matches!(&callee.kind, AE::Ident(f) if super::kernel::math_function(f).is_some() || f == "acc_on_device");
            if !pure {
                ok = false;
            }
        }
        _ => {}
    });
    ok
}

/// `Some(value)` when every mention of `name` in `body` is an assignment `name = value` of
/// one value that does not change during the loop (the same expression at every assignment,
/// [`invariant_expr`]): whichever iteration's store lands last, the variable ends with the
/// value the sequential program leaves.
fn same_value_writes<'s>(body: &'s Stmt, name: &str, written: &HashSet<String>) -> Option<&'s ast::Expr> {
    let mut values: Vec<&ast::Expr> = Vec::new();
    walk::each_expr(body, &mut |e| {
        if let AE::Assign { op: None, lhs, rhs } = &e.kind
            && matches!(&lhs.kind, AE::Ident(n) if n == name)
        {
            values.push(rhs);
        }
    });
    let first = *values.first()?;
    let all_same = values.iter().all(|v| walk::same_expr(v, first));
    let only_assigned = walk::count_name_in_stmt(body, name) == values.len() && walk::count_name(first, name) == 0;
    (all_same && only_assigned && invariant_expr(first, name, body, written)).then_some(first)
}

/// private/firstprivate/reduction clauses as treatments of host scalars (and private arrays).
pub(super) fn add_treatments<'c>(
    clauses: impl Iterator<Item = &'c Clause>,
    sema: &Sema,
    treatments: &mut HashMap<String, Treatment>,
    errors: &mut Vec<Diagnostic>,
    sources: &SourceSet,
) {
    for c in clauses {
        match &c.kind {
            ClauseKind::Private(refs) | ClauseKind::FirstPrivate(refs) => {
                for r in refs {
                    let AE::Ident(n) = &r.base.kind else { continue };
                    let t = if matches!(c.kind, ClauseKind::Private(_)) { Treatment::Private } else { Treatment::FirstPrivate };
                    match sema.lookup_var(n) {
                        Some(v) if v.ty.is_arithmetic() => {
                            treatments.insert(n.clone(), t);
                        }
                        Some(_) if matches!(treatments.get(n.as_str()), Some(Treatment::ArrayReduction(..))) => errors.push(
                            Diagnostic::error(r.span, format!("`{n}` is under a reduction and cannot also be private"))
                                .with_help(format!("remove `{n}` from one of the clauses")),
                        ),
                        Some(v) if matches!(t, Treatment::Private) && kernel::local_array_shape(&v.ty).is_some() && r.sections.len() <= 1 => {
                            treatments.insert(n.clone(), t);
                        }
                        Some(v) if v.ty.is_pointer_like() => {
                            let first = matches!(t, Treatment::FirstPrivate);
                            treatments.insert(n.clone(), Treatment::PrivateArray { first, section: Box::new(r.clone()) });
                        }
                        Some(_) => {}
                        // CAPS-era code names variables the loop body declares (gcc compiles
                        // the program, the pragma ignored): each iteration's own already.
                        None => errors.push(
                            Diagnostic::warning(r.span, format!("`{n}` in a private clause is not declared before the construct; a variable the loop declares is private to each iteration already, so the clause is ignored for it"))
                                .with_help(format!("remove `{n}` from the clause")),
                        ),
                    }
                }
            }
            ClauseKind::Reduction { op, vars } => {
                for r in vars {
                    let name = match &r.base.kind {
                        AE::Ident(n) if r.sections.is_empty() => Some(n),
                        _ => None,
                    };
                    let scalar = name.and_then(|n| sema.lookup_var(n)).map(|v| v.ty.is_arithmetic());
                    let complex = name.and_then(|n| sema.lookup_var(n)).is_some_and(|v| matches!(v.ty, CType::Complex(_)));
                    if complex && !matches!(op, ReductionOp::Add | ReductionOp::Mul) {
                        errors.push(
                            Diagnostic::error(r.span, format!("`{}` reductions are not defined on complex numbers", op.symbol()))
                                .with_help("reduce complex numbers with + or *"),
                        );
                        continue;
                    }
                    // An array, or a section or an element of one: its updates become atomics.
                    let array = match &r.base.kind {
                        AE::Ident(n) => sema.lookup_var(n).filter(|v| reduction_array_type(&v.ty)).map(|_| n),
                        _ => None,
                    };
                    if let Some(n) = array {
                        if matches!(treatments.get(n.as_str()), Some(Treatment::Private | Treatment::FirstPrivate)) {
                            errors.push(
                                Diagnostic::error(r.span, format!("reduction on the private array `{n}` is not supported"))
                                    .with_help(format!("reduce into a shared array, or keep the loop that updates `{n}` sequential")),
                            );
                        } else {
                            treatments.insert(n.clone(), Treatment::ArrayReduction(*op, c.span));
                        }
                        continue;
                    }
                    match (name, scalar) {
                        (Some(n), Some(true)) => {
                            treatments.insert(n.clone(), Treatment::Reduction(*op, c.span));
                        }
                        (Some(n), None) => errors.push(
                            Diagnostic::error(r.span, format!("undeclared variable `{n}` in a reduction clause"))
                                .with_help("declare the variable before the construct"),
                        ),
                        _ if ref_root(&r.base).and_then(|n| sema.lookup_var(n)).is_some_and(|v| complex_elements(&v.ty)) => errors.push(
                            Diagnostic::error(r.span, format!("reductions on arrays of complex numbers (`{}`) are not supported", norm(sources.text(r.span))))
                                .with_help("reduce into a complex scalar and store it into the array after the loop"),
                        ),
                        _ => errors.push(
                            Diagnostic::error(r.span, format!("reduction on `{}`, which is not a scalar", norm(sources.text(r.span))))
                                .with_help("reduce into a scalar variable and store it into the array after the loop"),
                        ),
                    }
                }
            }
            _ => {}
        }
    }
}

/// An array or a pointer whose elements are numbers (what a reduction on an array may name).
fn reduction_array_type(ty: &CType) -> bool {
    match ty {
        CType::Array { elem, .. } => elem.scalar().is_some() || reduction_array_type(elem),
        // `float (*c)[3]`: rows of numbers, as `reduction(+:c[0:n][0:3])` reduces them.
        CType::Pointer { to, .. } => to.scalar().is_some() || matches!(**to, CType::Array { .. }) && reduction_array_type(to),
        _ => false,
    }
}

/// An array or a pointer whose elements are complex numbers.
fn complex_elements(ty: &CType) -> bool {
    match ty {
        CType::Array { elem, .. } => matches!(**elem, CType::Complex(_)) || complex_elements(elem),
        CType::Pointer { to, .. } => matches!(**to, CType::Complex(_)),
        _ => false,
    }
}

/// Whether `name` is declared somewhere in `s`.
pub(super) fn declared_in(s: &Stmt, name: &str) -> bool {
    fn decl_has(d: &ast::Declaration, name: &str) -> bool {
        d.declarators.iter().any(|id| id.declarator.name.as_deref() == Some(name))
    }
    match &s.kind {
        StmtKind::Decl(d) => decl_has(d, name),
        StmtKind::Compound(b) => b.stmts.iter().any(|s| declared_in(s, name)),
        StmtKind::For { init, body, .. } => matches!(init, Some(ast::ForInit::Decl(d)) if decl_has(d, name)) || declared_in(body, name),
        StmtKind::If { then, otherwise, .. } => declared_in(then, name) || otherwise.as_ref().is_some_and(|o| declared_in(o, name)),
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } | StmtKind::Switch { body, .. } => declared_in(body, name),
        StmtKind::Acc { body: Some(b), .. } => declared_in(b, name),
        _ => false,
    }
}

/// A host scalar assigned in a `kernels` loop: a reduction when every use is `s = s op e`
/// (or `s op= e`, `s = fmax(s, e)`), private when each iteration writes it before reading it.
pub(super) fn classify_scalar(body: &Stmt, name: &str) -> Option<Treatment> {
    let total = walk::count_name_in_stmt(body, name);
    let mut accounted = 0;
    let mut op_seen: Option<ReductionOp> = None;
    let mut consistent = true;
    let is_name = |e: &ast::Expr| matches!(&e.kind, AE::Ident(n) if n == name);
    // `if (v > s) s = v;` is a max reduction, `if (v < s) s = v;` a min one.
    let mut guarded = Vec::new();
    walk::each_stmt(body, &mut |st| {
        if let Some(op) = guarded_update(st, name) {
            guarded.push((op, st.span));
        }
    });
    for (op, _) in &guarded {
        accounted += 2;
        if op_seen.is_some_and(|o| o != *op) {
            consistent = false;
        }
        op_seen = Some(*op);
    }
    walk::each_expr(body, &mut |e| {
        let AE::Assign { op, lhs, rhs } = &e.kind else { return };
        if !is_name(lhs) {
            return;
        }
        let found = match op {
            Some(ast::BinaryOp::Add | ast::BinaryOp::Sub) => Some((ReductionOp::Add, &**rhs, 1)),
            Some(ast::BinaryOp::Mul) => Some((ReductionOp::Mul, &**rhs, 1)),
            Some(ast::BinaryOp::BitAnd) => Some((ReductionOp::BitAnd, &**rhs, 1)),
            Some(ast::BinaryOp::BitOr) => Some((ReductionOp::BitOr, &**rhs, 1)),
            Some(ast::BinaryOp::BitXor) => Some((ReductionOp::BitXor, &**rhs, 1)),
            None => match &rhs.kind {
                AE::Binary { op: bop, lhs: a, rhs: b } => {
                    let rop = match bop {
                        ast::BinaryOp::Add => Some(ReductionOp::Add),
                        ast::BinaryOp::Mul => Some(ReductionOp::Mul),
                        ast::BinaryOp::Sub if is_name(a) => Some(ReductionOp::Add),
                        _ => None,
                    };
                    match rop {
                        Some(r) if is_name(a) => Some((r, &**b, 2)),
                        Some(r) if is_name(b) && *bop != ast::BinaryOp::Sub => Some((r, &**a, 2)),
                        _ => None,
                    }
                }
                AE::Call { callee, args } if args.len() == 2 => {
                    let rop = match &callee.kind {
                        AE::Ident(f) if f == "fmax" || f == "fmaxf" => Some(ReductionOp::Max),
                        AE::Ident(f) if f == "fmin" || f == "fminf" => Some(ReductionOp::Min),
                        _ => None,
                    };
                    match rop {
                        Some(r) if is_name(&args[0]) => Some((r, &args[1], 2)),
                        Some(r) if is_name(&args[1]) => Some((r, &args[0], 2)),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        if let Some((rop, other, uses)) = found {
            if walk::count_name(other, name) == 0 {
                accounted += uses;
                if op_seen.is_some_and(|o| o != rop) {
                    consistent = false;
                }
                op_seen = Some(rop);
            }
        }
    });
    if let Some(op) = op_seen {
        if consistent && accounted == total {
            return Some(Treatment::Reduction(op, body.span));
        }
    }
    // Private: the first statement that mentions the name assigns it without reading it.
    let stmts: Vec<&Stmt> = match &body.kind {
        StmtKind::Compound(b) => b.stmts.iter().collect(),
        _ => vec![body],
    };
    for s in stmts {
        if walk::count_name_in_stmt(s, name) == 0 {
            continue;
        }
        return match &s.kind {
            StmtKind::Expr(Some(ast::Expr { kind: AE::Assign { op: None, lhs, rhs }, .. })) if is_name(lhs) && walk::count_name(rhs, name) == 0 => {
                Some(Treatment::Private)
            }
            _ => None,
        };
    }
    None
}

/// `if (v > s) s = v;` (or `s < v`): `Some(Max)`; the `<` forms: `Some(Min)`.
fn guarded_update(st: &Stmt, name: &str) -> Option<ReductionOp> {
    let StmtKind::If { cond, then, otherwise: None } = &st.kind else { return None };
    let AE::Binary { op, lhs, rhs } = &cond.kind else { return None };
    let then = loops::single_stmt(then);
    let StmtKind::Expr(Some(ast::Expr { kind: AE::Assign { op: None, lhs: target, rhs: value }, .. })) = &then.kind else {
        return None;
    };
    let is_name = |e: &ast::Expr| matches!(&e.kind, AE::Ident(n) if n == name);
    if !is_name(target) || walk::count_name(value, name) != 0 {
        return None;
    }
    // Normalise to `v OP s`.
    let (v, greater) = match op {
        ast::BinaryOp::Gt | ast::BinaryOp::Ge if is_name(rhs) => (&**lhs, true),
        ast::BinaryOp::Lt | ast::BinaryOp::Le if is_name(rhs) => (&**lhs, false),
        ast::BinaryOp::Gt | ast::BinaryOp::Ge if is_name(lhs) => (&**rhs, false),
        ast::BinaryOp::Lt | ast::BinaryOp::Le if is_name(lhs) => (&**rhs, true),
        _ => return None,
    };
    if !walk::same_expr(v, value) {
        return None;
    }
    Some(if greater { ReductionOp::Max } else { ReductionOp::Min })
}
