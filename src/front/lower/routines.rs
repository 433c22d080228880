//! Which functions the device runs: those with a `routine` directive and those a compute
//! construct calls, directly or through other functions (OpenACC's implicit `routine seq`),
//! each known by its [`FunctionKey`], so that two files' `static` functions of one name are
//! two device functions and every call reaches the one C's linkage names. Also the diagnostic
//! for an external function defined in two files.

use std::collections::{HashMap, HashSet};

use crate::diag::Diagnostic;
use crate::front::ast::{self, Directive, DirectiveKind, ExternalDecl, StmtKind, TranslationUnit};
use crate::front::linkage::{Definitions, FunctionKey};
use crate::front::sema::{CType, Sema, Storage, Symbol};
use crate::source::SourceSet;

use super::kernel::RoutineInfo;
use super::walk;

/// The device functions of a program.
pub(super) struct Routines<'u> {
    /// Routines lowered to IR functions, with their index in `Module::functions` (definition
    /// order).
    pub ir: HashMap<FunctionKey, RoutineInfo>,
    /// Routines that take or return pointers, arrays or structs: not IR functions, their
    /// bodies are inlined at each call (see `kernel::expr`'s `inline_body`).
    pub inline: HashMap<FunctionKey, &'u ast::FunctionDef>,
}

/// Whether calls of a routine are inlined rather than made to an IR function: it takes or
/// returns something other than numbers (pointers, arrays, structs), which IR functions cannot
/// pass, or it names a file-scope variable (an array under `declare create`, a constant), which
/// IR functions cannot reach (their body has no params; inlined, the name is the kernel's).
/// `ty` is its type as its file declares it, when that resolves; else the declarator decides
/// (pointer or array parameters).
fn inlined(f: &ast::FunctionDef, ty: Option<&CType>, names_globals: bool) -> bool {
    if names_globals {
        return true;
    }
    if let Some(CType::Function { ret, params, .. }) = ty {
        return !matches!(**ret, CType::Scalar(_) | CType::Void) || params.iter().any(|p| !matches!(p, CType::Scalar(_)));
    }
    match f.declarator.derived.first() {
        Some(ast::DerivedType::Function { params, .. }) => params.iter().any(|p| !p.declarator.derived.is_empty()),
        _ => false,
    }
}

/// Every function definition's type, as its own file declares it at the definition, and
/// whether its body names a variable of file scope.
fn function_types(units: &[TranslationUnit], defs: &Definitions) -> HashMap<FunctionKey, (CType, bool)> {
    let mut types = HashMap::new();
    for unit in units {
        let mut sema = Sema::new();
        for item in &unit.items {
            match item {
                ExternalDecl::Declaration(d) => {
                    let _ = sema.declare(d, Storage::Global);
                }
                ExternalDecl::Function(f) => {
                    let (Some(name), Ok(ty)) = (f.declarator.name.as_deref(), sema.declared_type(&f.specs, &f.declarator)) else { continue };
                    sema.insert(name, Symbol::Function(ty.clone()));
                    if let Some(key) = defs.key_of(f).filter(|_| defs.is_kept(f)) {
                        let (mut declared, named) = walk::declared_and_named(&f.body.stmts);
                        if let Some(ast::DerivedType::Function { params, .. }) = f.declarator.derived.first() {
                            declared.extend(params.iter().filter_map(|p| p.declarator.name.clone()));
                        }
                        let names_globals = named.iter().any(|n| !declared.contains(n) && sema.lookup_var(n).is_some());
                        types.insert(key, (ty, names_globals));
                    }
                }
                ExternalDecl::Directive(_) => {}
            }
        }
    }
    types
}

/// The routines of the program. A `routine` directive names the function its unit sees by
/// that name (the unit's `static` one, else the external one).
pub(super) fn collect<'u>(units: &'u [TranslationUnit], defs: &Definitions<'u>) -> Routines<'u> {
    let mut named: HashSet<FunctionKey> = HashSet::new();
    for unit in units {
        let mut pending = false;
        for item in &unit.items {
            match item {
                ExternalDecl::Directive(Directive { kind: DirectiveKind::Routine(Some(name)), .. }) => {
                    named.extend(defs.resolve(name, unit.tu));
                }
                ExternalDecl::Directive(Directive { kind: DirectiveKind::Routine(None), .. }) => pending = true,
                ExternalDecl::Declaration(d) if pending => {
                    for id in &d.declarators {
                        if let Some(n) = &id.declarator.name {
                            named.extend(defs.resolve(n, unit.tu));
                        }
                    }
                    pending = false;
                }
                _ => pending = false,
            }
        }
    }
    named.extend(implicit_routines(defs));
    let mut routines = Routines { ir: HashMap::new(), inline: HashMap::new() };
    let types = function_types(units, defs);
    for (key, f) in defs.iter() {
        if f.routine.is_none() && !named.contains(key) {
            continue;
        }
        let (ty, names_globals) = match types.get(key) {
            Some((ty, globals)) => (Some(ty), *globals),
            None => (None, false),
        };
        if inlined(f, ty, names_globals) {
            routines.inline.insert(key.clone(), f);
        } else {
            let index = routines.ir.len();
            routines.ir.insert(key.clone(), RoutineInfo { index, signature: None });
        }
    }
    add_signatures(units, defs, &mut routines);
    routines
}

/// The functions the program defines that a compute construct calls, directly or through
/// other functions it defines, without a `routine` directive: OpenACC 3.0 (2.15.1) gives each
/// an implicit `routine seq`. Each call is resolved in the unit it is written in.
fn implicit_routines(defs: &Definitions) -> HashSet<FunctionKey> {
    let mut pending: Vec<FunctionKey> = Vec::new();
    let calls_in = |s: &ast::Stmt, out: &mut Vec<FunctionKey>| {
        out.extend(walk::called_functions(s).into_iter().filter_map(|(n, span)| defs.resolve(&n, span.tu)));
    };
    for (_, f) in defs.iter() {
        for stmt in &f.body.stmts {
            walk::each_stmt(stmt, &mut |s| {
                if let StmtKind::Acc { directive, body: Some(b) } = &s.kind
                    && directive.kind.is_compute()
                {
                    calls_in(b, &mut pending);
                }
            });
        }
    }
    let mut found = HashSet::new();
    while let Some(key) = pending.pop() {
        let Some(f) = defs.get(&key) else { continue };
        if found.insert(key) {
            for stmt in &f.body.stmts {
                calls_in(stmt, &mut pending);
            }
        }
    }
    found
}

/// Each IR routine's type as its own file declares it at its definition
/// ([`RoutineInfo::signature`]): what a call in a kernel whose scope does not know the callee
/// goes by (a kernel of another file, or earlier in the file, brought there by an inlined
/// routine's body), and the parameter types a call through a declaration without them
/// (`double f();`) passes its arguments as.
fn add_signatures(units: &[TranslationUnit], defs: &Definitions, routines: &mut Routines) {
    for unit in units {
        let defines_one = routines.ir.keys().any(|k| defs.get(k).is_some_and(|f| f.span.tu == unit.tu));
        if !defines_one {
            continue;
        }
        // The file scope as lowering sees it at each definition (diagnostics are lowering's).
        let mut sema = Sema::new();
        for item in &unit.items {
            match item {
                ExternalDecl::Declaration(d) => {
                    let _ = sema.declare(d, Storage::Global);
                }
                ExternalDecl::Function(f) => {
                    let (Some(name), Ok(ty)) = (f.declarator.name.as_deref(), sema.declared_type(&f.specs, &f.declarator)) else { continue };
                    sema.insert(name, Symbol::Function(ty.clone()));
                    if let Some(info) = defs.key_of(f).filter(|_| defs.is_kept(f)).and_then(|k| routines.ir.get_mut(&k)) {
                        info.signature = Some(ty);
                    }
                }
                ExternalDecl::Directive(_) => {}
            }
        }
    }
}

/// An external function defined in two files: the linker would refuse the program, and no
/// kernel could tell which one a call means.
pub(super) fn defined_twice(defs: &Definitions, sources: &SourceSet) -> Vec<Diagnostic> {
    defs.duplicates
        .iter()
        .map(|(again, kept)| {
            let name = again.declarator.name.as_deref().unwrap_or_default();
            let at = sources.location(kept.declarator.name_span);
            Diagnostic::error(
                again.declarator.name_span,
                format!("the function `{name}` is also defined at {}:{}:{}; a program has one external function of a name", at.file.display(), at.line, at.column),
            )
            .with_help(format!("make `{name}` `static` in each file that keeps its own (each file's calls then reach its own), or remove one definition"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::ir::{ExprKind, Handle, Kernel, Module};

    /// Parses one source per unit (`unit<k>.c`) and lowers them as one program.
    fn lower(sources: &[&str]) -> Result<Module, Vec<String>> {
        let parsed = crate::front::parse_test_units(sources);
        super::super::lower_program(&parsed.sources, &parsed.units).map(|(m, _)| m).map_err(|d| d.0.into_iter().map(|d| d.message).collect())
    }

    /// The names of the device functions a kernel calls directly.
    fn callees(m: &Module, kernel: &Kernel) -> Vec<String> {
        kernel
            .body
            .exprs
            .iter()
            .filter_map(|(_, e)| match &e.kind {
                ExprKind::Call { func, .. } => Some(m.functions[*func].name.clone()),
                _ => None,
            })
            .collect()
    }

    const LOOP: &str = "(int n, double *a) {\n#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] = ";

    #[test]
    fn each_files_kernels_call_that_files_static_function() {
        let m = lower(&[
            &format!("static double scale(double x) {{ return 2 * x; }}\nvoid f{LOOP}scale(a[i]);\n}}\n"),
            &format!("#pragma acc routine seq\nstatic double scale(double x) {{ return 3 * x; }}\nvoid g{LOOP}scale(a[i]);\n}}\n"),
        ])
        .expect("lowers");
        let names: Vec<&str> = m.functions.iter().map(|(_, f)| f.name.as_str()).collect();
        assert_eq!(names, ["scale@unit0.c", "scale@unit1.c"]);
        assert_eq!(callees(&m, &m.kernels[Handle::new(0)]), ["scale@unit0.c"]);
        assert_eq!(callees(&m, &m.kernels[Handle::new(1)]), ["scale@unit1.c"]);
    }

    #[test]
    fn an_external_routine_calls_its_own_files_static_from_another_files_kernel() {
        let m = lower(&[
            &format!("static double scale(double x) {{ return 2 * x; }}\ndouble mix(double x);\nvoid f{LOOP}mix(a[i]) + scale(a[i]);\n}}\n"),
            "static double scale(double x) { return 3 * x; }\ndouble mix(double x) { return scale(x) + 1; }\n",
        ])
        .expect("lowers");
        let mix = m.functions.iter().find(|(_, f)| f.name == "mix").map(|(_, f)| f).expect("mix is a device function");
        let called: Vec<&str> = mix.body.exprs.iter().filter_map(|(_, e)| match &e.kind {
            ExprKind::Call { func, .. } => Some(m.functions[*func].name.as_str()),
            _ => None,
        }).collect();
        assert_eq!(called, ["scale@unit1.c"]);
        let mut direct = callees(&m, &m.kernels[Handle::new(0)]);
        direct.sort();
        assert_eq!(direct, ["mix", "scale@unit0.c"]);
    }

    #[test]
    fn a_routine_directive_names_its_files_static_function() {
        let m = lower(&[
            &format!("static double scale(double x);\n#pragma acc routine(scale) seq\nvoid f{LOOP}scale(a[i]);\n}}\nstatic double scale(double x) {{ return 2 * x; }}\n"),
            "double scale(double x) { return 3 * x; }\n",
        ])
        .expect("lowers");
        assert_eq!(callees(&m, &m.kernels[Handle::new(0)]), ["scale@unit0.c"]);
    }

    #[test]
    fn an_external_function_defined_in_two_files_is_refused() {
        let errors = lower(&["double scale(double x) { return 2 * x; }\n", &format!("double scale(double x) {{ return 3 * x; }}\nvoid g{LOOP}scale(a[i]);\n}}\n")])
            .expect_err("refused");
        assert!(errors.iter().any(|e| e.contains("the function `scale` is also defined at") && e.contains("unit0.c:1:8")), "{errors:?}");
    }
}
