//! Tests of the host back end: edits, hooks, regions, and the C the system compiler builds.

use super::*;

#[test]
fn nested_edits_render_inside_their_container() {
    let text = "abc DATA{ x = malloc(4); } tail";
    let data_lo = 4u32;
    let data_hi = text.find(" tail").unwrap() as u32;
    let body_lo = text.find('{').unwrap() as u32;
    let m = text.find("malloc").unwrap() as u32;
    let mut edits = vec![
        Edit::replace(m, m + 6, vec![Piece::Text("__yosegi_malloc".into())]),
        Edit::replace(
            data_lo,
            data_hi,
            vec![Piece::Text("<".into()), Piece::Source(body_lo, data_hi), Piece::Text(">".into())],
        ),
        Edit::insert(0, "H;".into()),
    ];
    sort_edits(&mut edits);
    let mut out = String::new();
    apply_edits(text, &edits, &mut out);
    assert_eq!(out, "H;abc <{ x = __yosegi_malloc(4); }> tail");
}

#[test]
fn replacements_keep_line_count() {
    assert_eq!(keep_lines("x".into(), "a\nb\nc"), "x\n\n");
    assert!(!is_acc_pragma_line("#pragma accx"));
    assert!(is_acc_pragma_line("  #  pragma acc parallel"));
}

#[test]
fn arg_initializers_follow_kinds() {
    let args = vec![
        HostArg { c_expr: "n".into(), kind: HostArgKind::Int, size_expr: None },
        HostArg { c_expr: "a".into(), kind: HostArgKind::Pointer, size_expr: Some("sizeof(a)".into()) },
        HostArg { c_expr: "&s".into(), kind: HostArgKind::ScalarOut(crate::ir::ScalarType::F64), size_expr: None },
        HostArg { c_expr: "x".into(), kind: HostArgKind::Float, size_expr: None },
    ];
    let (decl, name) = arg_array("__yosegi_args0", &args);
    assert_eq!(name, "__yosegi_args0");
    assert_eq!(
        decl,
        "yosegi_arg __yosegi_args0[] = { { .i = (long long)(n) }, { .ptr = (void *)(a), .size = (long long)(sizeof(a)) }, { .ptr = (void *)(&s) }, { .f = (double)(x) } }; "
    );
}

// --- on parsed programs (regions built by hand where lowering would make them) ---

use crate::front::{PreprocessOptions, parse_program};
use crate::ir::DataSection;

struct Parsed {
    sources: SourceSet,
    units: Vec<TranslationUnit>,
    _dir: tempfile::TempDir,
}

fn parse(src: &str) -> Parsed {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prog.c");
    std::fs::write(&path, src).unwrap();
    let parsed = parse_program(&[path], &PreprocessOptions::default()).unwrap_or_else(|(sources, d)| {
        panic!("{}", crate::diag::render(&sources, &d.0, false));
    });
    Parsed { sources: parsed.sources, units: parsed.units, _dir: dir }
}

/// The `#pragma acc` statements of the program, outermost first, in source order.
fn acc_statements(units: &[TranslationUnit]) -> Vec<ast::Stmt> {
    fn walk(s: &ast::Stmt, out: &mut Vec<ast::Stmt>) {
        if let StmtKind::Acc { .. } = s.kind {
            out.push(s.clone());
        }
        match &s.kind {
            StmtKind::Compound(b) => b.stmts.iter().for_each(|s| walk(s, out)),
            StmtKind::If { then, otherwise, .. } => {
                walk(then, out);
                if let Some(o) = otherwise {
                    walk(o, out);
                }
            }
            StmtKind::While { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Acc { body: Some(body), .. } => walk(body, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for u in units {
        for item in &u.items {
            if let ExternalDecl::Function(f) = item {
                f.body.stmts.iter().for_each(|s| walk(s, &mut out));
            }
        }
    }
    out
}

fn compute_region(id: u32, stmt: &ast::Stmt, args: Vec<HostArg>) -> Region {
    Region {
        id,
        span: stmt.span,
        body_span: None,
        kind: RegionKind::Compute { kernels: vec![], data: vec![] },
        args,
        if_arg: None,
        function: "main".into(),
        unread_on_host: Vec::new(),
        host_after: Vec::new(),
        settle_after: Vec::new(),
    }
}

fn int_arg(e: &str) -> HostArg {
    HostArg { c_expr: e.into(), kind: HostArgKind::Int, size_expr: None }
}
fn ptr_arg(e: &str) -> HostArg {
    HostArg { c_expr: e.into(), kind: HostArgKind::Pointer, size_expr: None }
}

/// The emitted file of the first unit, without the inlined header.
fn emit(p: &Parsed, regions: Vec<Region>) -> String {
    let module = Module { regions, ..Module::default() };
    let program = emit_host_program(&p.sources, &p.units, &module);
    assert_valid_c(&program);
    let code = &program.files[0].code;
    code[unit_prelude().len()..].to_string()
}

/// The generated files must be C the system compiler accepts.
fn assert_valid_c(program: &HostProgram) {
    let dir = tempfile::tempdir().unwrap();
    for f in &program.files {
        std::fs::write(dir.path().join(&f.name), &f.code).unwrap();
        let out = std::process::Command::new("cc")
            .current_dir(dir.path())
            .args(["-std=gnu11", "-fsyntax-only", "-w", &f.name])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}:\n{}\n{}", f.name, String::from_utf8_lossy(&out.stderr), f.code);
    }
}

/// The user's part of the emitted text: from the function definitions on.
fn user_code(code: &str, from: &str) -> String {
    code[code.find(from).expect(from)..].to_string()
}

const SAXPY: &str = "#include <stdio.h>\n#include <stdlib.h>\n\
int main(void) {\n\
int n = 100;\n\
double *x = malloc(n * sizeof(double));\n\
double *y = (double *)calloc(n, sizeof(double));\n\
double err = 1.0;\n\
int iter = 0;\n\
#pragma acc parallel loop\n\
for (int i = 0; i < n; i++)\n\
    y[i] = 2.0 * x[i] + y[i];\n\
err = 0.0; iter++;\n\
double s = 0.0;\n\
for (int i = 0; i < n; i++)\n\
    s += y[i];\n\
printf(\"%f %f %d\\n\", s, err, iter);\n\
free(x);\n\
free(y);\n\
return 0;\n\
}\n";

#[test]
fn region_becomes_a_runtime_call_with_its_args() {
    let p = parse(SAXPY);
    let acc = acc_statements(&p.units);
    let region = compute_region(0, &acc[0], vec![int_arg("n"), ptr_arg("x"), ptr_arg("y")]);
    let code = user_code(&emit(&p, vec![region]), "int main");
    assert!(
        code.contains("yosegi_arg __yosegi_args0[] = { { .i = (long long)(n) }, { .ptr = (void *)(x) }, { .ptr = (void *)(y) } }; __yosegi_rt->region(0, __yosegi_args0, 3);"),
        "{code}"
    );
    assert!(!code.contains("#pragma acc"), "{code}");
    assert!(!code.contains("2.0 * x[i]"), "the kernel's statement stays in the host code:\n{code}");
}

#[test]
fn region_keeps_the_line_numbers_after_it() {
    let p = parse(SAXPY);
    let acc = acc_statements(&p.units);
    let region = compute_region(0, &acc[0], vec![]);
    let module = Module { regions: vec![region], ..Module::default() };
    let program = emit_host_program(&p.sources, &p.units, &module);
    let code = &program.files[0].code;
    let original = &p.sources.units[0].text;
    let line_of = |t: &str| newline_count(&t[..t.find("err = 0.0").unwrap()]);
    let prelude = newline_count(&unit_prelude());
    assert_eq!(line_of(code) - prelude, line_of(original));
    assert_eq!(
        newline_count(code) - newline_count(&unit_prelude()),
        newline_count(original) + 2,
        "only the registration function is added at the end"
    );
}

#[test]
fn allocation_calls_go_to_the_runtime_wrappers() {
    let p = parse(SAXPY);
    let code = user_code(&emit(&p, vec![]), "int main");
    assert!(code.contains("double *x = __yosegi_malloc(n * sizeof(double));"), "{code}");
    assert!(code.contains("(double *)__yosegi_calloc(n, sizeof(double));"), "{code}");
    assert!(code.contains("__yosegi_free(x);"), "{code}");
    assert!(!code.contains(" malloc("), "{code}");
}

#[test]
fn host_loop_after_a_kernel_gets_one_hoisted_hook() {
    let p = parse(SAXPY);
    let acc = acc_statements(&p.units);
    let region = compute_region(0, &acc[0], vec![int_arg("n"), ptr_arg("x"), ptr_arg("y")]);
    let code = user_code(&emit(&p, vec![region]), "double s = 0.0;");
    let hook = "__yosegi_rt->host_access((void *const[]){(void *)(y)}, (const int[]){1}, 1); for (int i = 0; i < n; i++)";
    assert!(code.contains(hook), "{code}");
    assert_eq!(code.matches("host_access").count(), 1, "one hook, before the loop:\n{code}");
    assert!(!code.contains("host_access_all"), "{code}");
}

#[test]
fn scalar_only_statements_get_no_hook() {
    let p = parse(SAXPY);
    let acc = acc_statements(&p.units);
    let region = compute_region(0, &acc[0], vec![]);
    let code = emit(&p, vec![region]);
    let line = code.lines().find(|l| l.contains("err = 0.0; iter++;")).unwrap();
    assert!(!line.contains("host_access"), "{line}");
    let print = code.lines().find(|l| l.contains("printf(")).unwrap();
    assert!(!print.contains("host_access"), "printf of scalars touches no array: {print}");
}

#[test]
fn writes_by_library_functions_are_write_hooks() {
    let p = parse(
        "#include <string.h>\nvoid f(double *a, double *b, int n) {\n    memcpy(a, b, n * sizeof(double));\n    a[0] += 1.0;\n}\n",
    );
    let code = user_code(&emit(&p, vec![]), "void f");
    assert!(code.contains("host_access((void *const[]){(void *)(a), (void *)(b)}, (const int[]){2, 1}, 2); memcpy"), "{code}");
    assert!(code.contains("host_access((void *const[]){(void *)(a)}, (const int[]){3}, 1); a[0] += 1.0;"), "{code}");
}

#[test]
fn struct_members_and_static_arrays_are_bases() {
    let p = parse(
        "typedef struct { int rows; double *m; } Mat;\nstatic double grid[4][8];\ndouble total(Mat *mt) {\n    double s = 0;\n    for (int i = 0; i < mt->rows; i++)\n        s += mt->m[i] + grid[1][i];\n    return s;\n}\n",
    );
    let code = emit(&p, vec![]);
    let body = user_code(&code, "double total");
    assert!(
        body.contains("host_access((void *const[]){(void *)(mt), (void *)(mt->m), (void *)(grid)}, (const int[]){1, 1, 1}, 3); for"),
        "{body}"
    );
    assert!(code.contains("__yosegi_rt->register_static((void *)grid, sizeof(grid), \"grid\");"), "{code}");
}

#[test]
fn loop_variant_bases_fall_back_to_host_access_all() {
    let p = parse(
        "void show(double **rows, int n) {\n    for (int i = 0; i < n; i++)\n        rows[i][0] = 0.0;\n}\n",
    );
    let code = user_code(&emit(&p, vec![]), "void show");
    assert!(code.contains("__yosegi_rt->host_access_all(); for"), "{code}");
    assert_eq!(code.matches("host_access").count(), 1, "{code}");
}

#[test]
fn data_region_wraps_its_body_and_nested_regions_are_replaced() {
    let src = "int main(void) {\n    double a[16];\n    #pragma acc data copy(a)\n    {\n        #pragma acc parallel loop\n        for (int i = 0; i < 16; i++) a[i] = i;\n        a[0] = 5;\n    }\n    return (int)a[0];\n}\n";
    let p = parse(src);
    let acc = acc_statements(&p.units);
    let StmtKind::Acc { body: Some(body), .. } = &acc[0].kind else { panic!("data construct without body") };
    let data = Region {
        id: 0,
        span: acc[0].span,
        body_span: Some(body.span),
        kind: RegionKind::Data {
            data: vec![DataSection {
                kind: ast::DataClauseKind::Copy,
                base: 0,
                lo: None,
                len: None,
                elem_size: 8,
                name: "a".into(),
                span: acc[0].span,
                zero: false,
                rows: None,
                dead_on_host: false,
            }],
        },
        args: vec![HostArg { c_expr: "a".into(), kind: HostArgKind::Pointer, size_expr: Some("sizeof(a)".into()) }],
        if_arg: None,
        function: "main".into(),
        unread_on_host: Vec::new(),
        host_after: Vec::new(),
        settle_after: Vec::new(),
    };
    let compute = compute_region(1, &acc[1], vec![ptr_arg("a")]);
    let code = user_code(&emit(&p, vec![data, compute]), "int main");
    let enter = code.find("__yosegi_rt->data_enter(0, __yosegi_args0, 1);").expect(&code);
    let launch = code.find("__yosegi_rt->region(1, __yosegi_args1, 1);").expect(&code);
    let store = code.find("a[0] = 5;").expect(&code);
    let exit = code.find("__yosegi_rt->data_exit(0, __yosegi_args0, 1);").expect(&code);
    assert!(enter < launch && launch < store && store < exit, "{code}");
    assert!(code.contains(".size = (long long)(sizeof(a))"), "{code}");
    // A store of one element makes only that element stale on the device.
    assert!(
        code.contains("host_access_range((void *const[]){(void *)&(a[0])}, (const unsigned long long[]){sizeof(a[0])}, (const int[]){2}, 1); a[0] = 5;"),
        "{code}"
    );
    assert!(!code.contains("#pragma acc"), "{code}");
}

#[test]
fn if_clause_keeps_the_original_statement_for_the_host() {
    let src = "void f(double *a, int n) {\n    #pragma acc parallel loop if(n > 100)\n    for (int i = 0; i < n; i++) a[i] = 0;\n}\n";
    let p = parse(src);
    let acc = acc_statements(&p.units);
    let mut region = compute_region(0, &acc[0], vec![ptr_arg("a"), int_arg("n"), int_arg("n > 100")]);
    region.if_arg = Some(2);
    let code = user_code(&emit(&p, vec![region]), "void f");
    assert!(code.contains("if (n > 100) { yosegi_arg"), "{code}");
    assert!(code.contains("else { __yosegi_rt->host_access_all(); "), "{code}");
    assert!(code.contains("for (int i = 0; i < n; i++) a[i] = 0; }"), "{code}");
}

#[test]
fn loops_that_launch_are_entered_and_their_host_statements_hooked() {
    let src = "void step(double *a, int n);\nvoid run(double *a, int n) {\n    for (int t = 0; t < 10; t++) {\n        step(a, n);\n        a[0] = a[1];\n    }\n}\nvoid step(double *a, int n) {\n    #pragma acc parallel loop\n    for (int i = 0; i < n; i++) a[i] += 1;\n}\n";
    let p = parse(src);
    let acc = acc_statements(&p.units);
    let region = compute_region(0, &acc[0], vec![ptr_arg("a"), int_arg("n")]);
    let code = user_code(&emit(&p, vec![region]), "void run");
    let run = &code[..code.find("void step").unwrap()];
    assert!(run.contains("{\n        step(a, n);"), "no hook for a call to a user function:\n{run}");
    assert!(run.contains("host_access((void *const[]){(void *)(a)}, (const int[]){3}, 1); a[0] = a[1];"), "{run}");
    assert!(!run.contains("host_access_all"), "{run}");
}

#[test]
fn glue_defines_the_entry_and_registers_every_unit() {
    let p = parse("int main(void) { return 0; }\n");
    let program = emit_host_program(&p.sources, &p.units, &Module::default());
    let glue = &program.files.last().unwrap().code;
    assert_eq!(program.files.last().unwrap().name, GLUE_FILE_NAME);
    assert!(glue.contains("int __yosegi_entry(yosegi_runtime *rt, int argc, char **argv)"));
    assert!(glue.contains("__yosegi_register_tu0();"));
    assert!(glue.contains("fflush(NULL); __yosegi_rt->at_exit();"));
    assert!(glue.contains("int acc_on_device(acc_device_t t)"));
    assert_valid_c(&program);
}

#[test]
fn reads_after_a_launching_call_in_one_statement_are_hooked_after_the_call() {
    let src = "void bump(double *a, int n) {\n    #pragma acc parallel loop\n    for (int i = 0; i < n; i++) a[i] += 1;\n}\ndouble bumped(double *a, int n) { bump(a, n); return 0.0; }\nvoid run(double *a, double *b, int n) {\n    b[0] = bumped(a, n) + a[1];\n    while (a[0] < bumped(a, n)) { }\n    bump(a, n);\n}\n";
    let p = parse(src);
    let acc = acc_statements(&p.units);
    let region = compute_region(0, &acc[0], vec![ptr_arg("a"), int_arg("n")]);
    let code = user_code(&emit(&p, vec![region]), "void run");
    let hook = "__yosegi_rt->host_access((void *const[]){(void *)(b), (void *)(a)}, (const int[]){2, 1}, 2)";
    assert!(
        code.contains(&format!("b[0] = ({{ __auto_type __yosegi_r = bumped(a, n); {hook}; __yosegi_r; }}) + a[1];")),
        "{code}"
    );
    let cond_hook = "__yosegi_rt->host_access((void *const[]){(void *)(a)}, (const int[]){1}, 1)";
    assert!(
        code.contains(&format!(
            "while (({cond_hook}, (a[0] < ({{ __auto_type __yosegi_r = bumped(a, n); {cond_hook}; __yosegi_r; }})))) {{ }}"
        )),
        "{code}"
    );
    assert!(code.contains("    bump(a, n);\n"), "a call alone needs no hook:\n{code}");
}

fn newline_count(s: &str) -> usize {
    s.bytes().filter(|b| *b == b'\n').count()
}

/// The calls that open files go through the glue (rank 0 alone writes files in a job), unless
/// the program defines a function of that name itself, which is then called as written.
#[test]
fn file_opening_calls_are_wrapped_unless_the_program_defines_them() {
    let p = parse(
        "#include <stdio.h>\n\
         int open(const char *path, int flags, ...);\n\
         static int creat(const char *path, int mode) { return mode; }\n\
         int main(void) {\n    FILE *f = fopen(\"a\", \"w\");\n    f = freopen(\"b\", \"a\", f);\n    \
         int fd = open(\"c\", 01 | 0100, 0644);\n    return creat(\"d\", fd);\n}\n",
    );
    let out = emit(&p, vec![]);
    for wrapped in ["__yosegi_fopen(\"a\"", "__yosegi_freopen(\"b\"", "__yosegi_open(\"c\""] {
        assert!(out.contains(wrapped), "{wrapped} missing:\n{out}");
    }
    assert!(out.contains("return creat(\"d\", fd)"), "the program's own creat was wrapped:\n{out}");
}

// --- host OpenMP and the pragmas in front of a statement ---

/// The generated files, compiled with the system compiler and these flags (`-fopenmp`: the
/// OpenMP directives are read, and a hook between a construct and its loop is an error).
fn assert_valid_c_with(program: &HostProgram, flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for f in &program.files {
        std::fs::write(dir.path().join(&f.name), &f.code).unwrap();
        let out = std::process::Command::new("cc")
            .current_dir(dir.path())
            .args(["-std=gnu11", "-fsyntax-only", "-w"])
            .args(flags)
            .arg(&f.name)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}:\n{}\n{}", f.name, String::from_utf8_lossy(&out.stderr), f.code);
    }
}

const HOST_OPENMP: &str = "#include <stdio.h>\n\
double a[64];\n\
int main(void) {\n\
#pragma acc parallel loop\n\
for (int i = 0; i < 64; i++) a[i] = i;\n\
#pragma omp parallel for\n\
for (int i = 0; i < 64; i++) a[i] += 1;\n\
#pragma omp parallel\n\
{\n\
double *p = a;\n\
#pragma omp for\n\
for (int i = 0; i < 64; i++) p[i] *= 2;\n\
}\n\
#pragma GCC unroll 4\n\
for (int i = 0; i < 64; i++) a[i] -= 1;\n\
printf(\"%g\\n\", a[63]);\n\
}\n";

#[test]
fn pragma_lines_before_a_statement_are_found_and_acc_lines_are_not() {
    let text = "x;\n#pragma omp parallel for\n# 7 \"a.c\"\n\n  #pragma GCC ivdep\n  for (;;);\n#pragma acc loop\nfor (;;);\n";
    let lo = text.find("  for").unwrap() as u32 + 2;
    let found = leading_pragmas(text, lo).expect("two pragma lines");
    assert_eq!(found.start, 3);
    assert_eq!(found.openmp, vec![3]);
    let after_acc = text.rfind("for").unwrap() as u32;
    assert_eq!(leading_pragmas(text, after_acc), None);
    // A statement that does not start its line has none.
    assert_eq!(leading_pragmas("#pragma omp for\nx; y;\n", 19), None);
}

/// The hooks go before the pragma lines in front of their statement, with a line marker that
/// keeps the pragma's line number, so the construct still takes its loop (cc -fopenmp accepts
/// the file); a construct whose statement declares its own pointer gets one hook before it
/// (`host_access_all`), none inside, where it would run on each thread.
#[test]
fn hooks_go_before_openmp_and_loop_pragmas_and_once_per_construct() {
    let p = parse(HOST_OPENMP);
    let acc = acc_statements(&p.units);
    let module = Module { regions: vec![compute_region(0, &acc[0], vec![])], ..Module::default() };
    let program = emit_host_program(&p.sources, &p.units, &module);
    assert_valid_c_with(&program, &["-fopenmp"]);
    let code = &program.files[0].code[unit_prelude().len()..];
    let lines: Vec<&str> = code.lines().collect();
    let at = |pragma: &str| lines.iter().position(|l| l.starts_with(pragma)).unwrap_or_else(|| panic!("no `{pragma}` in\n{code}"));
    for (pragma, line) in [("#pragma omp parallel for", 6), ("#pragma omp parallel", 8), ("#pragma GCC unroll 4", 14)] {
        let k = if pragma == "#pragma omp parallel" { lines.iter().position(|l| *l == pragma).unwrap() } else { at(pragma) };
        assert!(lines[k - 1].starts_with(&format!("# {line} \"")) && lines[k - 1].ends_with("prog.c\""), "{pragma}: {}\n{code}", lines[k - 1]);
        assert!(lines[k - 2].contains("__yosegi_rt->host_access"), "{pragma}: no hook before it:\n{code}");
        assert!(!lines[k + 1].contains("host_access"), "{pragma}: a hook between it and its statement:\n{code}");
    }
    let block = lines.iter().position(|l| *l == "#pragma omp parallel").unwrap();
    assert!(lines[block - 2].contains("__yosegi_rt->host_access_all()"), "{code}");
    let inside = lines[block + 1..].iter().take_while(|l| !l.starts_with('}')).filter(|l| l.contains("host_access")).count();
    assert_eq!(inside, 0, "hooks inside the parallel construct:\n{code}");
    // Where a hook went before a pragma, what follows keeps its line numbers.
    let printf = lines.iter().position(|l| l.contains("printf(")).unwrap();
    let original = p.sources.units[0].text.lines().position(|l| l.contains("printf(")).unwrap();
    let markers = lines[..printf].iter().filter(|l| l.starts_with("# ") && l.contains("prog.c")).count();
    let original_markers = p.sources.units[0].text.lines().take(original).filter(|l| l.starts_with("# ") && l.contains("prog.c")).count();
    assert_eq!(printf - original, 2 * (markers - original_markers), "each hook before pragmas adds its line and a marker");
}

/// An OpenMP construct whose loop launches a compute region runs on one thread: its pragma
/// line becomes a comment, and the driver is told where it is (to warn).
#[test]
fn an_openmp_construct_that_launches_regions_runs_on_one_thread() {
    let src = "double a[64];\nint main(void) {\n#pragma omp parallel for\nfor (int r = 0; r < 2; r++) {\n#pragma acc parallel loop\nfor (int i = 32 * r; i < 32 * r + 32; i++) a[i] = i;\n}\n\
               #pragma omp parallel sections\n{\n#pragma omp section\na[0] += 1;\n#pragma omp section\n{\n#pragma acc parallel loop\nfor (int i = 1; i < 64; i++) a[i] += 1;\n}\n}\n\
               #pragma omp parallel for\nfor (int i = 0; i < 64; i++) a[i] += 1;\nreturn 0;\n}\n";
    let p = parse(src);
    let acc = acc_statements(&p.units);
    let module = Module { regions: vec![compute_region(0, &acc[0], vec![]), compute_region(1, &acc[1], vec![])], ..Module::default() };
    let program = emit_host_program(&p.sources, &p.units, &module);
    assert_valid_c_with(&program, &["-fopenmp"]);
    let code = &program.files[0].code;
    assert_eq!(code.matches("// #pragma omp parallel for").count(), 1, "{code}");
    // The sections construct, and both its sections (the first's statement launches nothing).
    assert_eq!(code.matches("// #pragma omp parallel sections").count(), 1, "{code}");
    assert_eq!(code.matches("// #pragma omp section\n").count(), 2, "{code}");
    assert!(code.contains("\n#pragma omp parallel for\nfor (int i = 0; i < 64; i++) a[i] += 1;"), "{code}");
    let spans = openmp_constructs_that_launch(&p.sources, &p.units, &module);
    let lines: Vec<u32> = spans.iter().map(|s| p.sources.location(*s).line).collect();
    assert_eq!(lines, vec![3, 8], "the two constructs that launch (the section inside one is not told again)");
}

/// `main` returns 0 when it falls off its end, whatever it is called when compiled (`yosegi cc`
/// renames it); a `void main` is called as one and the entry returns 0.
#[test]
fn main_returns_zero_at_its_end_and_void_main_is_called_as_void() {
    let p = parse("#include <stdio.h>\nint main(int argc, char **argv) {\n    printf(\"%d\\n\", argc);\n}\nint other(void) { return 3; }\n");
    let program = emit_host_program(&p.sources, &p.units, &Module::default());
    assert_valid_c(&program);
    let code = &program.files[0].code;
    assert!(code.contains("printf(\"%d\\n\", argc);\n return 0; }"), "{code}");
    assert_eq!(code.matches("return 0;").count(), 1, "only main gets one:\n{code}");
    assert!(program.files[1].code.contains("int main(int, char **);") && program.files[1].code.contains("return main(argc, argv);"));
    let p = parse("void main(void) {\n    int x = 1;\n}\n");
    let program = emit_host_program(&p.sources, &p.units, &Module::default());
    assert_valid_c(&program);
    assert!(!program.files[0].code.contains("return 0;"), "{}", program.files[0].code);
    let glue = &program.files[1].code;
    assert!(glue.contains("void main(int, char **);") && glue.contains("    main(argc, argv);\n    return 0;\n"), "{glue}");
}
