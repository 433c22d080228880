use super::*;
use crate::front::lexer::lex;

pub(crate) fn parse(src: &str) -> Result<(TranslationUnit, Vec<Diagnostic>), Diagnostic> {
    let toks = lex(src, 0)?;
    parse_translation_unit(src, 0, toks)
}
fn parse_ok(src: &str) -> TranslationUnit {
    match parse(src) {
        Ok((tu, _)) => tu,
        Err(d) => panic!("parse failed: {} at {:?} ({})", d.message, d.span, d.label),
    }
}
fn body(tu: &TranslationUnit, i: usize) -> &Block {
    match &tu.items[i] {
        ExternalDecl::Function(f) => &f.body,
        other => panic!("not a function: {other:?}"),
    }
}
/// Renders an expression in fully parenthesised form to check the tree shape.
fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Ident(s) => s.clone(),
        ExprKind::IntLit { value, .. } => value.to_string(),
        ExprKind::FloatLit { value, .. } => value.to_string(),
        ExprKind::ImagLit { value, .. } => format!("{value}i"),
        ExprKind::CharLit(c) => format!("'{c}'"),
        ExprKind::StringLit(s) => format!("{s:?}"),
        ExprKind::Unary { op, operand } => format!("({op:?} {})", show(operand)),
        ExprKind::Binary { op, lhs, rhs } => format!("({} {op:?} {})", show(lhs), show(rhs)),
        ExprKind::Assign { op, lhs, rhs } => format!("({} ={op:?} {})", show(lhs), show(rhs)),
        ExprKind::Conditional { cond, then, otherwise } => format!("({} ? {} : {})", show(cond), show(then), show(otherwise)),
        ExprKind::Cast { ty, expr } => format!("(cast {:?} {})", ty.specs.ty, show(expr)),
        ExprKind::SizeofType(t) => format!("(sizeof {:?})", t.specs.ty),
        ExprKind::SizeofExpr(e) => format!("(sizeof {})", show(e)),
        ExprKind::Call { callee, args } => format!("{}({})", show(callee), args.iter().map(show).collect::<Vec<_>>().join(", ")),
        ExprKind::Index { base, index } => format!("{}[{}]", show(base), show(index)),
        ExprKind::Member { base, field, arrow } => format!("{}{}{field}", show(base), if *arrow { "->" } else { "." }),
        ExprKind::CompoundLiteral { ty, .. } => format!("(literal {:?})", ty.specs.ty),
    }
}
fn expr_of(src: &str) -> String {
    let tu = parse_ok(&format!("void f(void) {{ {src}; }}"));
    match &body(&tu, 0).stmts[0].kind {
        StmtKind::Expr(Some(e)) => show(e),
        other => panic!("{other:?}"),
    }
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(expr_of("a + b * c"), "(a Add (b Mul c))");
    assert_eq!(expr_of("a - b - c"), "((a Sub b) Sub c)");
    assert_eq!(expr_of("a = b = c"), "(a =None (b =None c))");
    assert_eq!(expr_of("a || b && c | d ^ e & f == g < h << i + j"), "(a LogOr (b LogAnd (c BitOr (d BitXor (e BitAnd (f Eq (g Lt (h Shl (i Add j)))))))))");
    assert_eq!(expr_of("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
    assert_eq!(expr_of("x += -*p++"), "(x =Some(Add) (Neg (Deref (PostInc p))))");
    assert_eq!(expr_of("a, b = c"), "(a Comma (b =None c))");
    assert_eq!(expr_of("s.a[i]->b(x, y)"), "s.a[i]->b(x, y)");
    assert_eq!(expr_of("!a < b"), "((Not a) Lt b)");
    assert_eq!(expr_of("\"ab\" \"cd\""), "\"abcd\"");
}

#[test]
fn casts_versus_parentheses() {
    assert_eq!(expr_of("(double)a / b"), "((cast Base(Double) a) Div b)");
    assert_eq!(expr_of("(a) - b"), "(a Sub b)");
    assert_eq!(expr_of("sizeof(int) * n"), "((sizeof Base(Int)) Mul n)");
    assert_eq!(expr_of("sizeof a[0]"), "(sizeof a[0])");
    assert_eq!(expr_of("sizeof(a) + 1"), "((sizeof a) Add 1)");
    let tu = parse_ok("typedef float real; void f(void) { (real)x; { int real = 2; (real) - 1; } (real)-1; }");
    let b = body(&tu, 1);
    let StmtKind::Expr(Some(e)) = &b.stmts[0].kind else { panic!() };
    assert_eq!(show(e), "(cast TypedefName(\"real\") x)");
    let StmtKind::Compound(inner) = &b.stmts[1].kind else { panic!() };
    let StmtKind::Expr(Some(e)) = &inner.stmts[1].kind else { panic!() };
    assert_eq!(show(e), "(real Sub 1)");
    let StmtKind::Expr(Some(e)) = &b.stmts[2].kind else { panic!() };
    assert_eq!(show(e), "(cast TypedefName(\"real\") (Neg 1))");
    assert_eq!(expr_of("(struct P){1, 2}.x"), "(literal Struct(StructSpec { is_union: false, tag: Some(\"P\"), fields: None, unnatural_layout: None, span: Span { tu: 0, lo: 16, hi: 24 } })).x");
}

#[test]
fn complex_types_and_imaginary_constants() {
    for (src, base) in [
        ("float _Complex z;", BaseType::ComplexFloat),
        ("_Complex float z;", BaseType::ComplexFloat),
        ("double _Complex z;", BaseType::ComplexDouble),
        ("__complex__ double z;", BaseType::ComplexDouble),
        ("_Complex z;", BaseType::ComplexDouble),
        ("long double _Complex z;", BaseType::ComplexLongDouble),
        ("_Complex long double z;", BaseType::ComplexLongDouble),
    ] {
        assert!(matches!(first_decl(src).specs.ty, TypeSpec::Base(b) if b == base), "{src}");
    }
    for (src, message) in [
        ("int _Complex z;", "complex integer types"),
        ("_Complex _Complex double z;", "invalid combination"),
        ("float double _Complex z;", "invalid combination"),
    ] {
        let e = parse(src).unwrap_err();
        assert!(e.message.contains(message), "{src}: {}", e.message);
    }
    // What `I` expands to is an expression, not a cast.
    assert_eq!(expr_of("10 + 10 * (__extension__ 1.0iF)"), "(10 Add (10 Mul 1i))");
    assert_eq!(expr_of("(double)__real__ z + __imag__ w"), "((cast Base(Double) (Real z)) Add (Imag w))");
    let tu = parse_ok("void f(void) { double _Complex z; __real__ z = 1; }");
    let StmtKind::Expr(Some(e)) = &body(&tu, 0).stmts[1].kind else { panic!() };
    assert_eq!(show(e), "((Real z) =None 1)");
}

fn first_decl(src: &str) -> Declaration {
    match parse_ok(src).items.into_iter().next() {
        Some(ExternalDecl::Declaration(d)) => d,
        other => panic!("{other:?}"),
    }
}
fn shape(d: &Declarator) -> String {
    d.derived
        .iter()
        .map(|x| match x {
            DerivedType::Pointer(_) => "ptr".to_string(),
            DerivedType::Array { size: Some(_), .. } => "arr(n)".into(),
            DerivedType::Array { size: None, .. } => "arr".into(),
            DerivedType::Function { params, .. } => format!("fn/{}", params.len()),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn declarators() {
    let d = first_decl("int *a[10];");
    assert_eq!(shape(&d.declarators[0].declarator), "arr(n) ptr");
    let d = first_decl("int (*p)[10];");
    assert_eq!(d.declarators[0].declarator.name.as_deref(), Some("p"));
    assert_eq!(shape(&d.declarators[0].declarator), "ptr arr(n)");
    let d = first_decl("double (*fp)(double, int);");
    assert_eq!(shape(&d.declarators[0].declarator), "ptr fn/2");
    let d = first_decl("static const unsigned long x = 1, *y, z[2][3] = {{1}, {2, 3}};");
    assert_eq!(d.specs.storage, Some(StorageClass::Static));
    assert!(d.specs.qualifiers.is_const);
    assert!(matches!(d.specs.ty, TypeSpec::Base(BaseType::ULong)));
    assert_eq!(shape(&d.declarators[2].declarator), "arr(n) arr(n)");
    let d = first_decl("void (*signal(int sig, void (*handler)(int)))(int);");
    assert_eq!(d.declarators[0].declarator.name.as_deref(), Some("signal"));
    assert_eq!(shape(&d.declarators[0].declarator), "fn/2 ptr fn/1");
}

#[test]
fn array_parameters_and_vla() {
    let tu = parse_ok("void f(int n, int m, double a[n][m], double b[static 4], const float *restrict c) { double t[n]; }");
    let ExternalDecl::Function(f) = &tu.items[0] else { panic!() };
    let DerivedType::Function { params, .. } = &f.declarator.derived[0] else { panic!() };
    assert_eq!(params.len(), 5);
    assert_eq!(shape(&params[2].declarator), "arr(n) arr(n)");
    assert_eq!(shape(&params[3].declarator), "arr(n)");
    let DerivedType::Pointer(q) = params[4].declarator.derived[0] else { panic!() };
    assert!(q.is_restrict);
    assert!(params[4].specs.qualifiers.is_const);
}

#[test]
fn structs_unions_enums_typedefs() {
    let src = "struct P { int x, y; struct { double d; } inner; union { int i; float f; } u; };\n\
               typedef struct P P;\n typedef struct { P *p; int n; } Mesh;\n enum Color { RED, GREEN = 5, BLUE };\n\
               int g(Mesh *m, P p) { enum Color c = RED; return m->p->x + p.y + m->n + c; }";
    let tu = parse_ok(src);
    assert_eq!(tu.items.len(), 5);
    let ExternalDecl::Declaration(d) = &tu.items[0] else { panic!() };
    let TypeSpec::Struct(s) = &d.specs.ty else { panic!() };
    assert_eq!(s.fields.as_ref().map(|f| f.len()), Some(3));
    let b = body(&tu, 4);
    let StmtKind::Return(Some(e)) = &b.stmts[1].kind else { panic!() };
    assert_eq!(show(e), "(((m->p->x Add p.y) Add m->n) Add c)");
}

#[test]
fn statements() {
    let src = "int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; while (n) n--; do { s++; } while (s < 3);\n\
               switch (n) { case 1: s = 2; break; case 2: default: s = 3; }\n\
               if (s) goto out; else s = 1; out: return s; }";
    let tu = parse_ok(src);
    let b = body(&tu, 0);
    let kinds: Vec<&str> = b.stmts.iter().map(|s| match &s.kind {
        StmtKind::Decl(_) => "decl",
        StmtKind::For { init: Some(ForInit::Decl(_)), .. } => "for",
        StmtKind::While { .. } => "while",
        StmtKind::DoWhile { .. } => "do",
        StmtKind::Switch { .. } => "switch",
        StmtKind::If { otherwise: Some(_), .. } => "ifelse",
        StmtKind::Labeled { label, .. } if label == "out" => "label",
        _ => "other",
    }).collect();
    assert_eq!(kinds, vec!["decl", "for", "while", "do", "switch", "ifelse", "label"]);
    let tu = parse_ok("void f(void) { __asm__ __volatile__ (\"\" ::: \"memory\"); }");
    assert!(matches!(body(&tu, 0).stmts[0].kind, StmtKind::Expr(None)));
}

#[test]
fn pragma_wraps_unbraced_loop_and_nests() {
    let src = "void f(int n, float *a) {\n#pragma acc parallel\n#pragma acc loop\nfor (int i = 0; i < n; i++)\n#pragma acc loop seq\nfor (int j = 0; j < n; j++) a[i] = j;\n#pragma acc update host(a[0:n])\n}";
    let tu = parse_ok(src);
    let b = body(&tu, 0);
    assert_eq!(b.stmts.len(), 2);
    let StmtKind::Acc { directive, body: Some(inner) } = &b.stmts[0].kind else { panic!() };
    assert!(matches!(directive.kind, DirectiveKind::Parallel));
    let StmtKind::Acc { directive, body: Some(for_stmt) } = &inner.kind else { panic!() };
    assert!(matches!(directive.kind, DirectiveKind::Loop));
    let StmtKind::For { body: for_body, .. } = &for_stmt.kind else { panic!() };
    let StmtKind::Acc { directive, body: Some(inner_for) } = &for_body.kind else { panic!() };
    assert!(matches!(directive.clauses[0].kind, ClauseKind::Seq));
    assert!(matches!(inner_for.kind, StmtKind::For { .. }));
    let StmtKind::Acc { directive, body: None } = &b.stmts[1].kind else { panic!() };
    assert!(matches!(directive.kind, DirectiveKind::Update));
}

#[test]
fn routine_attaches_to_next_function() {
    let src = "#pragma acc routine seq\nfloat sq(float x) { return x * x; }\nint g(void);\n#pragma acc routine(g) seq\nint h(void) { return 0; }";
    let tu = parse_ok(src);
    let ExternalDecl::Function(f) = &tu.items[0] else { panic!() };
    assert!(f.routine.is_some());
    assert!(matches!(tu.items[2], ExternalDecl::Directive(Directive { kind: DirectiveKind::Routine(Some(_)), .. })));
    let ExternalDecl::Function(h) = &tu.items[3] else { panic!() };
    assert!(h.routine.is_none());
}

#[test]
fn spans_cover_the_source_text() {
    let src = "static int f(int n) {\n  int s = (n + 1) * 2;\n#pragma acc parallel loop\n  for (int i = 0; i < n; i++) s += i;\n  return s;\n}\n";
    let tu = parse_ok(src);
    let text = |sp: Span| &src[sp.lo as usize..sp.hi as usize];
    let ExternalDecl::Function(f) = &tu.items[0] else { panic!() };
    assert_eq!(text(f.span), src.trim_end());
    let b = &f.body;
    assert_eq!(text(b.stmts[0].span), "int s = (n + 1) * 2;");
    let StmtKind::Decl(d) = &b.stmts[0].kind else { panic!() };
    let Some(Initializer::Expr(e)) = &d.declarators[0].init else { panic!() };
    let ExprKind::Binary { lhs, .. } = &e.kind else { panic!() };
    assert_eq!(text(lhs.span), "(n + 1)");
    assert_eq!(text(b.stmts[1].span), "#pragma acc parallel loop\n  for (int i = 0; i < n; i++) s += i;");
    assert_eq!(text(b.stmts[2].span), "return s;");
}

#[test]
fn routine_before_a_prototype_names_it() {
    let tu = parse_ok("#pragma acc routine seq\nfloat sq(float x);\nfloat sq(float x) { return x * x; }");
    assert!(matches!(&tu.items[0], ExternalDecl::Directive(Directive { kind: DirectiveKind::Routine(Some(n)), .. }) if n == "sq"));
    assert!(matches!(&tu.items[2], ExternalDecl::Function(f) if f.routine.is_none()));
}

#[test]
fn typedef_names_as_parameter_names_and_static_asserts() {
    let tu = parse_ok("typedef float real;\n_Static_assert(sizeof(real) == 4, \"x\");\nvoid f(real, int real) { _Static_assert(1, \"y\"); (real) * 2; }");
    assert_eq!(tu.items.len(), 2);
    let ExternalDecl::Function(f) = &tu.items[1] else { panic!() };
    let DerivedType::Function { params, .. } = &f.declarator.derived[0] else { panic!() };
    assert!(params[0].declarator.name.is_none());
    assert_eq!(params[1].declarator.name.as_deref(), Some("real"));
    let StmtKind::Expr(Some(e)) = &f.body.stmts[1].kind else { panic!() };
    assert_eq!(show(e), "(real Mul 2)");
}

#[test]
fn gnu_builtins_from_standard_macros() {
    // What glibc's assert, offsetof and va_arg expand to.
    assert_eq!(expr_of("((void) sizeof ((x) ? 1 : 0), __extension__ ({ if (x) ; else abort(); }))"),
        "((cast Base(Void) (sizeof (x ? 1 : 0))) Comma __builtin_stmt_expr())");
    assert_eq!(expr_of("n = __builtin_offsetof(struct P, a[2].b)"), "(n =None __builtin_offsetof(2))");
    assert_eq!(expr_of("d = __builtin_va_arg(ap, double)"), "(d =None __builtin_va_arg(ap))");
}

#[test]
fn compute_directive_at_file_scope_is_an_error() {
    let e = parse("int x;\n#pragma acc parallel\nint y;").unwrap_err();
    assert_eq!(e.message, "`parallel` must be inside a function");
}

#[test]
fn minus_reduction_is_read_as_plus_with_a_warning() {
    let (_, warnings) = parse("void f(int n, double *a) {\ndouble s = 0;\n#pragma acc parallel loop reduction(-:s)\nfor (int i = 0; i < n; i++) s -= a[i];\n}\n").unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("read as `+`"), "{}", warnings[0].message);
}

/// Unknown pragmas warn; host code's OpenMP is the host compiler's (recorded, no warning here:
/// the driver says once what becomes of it); OpenMP inside a compute construct is ignored with
/// a warning that says so.
#[test]
fn other_pragmas_warn_and_host_openmp_is_recorded() {
    let (tu, warnings) = parse("void f(void) {\n#pragma omp parallel for\nfor (;;) break;\n}\n#pragma GCC optimize(\"O3\")\n").unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].message, "ignored pragma");
    assert!(warnings[0].label.contains("#pragma GCC"), "{}", warnings[0].label);
    assert!(matches!(body(&tu, 0).stmts[0].kind, StmtKind::For { .. }));
    assert_eq!(tu.openmp_pragmas.len(), 1);
    let (tu, warnings) = parse("void g(int n, double *a) {\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) {\n#pragma omp simd\nfor (int j = 0; j < 4; j++) a[i] += j;\n}\n}\n").unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].label, "OpenMP inside a compute region is ignored");
    assert!(tu.openmp_pragmas.is_empty());
}

#[test]
fn system_header_declarations_are_skipped_but_typedefs_kept() {
    let src = "# 1 \"/usr/include/x.h\" 1 3 4\n\
               typedef unsigned long size_t;\n typedef struct _IO_FILE FILE;\n typedef struct { int a; } div_t, *pdiv_t;\n\
               typedef void (*__sighandler_t) (int);\n extern int printf (const char *__restrict __format, ...) __attribute__ ((__nonnull__ (1)));\n\
               static inline int foo(int x) { return x; }\n typedef int __jmp_buf[8];\n\
               # 3 \"a.c\" 2\n\
               size_t n; FILE *f; div_t d; pdiv_t pd; __sighandler_t h; __jmp_buf j;\n int main(void) { return (size_t)1; }";
    let tu = parse_ok(src);
    assert_eq!(tu.items.len(), 7);
    for item in &tu.items[..6] {
        let ExternalDecl::Declaration(d) = item else { panic!() };
        assert!(matches!(d.specs.ty, TypeSpec::TypedefName(_)), "{d:?}");
    }
}

#[test]
fn parse_errors_have_spans_and_messages() {
    let src = "int main(void) {\n  int x = 1\n  return x;\n}";
    let e = parse(src).unwrap_err();
    assert_eq!(e.message, "expected `;` after the declaration");
    assert_eq!(e.span.unwrap().lo as usize, src.find("return").unwrap());
    let e = parse("int f(void) { return (1 + ; }").unwrap_err();
    assert_eq!(e.message, "expected expression");
    let e = parse("int f(void) { if 1) {} }").unwrap_err();
    assert_eq!(e.message, "expected `(` after `if`");
    let e = parse("int f(void) { real x = 1; }").unwrap_err();
    assert_eq!((e.message.as_str(), e.span.unwrap().lo), ("unknown type name `real`", 14));
    let e = parse("vec3 *v;").unwrap_err();
    assert_eq!(e.message, "unknown type name `vec3`");
    // A multiplication statement is not mistaken for a declaration.
    assert!(parse("void f(int a, int b) { a * b; }").is_ok());
    let e = parse("int f(void) { return 1; }\n}").unwrap_err();
    assert_eq!((e.message.as_str(), e.span.unwrap().lo), ("unexpected `}` at file scope", 26));
}

#[test]
fn garbled_input_never_panics() {
    let sample = "typedef struct { int n; double *v; } Vec;\nstatic double dot(const Vec *a, const Vec *b) {\n  double s = 0.0;\n#pragma acc parallel loop reduction(+:s) copyin(a->v[0:a->n], b->v[0:b->n])\n  for (int i = 0; i < a->n; i++) s += a->v[i] * b->v[i];\n  return s;\n}\nint main(int argc, char **argv) { Vec x = { .n = 3, .v = (double[]){1, 2, 3} }; switch (argc) { case 1: return (int)dot(&x, &x); default: ; } return sizeof(Vec) > 2 ? 0 : 1; }\n";
    assert!(parse(sample).is_ok());
    for end in 0..sample.len() {
        if sample.is_char_boundary(end) {
            let _ = parse(&sample[..end]);
        }
    }
    // Drop each token-ish byte in turn.
    for skip in 0..sample.len() {
        let garbled: String = sample.char_indices().filter(|(i, _)| *i != skip).map(|(_, c)| c).collect();
        let _ = parse(&garbled);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 300, ..Default::default() })]
    /// Random sequences of C fragments (and pragma lines) never make the parser panic.
    #[test]
    fn random_fragments_never_panic(parts in proptest::collection::vec(proptest::sample::select(vec![
        "int ", "x", "T", "typedef ", "struct S ", "{", "}", "(", ")", "[", "]", ";", ",", "*", "=", "1",
        "2.5f", "'c'", "\"s\"", "+", "-", "?", ":", "for", "if", "else", "while", "return ", "sizeof",
        "->", ".", "\n#pragma acc parallel loop copy(x[0:1])\n", "\n#pragma acc update host(x)\n",
        "\n#pragma omp for\n", "case ", "default", "goto ", "enum ", "union ", "const ", "static ",
        "void ", "(*", "...", "&&", "<<=", "++", "__attribute__((x))", "#", "\n# 1 \"/usr/include/a.h\" 1 3\n",
        "\n# 9 \"a.c\" 2\n",
    ]), 0..60)) {
        let src: String = parts.concat();
        let _ = parse(&src);
    }
}

#[test]
fn absurd_nesting_is_an_error_not_a_crash() {
    let deep = "int x = ".to_string() + &"(".repeat(5000) + "1" + &")".repeat(5000) + ";";
    let r = run_with_parser_stack(|| parse(&deep).map(|_| ()).map_err(|d| d.message)).unwrap();
    assert_eq!(r, Err("nesting is too deep".to_string()));
    let deep_blocks = "void f(void) ".to_string() + &"{".repeat(3000) + &"}".repeat(3000);
    assert!(run_with_parser_stack(|| parse(&deep_blocks).is_err()).unwrap());
    let deep_structs = "struct { ".repeat(3000) + &"int x; } y; ".repeat(3000);
    assert!(run_with_parser_stack(|| parse(&deep_structs).is_err()).unwrap());
    for deep in ["int ".to_string() + &"(".repeat(5000) + "x" + &")".repeat(5000) + ";",
                 "int x[1] = ".to_string() + &"{".repeat(5000) + "1" + &"}".repeat(5000) + ";",
                 "int x = ".to_string() + &"-".repeat(10000) + "1;",
                 "void f(void) { ".to_string() + &"if (1) ;".repeat(1) + &" else if (1) ;".repeat(5000) + " }"] {
        assert!(run_with_parser_stack(|| parse(&deep).is_err()).unwrap());
    }
    // Long but reasonable nesting is fine: a 1,000-arm else-if chain.
    let chain = "void f(int x) { if (x == 0) ; ".to_string() + &(1..1000).map(|i| format!("else if (x == {i}) ; ")).collect::<String>() + "}";
    assert!(run_with_parser_stack(|| parse(&chain).is_ok()).unwrap());
}
