//! Old C that gcc still compiles (with warnings, under its default `-std`): old-style (K&R)
//! function definitions, parameter lists without types, and implicit `int`.
//!
//! * `float squash(x) float x; { ... }`: the identifier list and the declarations between `)`
//!   and `{` become the parameters a prototype would have, in the list's order (whatever the
//!   order of the declarations), a name left undeclared being `int` (`void usage(pname) char
//!   *pname; {...}`, `int f(a, b) { ... }`). The function stays unprototyped
//!   (`DerivedType::Function { prototyped: false }`): callers pass the default promotions of
//!   their arguments, which the parameters' types receive, so the rest of the compiler sees an
//!   ordinary definition. The host code is the user's text, which the system compiler reads
//!   as C does.
//! * `double f();` declares a function whose parameters are unspecified (`(void)` declares none);
//!   `int f(a, b);` outside a definition is read the same way, as gcc reads it.
//! * `main() { ... }` and `f(x) { ... }` at file scope: the return type defaults to `int` (a
//!   bare storage class or qualifier, `static x = 3;`, `register i;`, already does in
//!   [`Parser::decl_specs`]).
//!
//! What gcc refuses in a declaration list is refused here too, at the name: a declaration of a
//! name the list does not have, a parameter declared twice or initialized, a storage class
//! other than `register`, and declarations after a prototype's `)`.

use super::*;

impl Parser<'_> {
    /// At the token after a parameter list's `(`: does an identifier list (`(x)`, `(a, b)`)
    /// start here? A name that is a type (a typedef) starts a prototype instead.
    pub(super) fn at_identifier_list(&self) -> bool {
        let t = self.peek();
        match t.ident() {
            Some(w) => {
                !KEYWORDS.contains(&w) && !self.starts_decl_specs(t) && (self.peek_at(1).is_punct(",") || self.peek_at(1).is_punct(")"))
            }
            None => false,
        }
    }

    /// An old-style identifier list up to its `)`: one parameter per name, `int` until the
    /// declarations after the `)` say otherwise ([`Self::old_style_declarations`]).
    pub(super) fn identifier_list(&mut self) -> PResult<Vec<ParamDecl>> {
        let mut params: Vec<ParamDecl> = Vec::new();
        loop {
            let (name, span) = self.expect_ident("a parameter name")?;
            if params.iter().any(|p| p.declarator.name.as_deref() == Some(name.as_str())) {
                return Err(Diagnostic::error(span, format!("parameter `{name}` is listed twice"))
                    .with_label("listed again here")
                    .with_help("give each parameter its own name"));
            }
            params.push(default_int_param(name, span));
            if !self.eat_punct(",") {
                break;
            }
            if !matches!(self.peek().ident(), Some(w) if !KEYWORDS.contains(&w) && !self.starts_decl_specs(self.peek())) {
                return Err(self.error_here("expected a parameter name")
                    .with_help("an old-style parameter list holds names only (`f(a, b)`); declare their types after the `)`, or write a prototype (`f(int a, int b)`)"));
            }
        }
        self.expect_punct(")", "to close the parameter list")?;
        Ok(params)
    }

    /// The return type of a file-scope function declared without one (`main() {`, `f(x) {`):
    /// `int`, as in C89. Only a name followed by `(` is read so; other declarations without
    /// a type keep their diagnostics (`real x;`: an unknown type name).
    pub(super) fn implicit_int_return(&self) -> Option<DeclSpecs> {
        let t = self.peek();
        let name = t.ident()?;
        if KEYWORDS.contains(&name) || self.starts_decl_specs(t) || !self.peek_at(1).is_punct("(") {
            return None;
        }
        Some(implicit_int(Span::new(self.tu, t.span.lo, t.span.lo)))
    }

    /// After the `)` of a definition's parameter list written without types: the declarations
    /// up to the body's `{`, which give the identifier list's parameters their types.
    pub(super) fn old_style_declarations(&mut self, declarator: &mut Declarator) -> PResult<()> {
        let Some(DerivedType::Function { params, .. }) = declarator.derived.first_mut() else { return Ok(()) };
        let mut declared: Vec<Option<ParamDecl>> = vec![None; params.len()];
        let function = declarator.name.clone().unwrap_or_default();
        while !self.is_punct("{") {
            if !self.starts_decl_specs(&self.peek().clone()) {
                return Err(self.error_here("expected a parameter declaration or `{` to start the function body")
                    .with_help("between an old-style parameter list and the body, only declarations of the parameters may appear (`int n;`)"));
            }
            let start = self.peek().span;
            let specs = self.decl_specs()?;
            if let Some(storage) = specs.storage.filter(|s| *s != StorageClass::Register) {
                return Err(Diagnostic::error(specs.span, format!("a parameter cannot be declared `{}`", storage_word(storage)))
                    .with_help("parameters take no storage class but `register`; remove it"));
            }
            if self.eat_punct(";") {
                // A declaration of nothing (a struct tag, say), as gcc allows with a warning.
                continue;
            }
            let mut first = true;
            loop {
                let d = self.declarator(DeclaratorKind::Named)?;
                self.skip_attributes()?;
                let name = d.name.clone().unwrap_or_default();
                if self.is_punct("=") {
                    return Err(self.error_here(format!("parameter `{name}` is initialized"))
                        .with_help("a parameter gets its value from the call; remove the initializer"));
                }
                let Some(k) = params.iter().position(|p| p.declarator.name.as_deref() == Some(name.as_str())) else {
                    return Err(Diagnostic::error(d.name_span, format!("declaration for parameter `{name}` but no such parameter"))
                        .with_label(format!("`{function}` lists no `{name}`"))
                        .with_help(format!("add `{name}` to the names in the parentheses of `{function}(...)`, or remove its declaration")));
                };
                if declared[k].is_some() {
                    return Err(Diagnostic::error(d.name_span, format!("parameter `{name}` is declared twice"))
                        .with_label("declared again here")
                        .with_help("keep one declaration of each parameter"));
                }
                let span = if first { start.to(self.prev_span()) } else { d.span };
                declared[k] = Some(ParamDecl { specs: specs.clone(), declarator: d, span });
                first = false;
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(";", "after the parameter declaration")?;
        }
        for (param, declared) in params.iter_mut().zip(declared) {
            if let Some(d) = declared {
                *param = d;
            }
        }
        Ok(())
    }
}

/// `int`, written nowhere: the type C89 gives a declaration without one.
fn implicit_int(span: Span) -> DeclSpecs {
    DeclSpecs { storage: None, qualifiers: Qualifiers::default(), is_inline: false, ty: TypeSpec::Base(BaseType::Int), span, block_shared: false }
}

/// A parameter of an identifier list: `int` until a declaration says otherwise.
fn default_int_param(name: String, span: Span) -> ParamDecl {
    let declarator = Declarator { name: Some(name), name_span: span, derived: Vec::new(), span };
    ParamDecl { specs: implicit_int(Span::new(span.tu, span.lo, span.lo)), declarator, span }
}

fn storage_word(s: StorageClass) -> &'static str {
    match s {
        StorageClass::Typedef => "typedef",
        StorageClass::Extern => "extern",
        StorageClass::Static => "static",
        StorageClass::Auto => "auto",
        StorageClass::Register => "register",
    }
}

/// Whether a function declarator's parameter list has types.
pub(super) fn prototyped(d: &Declarator) -> bool {
    !matches!(d.derived.first(), Some(DerivedType::Function { prototyped: false, .. }))
}

/// A declaration (not a definition) of a function with an identifier list, `int f(a, b);`,
/// says nothing of its parameters: gcc reads it as `int f();`.
pub(super) fn forget_identifier_list(d: &mut Declarator) {
    if let Some(DerivedType::Function { params, prototyped: false, .. }) = d.derived.first_mut() {
        params.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    fn unit(src: &str) -> TranslationUnit {
        parse(src).unwrap_or_else(|d| panic!("{src}: {} ({})", d.message, d.label)).0
    }

    fn function(src: &str) -> FunctionDef {
        match unit(src).items.into_iter().find(|i| matches!(i, ExternalDecl::Function(_))) {
            Some(ExternalDecl::Function(f)) => f,
            _ => panic!("{src}: no function"),
        }
    }

    /// A declarator's derivations, outward from the name.
    fn derived(d: &Declarator) -> String {
        d.derived
            .iter()
            .map(|x| match x {
                DerivedType::Pointer(_) => "ptr".to_string(),
                DerivedType::Array { .. } => "arr".into(),
                DerivedType::Function { params, prototyped, .. } => format!("fn/{}{}", params.len(), if *prototyped { "" } else { "?" }),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A definition's return type and its parameters, as the later stages read them.
    fn signature(f: &FunctionDef) -> (String, Vec<String>) {
        let Some(DerivedType::Function { params, .. }) = f.declarator.derived.first() else { panic!("not a function") };
        let params = params
            .iter()
            .map(|p| format!("{} {:?} {}", p.declarator.name.as_deref().unwrap_or("_"), p.specs.ty, derived(&p.declarator)))
            .collect();
        (format!("{:?} {}", f.specs.ty, derived(&f.declarator)), params)
    }

    fn prototyped_flag(f: &FunctionDef) -> bool {
        prototyped(&f.declarator)
    }

    #[test]
    fn an_old_style_definition_has_the_parameters_of_its_prototype() {
        for (old, new) in [
            ("float squash(x) float x; { return x; }", "float squash(float x) { return x; }"),
            ("void usage(pname) char *pname; { }", "void usage(char *pname) { }"),
            ("void setup(argc, argv) int argc; char *argv[]; { }", "void setup(int argc, char *argv[]) { }"),
            (
                "void fwd(l1, l2, conn, n1, n2) float *l1, *l2, **conn; int n1, n2; { }",
                "void fwd(float *l1, float *l2, float **conn, int n1, int n2) { }",
            ),
            // Declared in another order than listed; `k` left to default int.
            ("double blend(w, a, k) double a; register float w; { return a; }", "double blend(float w, double a, int k) { return a; }"),
            ("int f(a, b) { return a + b; }", "int f(int a, int b) { return a + b; }"),
            ("int g(a, fp) int (*fp)(int); { return fp(a); }", "int g(int a, int (*fp)(int)) { return fp(a); }"),
        ] {
            let (o, n) = (function(old), function(new));
            let (mut so, mut sn) = (signature(&o), signature(&n));
            // Only the list's marking differs: the old one has no prototype.
            assert!(!prototyped_flag(&o) && prototyped_flag(&n), "{old}");
            so.0 = so.0.replace('?', "");
            sn.0 = sn.0.replace('?', "");
            assert_eq!(so, sn, "{old}");
            assert_eq!(o.body.stmts.len(), n.body.stmts.len(), "{old}");
        }
    }

    #[test]
    fn declaration_lists_take_typedef_names_and_a_typedef_in_the_list_is_a_prototype() {
        let f = function("typedef float real; real h(x, n) real *x; { return x[n]; }");
        assert_eq!(signature(&f).1, vec!["x TypedefName(\"real\") ptr".to_string(), "n Base(Int) ".to_string()]);
        // A typedef name in the parentheses is a type: a prototype with an unnamed parameter.
        let f = function("typedef int T; int k(T) { return 0; }");
        assert!(prototyped_flag(&f));
        assert_eq!(signature(&f).1, vec!["_ TypedefName(\"T\") ".to_string()]);
    }

    #[test]
    fn empty_parentheses_declare_unspecified_parameters_and_void_declares_none() {
        let tu = unit("double f();\ndouble g(void);\nint h(a, b);\nint main() { return f(1, 2.0) + g(); }\n");
        let declared: Vec<String> = tu
            .items
            .iter()
            .map(|i| match i {
                ExternalDecl::Declaration(d) => derived(&d.declarators[0].declarator),
                ExternalDecl::Function(f) => derived(&f.declarator),
                ExternalDecl::Directive(_) => String::new(),
            })
            .collect();
        // `int h(a, b);` outside a definition is `int h();`, as gcc reads it.
        assert_eq!(declared, vec!["fn/0?", "fn/0", "fn/0?", "fn/0?"]);
    }

    #[test]
    fn implicit_int_where_gcc_accepts_it() {
        let f = function("main() { register i; static count = 0; return i + count; }");
        assert!(matches!(f.specs.ty, TypeSpec::Base(BaseType::Int)));
        let StmtKind::Decl(d) = &f.body.stmts[0].kind else { panic!() };
        assert_eq!((d.specs.storage, d.declarators[0].declarator.name.as_deref()), (Some(StorageClass::Register), Some("i")));
        assert!(matches!(d.specs.ty, TypeSpec::Base(BaseType::Int)));
        let f = function("f(x) { return x * 2; }");
        assert_eq!(signature(&f), ("Base(Int) fn/1?".to_string(), vec!["x Base(Int) ".to_string()]));
        let tu = unit("static count = 0;\nstatic const limit = 7;\n");
        for item in &tu.items {
            let ExternalDecl::Declaration(d) = item else { panic!() };
            assert!(matches!(d.specs.ty, TypeSpec::Base(BaseType::Int)) && d.specs.storage == Some(StorageClass::Static));
        }
        // A name followed by another is still an unknown type, not implicit int.
        let e = parse("real x;").unwrap_err();
        assert!(e.message.contains("unknown type name `real`"), "{}", e.message);
    }

    /// What gcc refuses in an old-style definition is an error at the name, with a way out.
    #[test]
    fn what_gcc_refuses_is_refused_at_the_name() {
        for (src, at, message) in [
            ("int f(a) int b; { return 0; }", "b;", "declaration for parameter `b` but no such parameter"),
            ("int f() int b; { return 0; }", "b;", "declaration for parameter `b` but no such parameter"),
            ("int f(a) int a; float a; { return 0; }", "a; {", "parameter `a` is declared twice"),
            ("int f(a) int a = 1; { return 0; }", "= 1", "parameter `a` is initialized"),
            ("int f(a) static int a; { return 0; }", "static int a", "cannot be declared `static`"),
            ("int f(a, a) { return 0; }", "a) {", "parameter `a` is listed twice"),
            ("int f(int a) int b; { return 0; }", "int b", "expected `{` to start the function body"),
            ("int f(a) int a; a++; { return 0; }", "a++", "expected a parameter declaration or `{`"),
        ] {
            let e = parse(src).expect_err(src);
            assert!(e.message.contains(message), "{src}: {}", e.message);
            let span = e.span.expect("a span");
            assert_eq!(span.lo as usize, src.find(at).unwrap(), "{src}: {span:?}");
            assert!(e.help.is_some(), "{src}");
        }
    }
}
