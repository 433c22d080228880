//! The host code's own pragmas in front of a statement: OpenMP constructs (`#pragma omp parallel
//! for`) and the loop pragmas a compiler requires directly before their loop (`#pragma GCC
//! unroll`, `#pragma GCC ivdep`). The front end drops them from the tree but the host code keeps
//! them (they are the system compiler's to read), so whatever the host back end puts before such
//! a statement must go before its pragma lines: between `#pragma omp parallel for` and its `for`
//! a hook would become the construct's body and the loop would run outside it (the compiler
//! says "for statement expected"). And one hook before an OpenMP construct runs once, on the
//! thread that meets the construct, where hooks inside it would run on every thread.
//!
//! An OpenMP construct whose statement launches compute regions (directly or through a function
//! that does) is kept on one thread: its `#pragma omp` lines, and those inside it, are commented
//! out of the host code (with a warning, `driver::openmp`). Its threads would each launch regions and move data
//! between their hooks and their statements, which the runtime's coherence, serialised per
//! call, cannot order; Yosegi runs the regions' loops on the devices itself.

use super::*;

/// The pragma lines directly in front of a statement (only blank lines and line markers
/// between them and it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LeadingPragmas {
    /// Where the first of them starts (its line's first byte).
    pub(super) start: u32,
    /// The offset of the `#` of each `#pragma omp` line among them.
    pub(super) openmp: Vec<u32>,
}

fn pragma_word(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("pragma")?;
    if !rest.starts_with(|c: char| c.is_whitespace()) {
        return None;
    }
    rest.split(|c: char| c.is_whitespace() || c == '(').find(|w| !w.is_empty())
}

/// The pragma lines (other than `#pragma acc`, which are the tree's) right before the statement
/// starting at `lo`, when the statement starts its line.
pub(super) fn leading_pragmas(text: &str, lo: u32) -> Option<LeadingPragmas> {
    let before = text.get(..lo as usize)?;
    let mut line_start = before.rfind('\n').map_or(0, |i| i + 1);
    if !before[line_start..].trim().is_empty() {
        return None;
    }
    let mut found: Option<LeadingPragmas> = None;
    while line_start > 0 {
        let end = line_start - 1;
        let start = text[..end].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[start..end];
        match pragma_word(line) {
            Some("acc") => break,
            Some(word) => {
                let pragmas = found.get_or_insert(LeadingPragmas { start: start as u32, openmp: Vec::new() });
                pragmas.start = start as u32;
                if word == "omp" {
                    pragmas.openmp.push((start + line.len() - line.trim_start().len()) as u32);
                }
            }
            None if line.trim().is_empty() || crate::source::parse_line_marker(line).is_some() => {}
            None => break,
        }
        line_start = start;
    }
    found
}

/// A line marker saying that the next line is the one at `at` of its file: what keeps the host
/// compiler's line numbers right after a hook that ends with a newline. The file's name is
/// copied from the nearest marker above, as cpp quoted it; without one, `#line N`.
pub(super) fn line_marker_for(sources: &SourceSet, tu: u32, text: &str, at: u32) -> String {
    let line = sources.location(Span::new(tu, at, at)).line;
    let above = &text[..at as usize];
    let quoted = above
        .lines()
        .rev()
        .filter(|l| l.starts_with('#') && crate::source::parse_line_marker(l).is_some())
        .find_map(quoted_name);
    match quoted {
        Some(name) => format!("# {line} {name}\n"),
        None => format!("#line {line}\n"),
    }
}

/// The `"..."` of a line marker, escapes and all.
fn quoted_name(marker: &str) -> Option<&str> {
    let open = marker.find('"')?;
    let bytes = marker.as_bytes();
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(&marker[open..=i]),
            _ => i += 1,
        }
    }
    None
}

/// The OpenMP constructs whose statements launch compute regions (directly, or by calling a
/// function that does): the place of each one's first `#pragma omp` line. Their host code runs
/// on one thread (see the module's comment).
pub fn openmp_constructs_that_launch(sources: &SourceSet, units: &[TranslationUnit], module: &Module) -> Vec<Span> {
    let info = ProgramInfo::new(units, module);
    let mut found = Vec::new();
    for unit in units {
        let Some(source) = sources.units.get(unit.tu as usize) else { continue };
        if unit.openmp_pragmas.is_empty() {
            continue;
        }
        let regions: Vec<&Region> = module.regions.iter().filter(|r| r.span.tu == unit.tu).collect();
        // The end of the last construct found: one inside it runs on one thread with it, and
        // is not told again.
        let mut within = 0u32;
        let mut visit = |s: &ast::Stmt| {
            if s.span.lo >= within
                && let Some(pragmas) = leading_pragmas(&source.text, s.span.lo)
                && let Some(&first) = pragmas.openmp.first()
                && stmt_launches(s, &regions, &info)
            {
                let end = source.text[first as usize..].find('\n').map_or(source.text.len(), |n| first as usize + n);
                found.push(Span::new(unit.tu, first, end as u32));
                within = s.span.hi;
            }
        };
        for item in &unit.items {
            if let ExternalDecl::Function(f) = item {
                for s in &f.body.stmts {
                    each_stmt(s, &mut visit);
                }
            }
        }
    }
    found
}

/// Whether `s` holds one of `regions` or calls a user function that launches kernels.
pub(super) fn stmt_launches(s: &ast::Stmt, regions: &[&Region], info: &ProgramInfo) -> bool {
    if regions.iter().any(|r| span_inside(r.span, s.span)) {
        return true;
    }
    let mut calls_launcher = false;
    visit_stmt_exprs(s, &mut |e| {
        if let ExprKind::Call { callee, .. } = &e.kind
            && let ExprKind::Ident(n) = &callee.kind
            && info.launching(n, e.span).is_some()
        {
            calls_launcher = true;
        }
    });
    calls_launcher
}

/// `s` and every statement inside it, outermost first.
fn each_stmt(s: &ast::Stmt, f: &mut dyn FnMut(&ast::Stmt)) {
    f(s);
    match &s.kind {
        StmtKind::Compound(b) => b.stmts.iter().for_each(|s| each_stmt(s, f)),
        StmtKind::If { then, otherwise, .. } => {
            each_stmt(then, f);
            if let Some(o) = otherwise {
                each_stmt(o, f);
            }
        }
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Switch { body, .. }
        | StmtKind::Case { body, .. }
        | StmtKind::Default { body }
        | StmtKind::Labeled { body, .. }
        | StmtKind::Acc { body: Some(body), .. } => each_stmt(body, f),
        StmtKind::Expr(_)
        | StmtKind::Decl(_)
        | StmtKind::Goto(_)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Return(_)
        | StmtKind::Acc { body: None, .. } => {}
    }
}
