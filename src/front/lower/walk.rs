//! Read-only scans of syntax trees that lowering decides things by before it lowers: which
//! names a statement assigns, which are loop variables, which functions it calls.

use std::collections::HashSet;

use crate::diag::Span;
use crate::front::ast::{Clause, DirectiveKind, Expr, ExprKind, ForInit, Initializer, Stmt, StmtKind, UnaryOp};

/// Calls `f` on every expression in `s`, outermost first, nested ones included.
pub fn each_expr<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    match &s.kind {
        StmtKind::Compound(b) => b.stmts.iter().for_each(|s| each_expr(s, f)),
        StmtKind::Expr(Some(e)) => expr_tree(e, f),
        StmtKind::Expr(None) => {}
        StmtKind::Decl(d) => d.declarators.iter().for_each(|d| {
            if let Some(init) = &d.init {
                init_tree(init, f)
            }
        }),
        StmtKind::If { cond, then, otherwise } => {
            expr_tree(cond, f);
            each_expr(then, f);
            if let Some(o) = otherwise {
                each_expr(o, f)
            }
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } | StmtKind::Switch { cond, body } => {
            expr_tree(cond, f);
            each_expr(body, f);
        }
        StmtKind::For { init, cond, step, body } => {
            match init {
                Some(ForInit::Expr(e)) => expr_tree(e, f),
                Some(ForInit::Decl(d)) => d.declarators.iter().for_each(|d| {
                    if let Some(init) = &d.init {
                        init_tree(init, f)
                    }
                }),
                None => {}
            }
            cond.iter().for_each(|e| expr_tree(e, f));
            step.iter().for_each(|e| expr_tree(e, f));
            each_expr(body, f);
        }
        StmtKind::Case { value, body } => {
            expr_tree(value, f);
            each_expr(body, f)
        }
        StmtKind::Default { body } | StmtKind::Labeled { body, .. } => each_expr(body, f),
        StmtKind::Return(Some(e)) => expr_tree(e, f),
        StmtKind::Acc { body: Some(b), .. } => each_expr(b, f),
        StmtKind::Goto(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::Acc { .. } => {}
    }
}

/// Calls `f` on every expression of an initializer, outermost first.
pub fn init_tree<'a>(init: &'a Initializer, f: &mut dyn FnMut(&'a Expr)) {
    match init {
        Initializer::Expr(e) => expr_tree(e, f),
        // Not the numbers of a run: they are built on demand (`InitList::iter`), and what
        // callers look for (names, calls, effects) a number does not have.
        Initializer::List(list) => list.trees().for_each(|(_, i)| init_tree(i, f)),
    }
}

pub fn expr_tree<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { operand, .. } => expr_tree(operand, f),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Assign { lhs, rhs, .. } => {
            expr_tree(lhs, f);
            expr_tree(rhs, f)
        }
        ExprKind::Conditional { cond, then, otherwise } => {
            expr_tree(cond, f);
            expr_tree(then, f);
            expr_tree(otherwise, f)
        }
        ExprKind::Cast { expr, .. } | ExprKind::SizeofExpr(expr) => expr_tree(expr, f),
        ExprKind::Call { callee, args } => {
            expr_tree(callee, f);
            args.iter().for_each(|a| expr_tree(a, f))
        }
        ExprKind::Index { base, index } => {
            expr_tree(base, f);
            expr_tree(index, f)
        }
        ExprKind::Member { base, .. } => expr_tree(base, f),
        ExprKind::CompoundLiteral { init, .. } => init_tree(init, f),
        ExprKind::Ident(_)
        | ExprKind::IntLit { .. }
        | ExprKind::FloatLit { .. }
        | ExprKind::ImagLit { .. }
        | ExprKind::CharLit(_)
        | ExprKind::StringLit(_)
        | ExprKind::SizeofType(_) => {}
    }
}

/// The variable an assignment or increment writes, when it is a plain name.
pub fn assigned_name(e: &Expr) -> Option<&str> {
    let target = match &e.kind {
        ExprKind::Assign { lhs, .. } => lhs,
        ExprKind::Unary { op: UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec, operand } => operand,
        _ => return None,
    };
    match &target.kind {
        ExprKind::Ident(n) => Some(n),
        _ => None,
    }
}

/// Names assigned anywhere in `s`.
pub fn written_names(s: &Stmt) -> HashSet<String> {
    let mut out = HashSet::new();
    each_expr(s, &mut |e| {
        if let Some(n) = assigned_name(e) {
            out.insert(n.to_string());
        }
    });
    out
}

/// Names that some `for` in `s` assigns in its init (`for (j = 0; ...)`).
pub fn for_loop_vars(s: &Stmt, out: &mut HashSet<String>) {
    match &s.kind {
        StmtKind::For { init, body, .. } => {
            if let Some(ForInit::Expr(e)) = init {
                if let ExprKind::Assign { op: None, lhs, .. } = &e.kind {
                    if let ExprKind::Ident(n) = &lhs.kind {
                        out.insert(n.clone());
                    }
                }
            }
            for_loop_vars(body, out)
        }
        StmtKind::Compound(b) => b.stmts.iter().for_each(|s| for_loop_vars(s, out)),
        StmtKind::If { then, otherwise, .. } => {
            for_loop_vars(then, out);
            if let Some(o) = otherwise {
                for_loop_vars(o, out)
            }
        }
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::Switch { body, .. }
        | StmtKind::Case { body, .. }
        | StmtKind::Default { body }
        | StmtKind::Labeled { body, .. } => for_loop_vars(body, out),
        StmtKind::Acc { body: Some(b), .. } => for_loop_vars(b, out),
        _ => {}
    }
}

/// Every call of a named function in `s`: (name, span of the call).
pub fn called_functions(s: &Stmt) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    each_expr(s, &mut |e| {
        if let ExprKind::Call { callee, .. } = &e.kind {
            if let ExprKind::Ident(n) = &callee.kind {
                out.push((n.clone(), e.span));
            }
        }
    });
    out
}

/// How often the plain name `name` occurs in `e`.
pub fn count_name(e: &Expr, name: &str) -> usize {
    let mut n = 0;
    expr_tree(e, &mut |x| {
        if matches!(&x.kind, ExprKind::Ident(m) if m == name) {
            n += 1
        }
    });
    n
}

/// How often the plain name `name` occurs in `s`.
pub fn count_name_in_stmt(s: &Stmt, name: &str) -> usize {
    let mut n = 0;
    each_expr(s, &mut |x| {
        if matches!(&x.kind, ExprKind::Ident(m) if m == name) {
            n += 1
        }
    });
    n
}

/// The clauses of every `loop` directive inside `s`.
pub fn nested_loop_clauses(s: &Stmt) -> Vec<&Clause> {
    let mut out = Vec::new();
    nested_loop_clauses_into(s, &mut out);
    out
}

fn nested_loop_clauses_into<'a>(s: &'a Stmt, out: &mut Vec<&'a Clause>) {
    match &s.kind {
        StmtKind::Acc { directive, body } => {
            if matches!(directive.kind, DirectiveKind::Loop) {
                out.extend(directive.clauses.iter());
            }
            if let Some(b) = body {
                nested_loop_clauses_into(b, out)
            }
        }
        StmtKind::Compound(b) => b.stmts.iter().for_each(|s| nested_loop_clauses_into(s, out)),
        StmtKind::If { then, otherwise, .. } => {
            nested_loop_clauses_into(then, out);
            if let Some(o) = otherwise {
                nested_loop_clauses_into(o, out)
            }
        }
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Switch { body, .. }
        | StmtKind::Case { body, .. }
        | StmtKind::Default { body }
        | StmtKind::Labeled { body, .. } => nested_loop_clauses_into(body, out),
        _ => {}
    }
}

/// Calls `f` on every statement in `s` (itself included), outermost first.
pub fn each_stmt<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Stmt)) {
    f(s);
    match &s.kind {
        StmtKind::Compound(b) => b.stmts.iter().for_each(|s| each_stmt(s, f)),
        StmtKind::If { then, otherwise, .. } => {
            each_stmt(then, f);
            if let Some(o) = otherwise {
                each_stmt(o, f)
            }
        }
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Switch { body, .. }
        | StmtKind::Case { body, .. }
        | StmtKind::Default { body }
        | StmtKind::Labeled { body, .. } => each_stmt(body, f),
        StmtKind::Acc { body: Some(b), .. } => each_stmt(b, f),
        _ => {}
    }
}

/// The values `s` assigns to plain names (`p = rhs`, and initialisers `T *p = rhs`), by name,
/// in source order: what a pointer local may be given, so that lowering can tell which object
/// it points into where a use comes before the assignment in the text (`if (!best || x <
/// *best) best = &a[i];`).
pub fn assigned_values(s: &Stmt, out: &mut std::collections::HashMap<String, Vec<Expr>>) {
    let declarators = |d: &crate::front::ast::Declaration, out: &mut std::collections::HashMap<String, Vec<Expr>>| {
        for id in &d.declarators {
            if let (Some(name), Some(Initializer::Expr(e))) = (&id.declarator.name, &id.init) {
                out.entry(name.clone()).or_default().push(e.clone());
            }
        }
    };
    each_stmt(s, &mut |st| match &st.kind {
        StmtKind::Decl(d) => declarators(d, out),
        StmtKind::For { init: Some(ForInit::Decl(d)), .. } => declarators(d, out),
        _ => {}
    });
    each_expr(s, &mut |e| {
        if let ExprKind::Assign { op: None, lhs, rhs } = &e.kind
            && let ExprKind::Ident(name) = &lhs.kind
        {
            out.entry(name.clone()).or_default().push((**rhs).clone());
        }
    });
}

/// Structural equality of two side-effect-free expressions (names, literals, operators,
/// subscripts, members, calls).
pub fn same_expr(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Ident(x), ExprKind::Ident(y)) => x == y,
        (ExprKind::IntLit { value: x, .. }, ExprKind::IntLit { value: y, .. }) => x == y,
        (ExprKind::FloatLit { value: x, .. }, ExprKind::FloatLit { value: y, .. }) => x == y,
        (ExprKind::CharLit(x), ExprKind::CharLit(y)) => x == y,
        (ExprKind::Unary { op: o1, operand: x }, ExprKind::Unary { op: o2, operand: y }) => o1 == o2 && same_expr(x, y),
        (ExprKind::Binary { op: o1, lhs: l1, rhs: r1 }, ExprKind::Binary { op: o2, lhs: l2, rhs: r2 }) => {
            o1 == o2 && same_expr(l1, l2) && same_expr(r1, r2)
        }
        (ExprKind::Index { base: b1, index: i1 }, ExprKind::Index { base: b2, index: i2 }) => same_expr(b1, b2) && same_expr(i1, i2),
        (ExprKind::Member { base: b1, field: f1, arrow: a1 }, ExprKind::Member { base: b2, field: f2, arrow: a2 }) => {
            f1 == f2 && a1 == a2 && same_expr(b1, b2)
        }
        (ExprKind::Call { callee: c1, args: a1 }, ExprKind::Call { callee: c2, args: a2 }) => {
            same_expr(c1, c2) && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| same_expr(x, y))
        }
        (ExprKind::Conditional { cond: c1, then: t1, otherwise: o1 }, ExprKind::Conditional { cond: c2, then: t2, otherwise: o2 }) => {
            same_expr(c1, c2) && same_expr(t1, t2) && same_expr(o1, o2)
        }
        _ => false,
    }
}

/// An element that an `atomic` in `body` updates at one place for every iteration of the loop
/// over `var` (its subscripts use neither `var` nor a name the body declares or assigns) and
/// that the body also accesses outside any `atomic`: iterations run at once would read it while
/// other iterations update it. Returns (the atomic's target, the plain access).
pub fn atomic_shared_by_iterations<'a>(body: &'a Stmt, var: &str) -> Option<(&'a Expr, &'a Expr)> {
    let mut targets: Vec<&Expr> = Vec::new();
    let mut in_atomics: HashSet<*const Expr> = HashSet::new();
    let mut local_names = written_names(body);
    local_names.insert(var.to_string());
    each_stmt(body, &mut |s| match &s.kind {
        StmtKind::Acc { directive, body: Some(b) } if matches!(directive.kind, DirectiveKind::Atomic(_)) => {
            each_expr(b, &mut |e| {
                in_atomics.insert(e as *const Expr);
                let target = match &e.kind {
                    ExprKind::Assign { lhs, .. } => Some(&**lhs),
                    ExprKind::Unary { op: UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec, operand } => Some(&**operand),
                    _ => None,
                };
                targets.extend(target.filter(|t| !matches!(t.kind, ExprKind::Ident(_))));
            });
        }
        StmtKind::Decl(d) => local_names.extend(d.declarators.iter().filter_map(|d| d.declarator.name.clone())),
        StmtKind::For { init: Some(ForInit::Decl(d)), .. } => {
            local_names.extend(d.declarators.iter().filter_map(|d| d.declarator.name.clone()))
        }
        _ => {}
    });
    let invariant = |t: &Expr| {
        let mut uses_local = false;
        expr_tree(t, &mut |e| {
            if let ExprKind::Ident(n) = &e.kind {
                uses_local |= local_names.contains(n);
            }
        });
        !uses_local
    };
    let targets: Vec<&Expr> = targets.into_iter().filter(|t| invariant(t)).collect();
    let mut found = None;
    each_expr(body, &mut |e| {
        if found.is_none() && !in_atomics.contains(&(e as *const Expr)) {
            if let Some(t) = targets.iter().find(|t| same_expr(t, e)) {
                found = Some((*t, e));
            }
        }
    });
    found
}

/// Names of `body`'s automatic local variables (declared in it without `static` or `extern`)
/// that its host code never names: not in a statement outside compute constructs, nor in a
/// clause of a directive other than `data`, `enter data` and `exit data`. The host can neither
/// read nor write such a variable, so the device's bytes of it are never needed on the host.
/// Names are compared as text: a name declared twice, or shadowing another, counts as named
/// when any of them is.
pub fn locals_the_host_never_names(body: &[Stmt]) -> HashSet<String> {
    host_unnamed(body, false)
}

/// Names of `body`'s automatic local variables whose memory its host code never reads: those
/// of [`locals_the_host_never_names`], arrays whose elements the host only assigns
/// (`a[i][j] = 0.0;`, an expression statement: it writes them without reading any), and
/// pointers the host only sets to fresh blocks (`p = malloc(...)`, `calloc`, `aligned_alloc`,
/// in the declaration or an assignment statement) and frees (`free(p)`): scratch arrays of the
/// kernels. What kernels leave in them is never seen on the host.
pub fn locals_the_host_never_reads(body: &[Stmt]) -> HashSet<String> {
    host_unnamed(body, true)
}

fn host_unnamed(body: &[Stmt], writes_are_not_reads: bool) -> HashSet<String> {
    let mut declared = HashSet::new();
    let mut excluded = HashSet::new();
    let mut named = HashSet::new();
    for s in body {
        host_names_in(s, &mut declared, &mut excluded, &mut named, writes_are_not_reads);
    }
    declared.retain(|n| !excluded.contains(n) && !named.contains(n));
    declared
}

fn host_names_in(s: &Stmt, declared: &mut HashSet<String>, excluded: &mut HashSet<String>, named: &mut HashSet<String>, writes_are_not_reads: bool) {
    // The statements nested in `s`, under the same rule.
    let recurse = |s: &Stmt, declared: &mut HashSet<String>, excluded: &mut HashSet<String>, named: &mut HashSet<String>| {
        host_names_in(s, declared, excluded, named, writes_are_not_reads)
    };
    use crate::front::ast::{ClauseKind, StorageClass};
    // A declaration: its names are declared (or excluded), its initialisers name what they read.
    let note_decl = |d: &crate::front::ast::Declaration, declared: &mut HashSet<String>, excluded: &mut HashSet<String>, named: &mut HashSet<String>| {
        let automatic = !matches!(d.specs.storage, Some(StorageClass::Static | StorageClass::Extern | StorageClass::Typedef));
        for id in &d.declarators {
            if let Some(name) = &id.declarator.name {
                if automatic && !declared.contains(name) {
                    declared.insert(name.clone());
                } else {
                    excluded.insert(name.clone());
                }
            }
            match &id.init {
                Some(crate::front::ast::Initializer::Expr(e)) if writes_are_not_reads && allocation_call(e).is_some() => {
                    allocation_call(e).into_iter().flatten().for_each(|a| names_in(a, named));
                }
                Some(init) => init_tree(init, &mut |x| name_ident(x, named)),
                None => {}
            }
        }
    };
    match &s.kind {
        // A compute construct's body is the device's.
        StmtKind::Acc { directive, .. } if directive.kind.is_compute() => {}
        StmtKind::Acc { directive, body } => {
            let data_only = matches!(directive.kind, DirectiveKind::Data | DirectiveKind::EnterData | DirectiveKind::ExitData);
            if !data_only {
                for c in &directive.clauses {
                    if let ClauseKind::Data { refs, .. } = &c.kind {
                        refs.iter().for_each(|r| names_in(&r.base, named));
                    }
                }
            }
            if let Some(b) = body {
                recurse(b, declared, excluded, named);
            }
        }
        StmtKind::Compound(b) => b.stmts.iter().for_each(|s| recurse(s, declared, excluded, named)),
        StmtKind::Decl(d) => note_decl(d, declared, excluded, named),
        StmtKind::If { cond, then, otherwise } => {
            names_in(cond, named);
            recurse(then, declared, excluded, named);
            if let Some(o) = otherwise {
                recurse(o, declared, excluded, named);
            }
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } | StmtKind::Switch { cond, body } => {
            names_in(cond, named);
            recurse(body, declared, excluded, named);
        }
        StmtKind::For { init, cond, step, body } => {
            match init {
                Some(ForInit::Decl(d)) => note_decl(d, declared, excluded, named),
                Some(ForInit::Expr(e)) => names_in(e, named),
                None => {}
            }
            cond.iter().chain(step.iter()).for_each(|e| names_in(e, named));
            recurse(body, declared, excluded, named);
        }
        StmtKind::Case { value, body } => {
            names_in(value, named);
            recurse(body, declared, excluded, named);
        }
        StmtKind::Default { body } | StmtKind::Labeled { body, .. } => recurse(body, declared, excluded, named),
        // `p = malloc(...)`, `free(p)` and `a[i] = v` do not read `p` or `a`: see
        // `locals_the_host_never_reads`.
        StmtKind::Expr(Some(e)) if !writes_are_not_reads => names_in(e, named),
        StmtKind::Expr(Some(e)) => match &e.kind {
            ExprKind::Assign { op: None, lhs, rhs } if matches!(lhs.kind, ExprKind::Ident(_)) && allocation_call(rhs).is_some() => {
                allocation_call(rhs).into_iter().flatten().for_each(|a| names_in(a, named));
            }
            // `a[i][j] = ...` (chains `a[i] = b[i] = v` included) writes elements of `a`
            // without reading any: it names the indices and the value, not the array.
            ExprKind::Assign { op: None, .. } => element_writes(e, named),
            ExprKind::Call { callee, args }
                if matches!(&callee.kind, ExprKind::Ident(f) if f == "free") && matches!(args.as_slice(), [a] if matches!(a.kind, ExprKind::Ident(_))) => {}
            _ => names_in(e, named),
        },
        StmtKind::Return(Some(e)) => names_in(e, named),
        StmtKind::Expr(None) | StmtKind::Goto(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => {}
    }
}

/// Names what a plain assignment `e` reads: a target that is an element of a named array
/// (`a[i][j]`, the name indexed directly) is written, not read, so only its indices count;
/// the value may be another such assignment.
fn element_writes(e: &Expr, named: &mut HashSet<String>) {
    let ExprKind::Assign { op: None, lhs, rhs } = &e.kind else {
        names_in(e, named);
        return;
    };
    let mut target = lhs.as_ref();
    let mut indices = Vec::new();
    while let ExprKind::Index { base, index } = &target.kind {
        indices.push(index.as_ref());
        target = base;
    }
    if indices.is_empty() || !matches!(target.kind, ExprKind::Ident(_)) {
        names_in(lhs, named);
    }
    indices.into_iter().for_each(|i| names_in(i, named));
    element_writes(rhs, named);
}

/// The arguments of `e` when it is a call of an allocation function (`malloc`, `calloc`,
/// `aligned_alloc`), through casts.
fn allocation_call(e: &Expr) -> Option<&[Expr]> {
    match &e.kind {
        ExprKind::Cast { expr, .. } => allocation_call(expr),
        ExprKind::Call { callee, args } => match &callee.kind {
            ExprKind::Ident(f) if matches!(f.as_str(), "malloc" | "calloc" | "aligned_alloc") => Some(args),
            _ => None,
        },
        _ => None,
    }
}

/// The names `body` declares (declarations and `for` headers, at any depth) and the names its
/// expressions mention.
pub fn declared_and_named(body: &[Stmt]) -> (HashSet<String>, HashSet<String>) {
    let (mut declared, mut named) = (HashSet::new(), HashSet::new());
    let mut note = |d: &crate::front::ast::Declaration| declared.extend(d.declarators.iter().filter_map(|d| d.declarator.name.clone()));
    for stmt in body {
        each_stmt(stmt, &mut |s| match &s.kind {
            StmtKind::Decl(d) | StmtKind::For { init: Some(ForInit::Decl(d)), .. } => note(d),
            _ => {}
        });
        each_expr(stmt, &mut |e| name_ident(e, &mut named));
    }
    (declared, named)
}

/// Adds every name `e` mentions to `named`.
pub fn names_in(e: &Expr, named: &mut HashSet<String>) {
    expr_tree(e, &mut |x| name_ident(x, named));
}

fn name_ident(e: &Expr, named: &mut HashSet<String>) {
    if let ExprKind::Ident(n) = &e.kind {
        named.insert(n.clone());
    }
}
