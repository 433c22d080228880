//! The C parser: hand-written recursive descent over the lexer's tokens, building
//! [`ast::TranslationUnit`]. It keeps the scoped set of typedef names (a local variable can
//! shadow one) to tell casts from parenthesised expressions and declarations from expression
//! statements. Declarations that start in a system header are skipped (only the typedef names
//! they declare are kept). `#pragma acc` lines go to [`crate::front::directive`]; `#pragma omp`
//! lines of host code are kept in the text for the host compiler (their places recorded in
//! [`TranslationUnit::openmp_pragmas`]); other pragmas, and OpenMP inside compute constructs,
//! are dropped with a warning. Old-style definitions and implicit `int` are read in
//! `parser/old_style.rs`.

use std::collections::HashMap;

use crate::diag::{Diagnostic, Span};
use crate::front::ast::*;
use crate::front::directive;
use crate::front::lexer::{TokKind, Token};

mod cuda;
mod expr;
mod old_style;
mod token_scan;

use token_scan::{field_layout_note, typedef_names_in};

pub use expr::STMT_EXPR_CALLEE;

/// Parses the tokens of one translation unit (`text` is its preprocessed text, which the
/// pragma handling re-lexes). Returns the tree and the warnings.
pub fn parse_translation_unit(text: &str, tu: u32, tokens: Vec<Token>) -> Result<(TranslationUnit, Vec<Diagnostic>), Diagnostic> {
    let mut p = Parser::new(text, tu, tokens);
    let items = p.translation_unit()?;
    Ok((TranslationUnit { tu, items, host_rewrites: Vec::new(), openmp_pragmas: p.openmp_pragmas }, p.warnings))
}

/// [`parse_translation_unit`] for a unit in the MESI-CUDA dialect (`front::cuda`).
pub fn parse_dialect_translation_unit(text: &str, tu: u32, tokens: Vec<Token>) -> Result<(TranslationUnit, Vec<Diagnostic>), Diagnostic> {
    let mut p = Parser::new(text, tu, cuda::join_launch_brackets(tokens));
    p.cuda = Some(crate::front::cuda::ParserState::default());
    let mut items = p.translation_unit()?;
    let mut state = p.cuda.take().unwrap_or_default();
    crate::front::cuda::finish_per_thread_kernels(&mut items, &state.per_thread_kernels, &state.launches, &mut state.rewrites)?;
    let mut host_rewrites = state.rewrites;
    host_rewrites.sort_by_key(|r| (r.span.lo, r.span.hi));
    Ok((TranslationUnit { tu, items, host_rewrites, openmp_pragmas: p.openmp_pragmas }, p.warnings))
}

/// What a name means in a scope.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NameKind {
    Typedef,
    Ordinary,
}

/// Whether a declarator must, may or must not have a name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DeclaratorKind {
    Named,
    Abstract,
    Either,
}

const TYPE_KEYWORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool", "struct", "union",
    "enum", "__signed__", "__signed", "_Complex", "__complex__", "__int128", "_Float128",
];
const QUALIFIER_KEYWORDS: &[&str] = &[
    "const", "volatile", "restrict", "__restrict", "__restrict__", "__const", "__volatile__", "__volatile", "_Atomic",
];
const STORAGE_KEYWORDS: &[&str] = &["typedef", "extern", "static", "auto", "register", "_Thread_local", "__thread"];
const FUNCTION_SPEC_KEYWORDS: &[&str] = &["inline", "__inline", "__inline__", "_Noreturn"];
/// GNU words that user code may contain (through macros) and that mean nothing to us.
const IGNORED_KEYWORDS: &[&str] = &["__extension__"];
const KEYWORDS: &[&str] = &[
    "if", "else", "while", "do", "for", "switch", "case", "default", "goto", "break", "continue", "return", "sizeof",
    "typedef", "extern", "static", "auto", "register", "void", "char", "short", "int", "long", "float", "double",
    "signed", "unsigned", "_Bool", "struct", "union", "enum", "const", "volatile", "restrict", "inline", "__real__",
    "__imag__",
];

pub struct Parser<'a> {
    pub(crate) text: &'a str,
    pub(crate) tu: u32,
    pub(crate) toks: Vec<Token>,
    pub(crate) pos: usize,
    scopes: Vec<HashMap<String, NameKind>>,
    pub(crate) warnings: Vec<Diagnostic>,
    /// Guards against stack overflow on absurdly nested input.
    depth: u32,
    /// Operators folded into the full expression being parsed (see [`MAX_EXPRESSION_OPERATORS`]).
    folds: usize,
    /// How many expression entry points are active: a full expression starts at zero.
    expression_frames: u32,
    /// A `#pragma pack` was seen in the user's code: later struct layouts may be packed.
    pack_pragma_seen: bool,
    /// Set for a unit in the MESI-CUDA dialect.
    cuda: Option<crate::front::cuda::ParserState>,
    /// How many compute constructs enclose the statement being parsed: OpenMP there is
    /// ignored (the construct's loops run as its OpenACC directives say), with a warning.
    compute_depth: u32,
    /// `#pragma omp` lines of the user's host code, for [`TranslationUnit::openmp_pragmas`].
    openmp_pragmas: Vec<Span>,
}

const MAX_DEPTH: u32 = 2000;

/// The most binary, comma and postfix operators one full expression may hold. Each is a level
/// of a left-leaning tree that the later stages walk recursively (on the compiler's large
/// stack); this bounds that depth with a diagnostic instead of a crash. Generated code with
/// sums of tens of thousands of terms is well inside it.
pub const MAX_EXPRESSION_OPERATORS: usize = 200_000;

/// Recursive descent on deeply nested input needs more stack than a default thread has
/// (debug builds use large frames); [`run_with_parser_stack`] provides this much.
pub const PARSER_STACK_BYTES: usize = 256 << 20;

/// Runs `f` on a thread with [`PARSER_STACK_BYTES`] of stack, so that nesting up to the
/// parser's depth limit cannot overflow it. `None` if the thread could not be started.
pub fn run_with_parser_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new().stack_size(PARSER_STACK_BYTES).spawn_scoped(scope, f).ok()?;
        match handle.join() {
            Ok(v) => Some(v),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}


type PResult<T> = Result<T, Diagnostic>;

impl<'a> Parser<'a> {
    pub fn new(text: &'a str, tu: u32, mut toks: Vec<Token>) -> Parser<'a> {
        if toks.last().map(|t| t.kind != TokKind::Eof).unwrap_or(true) {
            let end = text.len() as u32;
            toks.push(Token { kind: TokKind::Eof, span: Span::new(tu, end, end), in_system_header: false });
        }
        let mut global = HashMap::new();
        global.insert("__builtin_va_list".to_string(), NameKind::Typedef);
        Parser { text, tu, toks, pos: 0, scopes: vec![global], warnings: Vec::new(), depth: 0, folds: 0, expression_frames: 0, pack_pragma_seen: false, cuda: None, compute_depth: 0, openmp_pragmas: Vec::new() }
    }

    // ---- token helpers ------------------------------------------------------------------

    pub(crate) fn peek(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    pub(crate) fn peek_at(&self, k: usize) -> &Token {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }
    pub(crate) fn at_eof(&self) -> bool {
        self.peek().kind == TokKind::Eof
    }
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }
    pub(crate) fn prev_span(&self) -> Span {
        if self.pos == 0 { self.peek().span } else { self.toks[self.pos - 1].span }
    }
    pub(crate) fn is_punct(&self, p: &str) -> bool {
        self.peek().is_punct(p)
    }
    pub(crate) fn is_word(&self, w: &str) -> bool {
        self.peek().ident() == Some(w)
    }
    pub(crate) fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.bump();
            true
        } else {
            false
        }
    }
    pub(crate) fn describe(t: &Token) -> String {
        match &t.kind {
            TokKind::Ident(s) => format!("`{s}`"),
            TokKind::Int { .. } | TokKind::Float { .. } | TokKind::Imaginary { .. } => "a number".into(),
            TokKind::Numbers(_) => "a list of numbers".into(),
            TokKind::Char(_) => "a character literal".into(),
            TokKind::Str(_) => "a string literal".into(),
            TokKind::Punct(p) => format!("`{p}`"),
            TokKind::Pragma => "a `#pragma`".into(),
            TokKind::Eof => "the end of the input".into(),
        }
    }
    pub(crate) fn error_here(&self, message: impl Into<String>) -> Diagnostic {
        let t = self.peek();
        Diagnostic::error(t.span, message).with_label(format!("found {}", Self::describe(t)))
    }
    /// Expects punctuator `p`; `context` completes "expected `p` ...".
    pub(crate) fn expect_punct(&mut self, p: &str, context: &str) -> PResult<Span> {
        if self.is_punct(p) {
            return Ok(self.bump().span);
        }
        let d = self.error_here(format!("expected `{p}` {context}"));
        if p == ";" {
            return Err(d.with_help("add `;` at the end of the previous statement or declaration"));
        }
        Err(d)
    }
    fn expect_ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().kind.clone() {
            TokKind::Ident(s) if !KEYWORDS.contains(&s.as_str()) => {
                let sp = self.bump().span;
                Ok((s, sp))
            }
            _ => Err(self.error_here(format!("expected {what}"))),
        }
    }
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_here("nesting is too deep").with_help("split the expression or statement"));
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Runs an expression entry point; the outermost one starts a new count of folds.
    fn full_expression<T>(&mut self, parse: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.expression_frames == 0 {
            self.folds = 0;
        }
        self.expression_frames += 1;
        let r = parse(self);
        self.expression_frames -= 1;
        r
    }

    /// Counts one operator folded into the current full expression.
    fn fold(&mut self) -> PResult<()> {
        self.folds += 1;
        if self.folds > MAX_EXPRESSION_OPERATORS {
            return Err(self
                .error_here(format!("this expression has more than {MAX_EXPRESSION_OPERATORS} operators"))
                .with_help("split it into several statements (a long sum into partial sums)"));
        }
        Ok(())
    }

    // ---- scopes -------------------------------------------------------------------------

    fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }
    fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }
    fn declare(&mut self, name: &str, kind: NameKind) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), kind);
        }
    }
    pub(crate) fn is_typedef_name(&self, name: &str) -> bool {
        for s in self.scopes.iter().rev() {
            if let Some(k) = s.get(name) {
                return *k == NameKind::Typedef;
            }
        }
        false
    }

    /// Whether the token starts declaration specifiers (or a type name).
    fn starts_decl_specs(&self, t: &Token) -> bool {
        match t.ident() {
            Some(w) => {
                TYPE_KEYWORDS.contains(&w)
                    || QUALIFIER_KEYWORDS.contains(&w)
                    || STORAGE_KEYWORDS.contains(&w)
                    || FUNCTION_SPEC_KEYWORDS.contains(&w)
                    || IGNORED_KEYWORDS.contains(&w)
                    || w == "__attribute__"
                    || w == "__attribute"
                    || w == "_Alignas"
                    || w == "__typeof__"
                    || w == "__typeof"
                    || w == "typeof"
                    || self.is_typedef_name(w)
                    || (self.in_dialect() && crate::front::cuda::SPEC_WORDS.contains(&w))
            }
            None => false,
        }
    }
    pub(crate) fn starts_type_name(&self, t: &Token) -> bool {
        match t.ident() {
            Some(w) => !STORAGE_KEYWORDS.contains(&w) && self.starts_decl_specs(t),
            None => false,
        }
    }

    /// Whether the `(` at the cursor opens a type name (a cast, `sizeof(type)`), looking past
    /// `__extension__`: `(__extension__ 1.0iF)`, what `I` expands to, is an expression.
    fn paren_opens_type_name(&self) -> bool {
        let mut k = 1;
        while self.peek_at(k).ident() == Some("__extension__") {
            k += 1;
        }
        self.starts_type_name(&self.peek_at(k).clone())
    }

    // ---- translation unit ---------------------------------------------------------------

    fn translation_unit(&mut self) -> PResult<Vec<ExternalDecl>> {
        let mut items = Vec::new();
        let mut pending_routine: Option<Directive> = None;
        while !self.at_eof() {
            let t = self.peek().clone();
            if t.kind == TokKind::Pragma {
                if let Some(d) = self.pragma()? {
                    if matches!(d.kind, DirectiveKind::Routine(None)) {
                        if let Some(prev) = pending_routine.take() {
                            items.push(ExternalDecl::Directive(prev));
                        }
                        pending_routine = Some(d);
                    } else if matches!(d.kind, DirectiveKind::Routine(_) | DirectiveKind::Declare) {
                        items.push(ExternalDecl::Directive(d));
                    } else if !d.kind.is_compute() && !matches!(d.kind, DirectiveKind::Data | DirectiveKind::HostData | DirectiveKind::Loop | DirectiveKind::Atomic(_)) {
                        // A standalone directive (`update`, `enter data`, ...) at file scope runs
                        // at no point of the program; gcc ignores it. The runtime moves data when
                        // it is used anyway (a `declare create`'d variable's initial value too).
                        self.warnings.push(
                            Diagnostic::warning(d.span, format!("`{}` at file scope is never executed; it is ignored", directive_name(&d.kind)))
                                .with_help("put it inside a function, where the program reaches it"),
                        );
                    } else {
                        return Err(Diagnostic::error(d.span, format!("`{}` must be inside a function", directive_name(&d.kind)))
                            .with_help("only `routine` and `declare` directives may appear at file scope"));
                    }
                }
                continue;
            }
            if t.in_system_header {
                self.skip_system_declaration();
                continue;
            }
            if self.eat_punct(";") {
                continue;
            }
            if self.is_word("_Static_assert") || self.is_word("static_assert") {
                self.static_assert()?;
                continue;
            }
            if t.is_punct("}") {
                return Err(Diagnostic::error(t.span, "unexpected `}` at file scope")
                    .with_label("this `}` has no matching `{`")
                    .with_help("remove it, or check the braces of the function above"));
            }
            match self.external_declaration()? {
                ExternalDecl::Function(mut f) => {
                    f.routine = pending_routine.take();
                    items.push(ExternalDecl::Function(f));
                }
                other => {
                    if let Some(mut d) = pending_routine.take() {
                        // `routine` before a prototype names the function it declares.
                        if let ExternalDecl::Declaration(decl) = &other
                            && let [first] = decl.declarators.as_slice()
                            && is_function(&first.declarator)
                        {
                            d.kind = DirectiveKind::Routine(first.declarator.name.clone());
                        }
                        items.push(ExternalDecl::Directive(d));
                    }
                    items.push(other);
                }
            }
        }
        if let Some(d) = pending_routine.take() {
            items.push(ExternalDecl::Directive(d));
        }
        Ok(items)
    }

    /// Skips one declaration from a system header, keeping the typedef names it declares.
    fn skip_system_declaration(&mut self) {
        let start = self.pos;
        let mut depth = 0i32;
        let mut prev_close_paren_at_zero = false;
        loop {
            let t = self.peek().clone();
            match &t.kind {
                TokKind::Eof => break,
                TokKind::Pragma if depth == 0 => break,
                TokKind::Punct("(") | TokKind::Punct("[") => depth += 1,
                TokKind::Punct(")") | TokKind::Punct("]") => depth -= 1,
                TokKind::Punct("{") => {
                    let is_body = depth == 0 && prev_close_paren_at_zero;
                    self.skip_braces();
                    if is_body {
                        return;
                    }
                    prev_close_paren_at_zero = false;
                    continue;
                }
                TokKind::Punct(";") if depth <= 0 => {
                    self.bump();
                    break;
                }
                _ => {}
            }
            prev_close_paren_at_zero = depth == 0 && (t.is_punct(")") || (prev_close_paren_at_zero && t.ident().is_some()));
            self.bump();
            if !t.in_system_header && depth <= 0 && !t.is_punct(")") {
                // The header ended mid-way; let the user's code be parsed normally.
                if self.pos > start + 1 {
                    break;
                }
            }
        }
        let end = self.pos;
        if self.toks[start].ident() == Some("typedef") || self.toks[start..end].iter().any(|t| t.ident() == Some("typedef")) {
            for name in typedef_names_in(&self.toks[start..end]) {
                self.declare(&name, NameKind::Typedef);
            }
        }
    }

    fn skip_braces(&mut self) {
        let mut depth = 0;
        loop {
            let t = self.bump();
            match t.kind {
                TokKind::Punct("{") => depth += 1,
                TokKind::Punct("}") => {
                    depth -= 1;
                    if depth <= 0 {
                        return;
                    }
                }
                TokKind::Eof => return,
                _ => {}
            }
        }
    }

    fn external_declaration(&mut self) -> PResult<ExternalDecl> {
        let start = self.peek().span;
        let specs = match self.implicit_int_return() {
            Some(specs) => specs,
            None => self.decl_specs()?,
        };
        let words = self.dialect_specs();
        if let Some(shared) = words.shared {
            return Err(Diagnostic::error(shared, "`__shared__` is for a kernel's block-local arrays, which the MESI-CUDA dialect does not have")
                .with_help("declare data shared by host and kernels as `__global__ float a[N];`"));
        }
        if self.eat_punct(";") {
            return Ok(ExternalDecl::Declaration(Declaration { specs, declarators: Vec::new(), span: start.to(self.prev_span()) }));
        }
        let mut declarator = self.declarator(DeclaratorKind::Named)?;
        // `f(a, b)`, before a dialect kernel's hidden parameters join the list.
        let identifier_list = !old_style::prototyped(&declarator) && matches!(declarator.derived.first(), Some(DerivedType::Function { params, .. }) if !params.is_empty());
        let is_kernel = words.global.is_some() && is_function(&declarator);
        if is_kernel {
            self.dialect_kernel_declarator(&mut declarator)?;
        }
        self.skip_attributes()?;
        if self.is_punct("{") || (self.starts_decl_specs(&self.peek().clone()) && is_function(&declarator)) {
            if !is_function(&declarator) {
                return Err(self.error_here("expected `;` or `=` after the declarator")
                    .with_help("only a function declarator can be followed by a body"));
            }
            if !old_style::prototyped(&declarator) && (identifier_list || !self.is_punct("{")) {
                if is_kernel {
                    return Err(Diagnostic::error(declarator.span, "a kernel's parameters need their types in the parentheses")
                        .with_help("write the kernel with a prototype: `__global__ void k(float *a, int n)`"));
                }
                self.old_style_declarations(&mut declarator)?;
            } else if !self.is_punct("{") {
                return Err(self.error_here("expected `{` to start the function body")
                    .with_help("a function whose parameters have their types in the parentheses takes no old-style parameter declarations; remove them"));
            }
            if let Some(name) = &declarator.name {
                self.declare(name, NameKind::Ordinary);
            }
            self.push_scope();
            if let Some(DerivedType::Function { params, .. }) = declarator.derived.first() {
                for p in params {
                    if let Some(n) = &p.declarator.name {
                        self.declare(n, NameKind::Ordinary);
                    }
                }
            }
            self.set_in_kernel(is_kernel);
            let body = self.block();
            self.set_in_kernel(false);
            self.pop_scope();
            let body = body?;
            let span = start.to(body.span);
            let mut f = FunctionDef { specs, declarator, body, routine: None, span };
            if is_kernel {
                self.dialect_kernel_definition(&mut f)?;
            }
            return Ok(ExternalDecl::Function(f));
        }
        old_style::forget_identifier_list(&mut declarator);
        let decl = self.rest_of_declaration(specs, declarator, start)?;
        Ok(ExternalDecl::Declaration(decl))
    }

    /// After the first declarator: initializer, more declarators, `;`.
    fn rest_of_declaration(&mut self, specs: DeclSpecs, first: Declarator, start: Span) -> PResult<Declaration> {
        let kind = if specs.storage == Some(StorageClass::Typedef) { NameKind::Typedef } else { NameKind::Ordinary };
        let mut declarators = Vec::new();
        let mut declarator = first;
        loop {
            if let Some(n) = &declarator.name {
                self.declare(n, kind);
            }
            self.skip_attributes()?;
            let init = if self.eat_punct("=") {
                if kind == NameKind::Typedef {
                    return Err(Diagnostic::error(self.prev_span(), "a typedef cannot have an initializer"));
                }
                Some(self.initializer()?)
            } else {
                None
            };
            declarators.push(InitDeclarator { declarator, init });
            if !self.eat_punct(",") {
                break;
            }
            declarator = self.declarator(DeclaratorKind::Named)?;
        }
        self.expect_punct(";", "after the declaration")?;
        Ok(Declaration { specs, declarators, span: start.to(self.prev_span()) })
    }

    // ---- declaration specifiers ---------------------------------------------------------

    fn skip_attributes(&mut self) -> PResult<()> {
        loop {
            if self.is_word("__attribute__") || self.is_word("__attribute") || self.is_word("__asm__") || self.is_word("__asm") || self.is_word("asm") {
                self.bump();
                if !self.is_punct("(") {
                    return Err(self.error_here("expected `(` after the attribute keyword"));
                }
                self.skip_parens()?;
            } else {
                return Ok(());
            }
        }
    }

    /// Skips a balanced `( ... )` group starting at the current `(`.
    fn skip_parens(&mut self) -> PResult<()> {
        let open = self.peek().span;
        let mut depth = 0;
        loop {
            let t = self.bump();
            match t.kind {
                TokKind::Punct("(") => depth += 1,
                TokKind::Punct(")") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                TokKind::Eof => return Err(Diagnostic::error(open, "unclosed `(`").with_help("add the matching `)`")),
                _ => {}
            }
        }
    }

    fn decl_specs(&mut self) -> PResult<DeclSpecs> {
        let start = self.peek().span;
        let mut storage = None;
        let mut qualifiers = Qualifiers::default();
        let mut is_inline = false;
        let mut ty: Option<TypeSpec> = None;
        // Counts of the arithmetic keywords, combined at the end.
        let (mut n_void, mut n_bool, mut n_char, mut n_short, mut n_int, mut n_long) = (0, 0, 0, 0, 0, 0);
        let (mut n_float, mut n_double, mut n_signed, mut n_unsigned, mut n_complex) = (0, 0, 0, 0, 0);
        let mut any = false;
        self.reset_dialect_specs();
        loop {
            let t = self.peek().clone();
            let Some(w) = t.ident() else { break };
            let w = w.to_string();
            match w.as_str() {
                word if self.in_dialect() && crate::front::cuda::SPEC_WORDS.contains(&word) => {
                    self.dialect_spec_word(word)?;
                    any = true;
                    continue;
                }
                "typedef" | "extern" | "static" | "auto" | "register" => {
                    if storage.is_some() {
                        return Err(Diagnostic::error(t.span, "more than one storage class in a declaration"));
                    }
                    storage = Some(match w.as_str() {
                        "typedef" => StorageClass::Typedef,
                        "extern" => StorageClass::Extern,
                        "static" => StorageClass::Static,
                        "auto" => StorageClass::Auto,
                        _ => StorageClass::Register,
                    });
                }
                "_Thread_local" | "__thread" => {}
                "const" | "__const" => qualifiers.is_const = true,
                "volatile" | "__volatile__" | "__volatile" => qualifiers.is_volatile = true,
                "restrict" | "__restrict" | "__restrict__" => qualifiers.is_restrict = true,
                "_Atomic" => {}
                "inline" | "__inline" | "__inline__" => is_inline = true,
                "_Noreturn" | "__extension__" => {}
                "__attribute__" | "__attribute" => {
                    self.skip_attributes()?;
                    any = true;
                    continue;
                }
                "_Alignas" => {
                    self.bump();
                    self.skip_parens()?;
                    continue;
                }
                "void" => n_void += 1,
                "_Bool" => n_bool += 1,
                "char" => n_char += 1,
                "short" => n_short += 1,
                "int" => n_int += 1,
                "long" => n_long += 1,
                "float" => n_float += 1,
                "double" => n_double += 1,
                "signed" | "__signed__" | "__signed" => n_signed += 1,
                "unsigned" => n_unsigned += 1,
                "typeof" | "__typeof__" | "__typeof" => {
                    return Err(Diagnostic::error(t.span, format!("`{w}` is not supported")).with_help("write the type out"));
                }
                "_Complex" | "__complex__" => n_complex += 1,
                "struct" | "union" => {
                    if ty.is_some() {
                        return Err(Diagnostic::error(t.span, "two types in one declaration"));
                    }
                    self.enter()?;
                    let spec = self.struct_spec();
                    self.leave();
                    ty = Some(TypeSpec::Struct(spec?));
                    any = true;
                    continue;
                }
                "enum" => {
                    if ty.is_some() {
                        return Err(Diagnostic::error(t.span, "two types in one declaration"));
                    }
                    ty = Some(TypeSpec::Enum(self.enum_spec()?));
                    any = true;
                    continue;
                }
                _ => {
                    let has_base =
                        n_void + n_bool + n_char + n_short + n_int + n_long + n_float + n_double + n_signed + n_unsigned + n_complex > 0;
                    if ty.is_none() && !has_base && self.is_typedef_name(&w) {
                        ty = Some(TypeSpec::TypedefName(w.clone()));
                    } else {
                        break;
                    }
                }
            }
            any = true;
            self.bump();
        }
        let span = start.to(self.prev_span());
        let counts = n_void + n_bool + n_char + n_short + n_int + n_long + n_float + n_double + n_signed + n_unsigned + n_complex;
        if n_complex > 0 && ty.is_none() {
            // `float _Complex`, `_Complex double`, `long double _Complex`; `_Complex` alone is
            // `double _Complex` (GNU C).
            let reals = n_float + n_double + n_long;
            let base = match (n_complex, n_float, n_double, n_long) {
                (1, 1, 0, 0) => BaseType::ComplexFloat,
                (1, 0, 1, 0) => BaseType::ComplexDouble,
                (1, 0, 1, 1) => BaseType::ComplexLongDouble,
                (1, 0, 0, 0) if counts == 1 => BaseType::ComplexDouble,
                _ if n_complex == 1 && counts > 1 + reals => {
                    return Err(Diagnostic::error(span, "complex integer types are not supported")
                        .with_help("complex integer types are a GNU extension; use `double _Complex`"));
                }
                _ => return Err(Diagnostic::error(span, "invalid combination of type keywords")),
            };
            return Ok(DeclSpecs { storage, qualifiers, is_inline, ty: TypeSpec::Base(base), span, block_shared: self.dialect_specs().shared.is_some() });
        }
        let ty = match ty {
            Some(t) => {
                if counts > 0 {
                    return Err(Diagnostic::error(span, "two types in one declaration"));
                }
                t
            }
            None => {
                if !any && counts == 0 {
                    return Err(self.unknown_type_name().unwrap_or_else(|| self.error_here("expected a declaration or a type")));
                }
                let bad = || Diagnostic::error(span, "invalid combination of type keywords");
                if n_signed > 0 && n_unsigned > 0 {
                    return Err(bad());
                }
                let uns = n_unsigned > 0;
                let base = if n_void > 0 {
                    if counts != 1 { return Err(bad()) }
                    BaseType::Void
                } else if n_bool > 0 {
                    if counts != 1 { return Err(bad()) }
                    BaseType::Bool
                } else if n_char > 0 {
                    if n_char > 1 || n_short + n_int + n_long + n_float + n_double > 0 { return Err(bad()) }
                    if uns { BaseType::UChar } else if n_signed > 0 { BaseType::SChar } else { BaseType::Char }
                } else if n_float > 0 {
                    if counts != 1 { return Err(bad()) }
                    BaseType::Float
                } else if n_double > 0 {
                    if n_double > 1 || n_long > 1 || counts != n_double + n_long { return Err(bad()) }
                    if n_long == 1 { BaseType::LongDouble } else { BaseType::Double }
                } else if n_short > 0 {
                    if n_short > 1 || n_long > 0 || n_int > 1 { return Err(bad()) }
                    if uns { BaseType::UShort } else { BaseType::Short }
                } else if n_long > 0 {
                    if n_long > 2 || n_int > 1 { return Err(bad()) }
                    match (n_long, uns) {
                        (1, false) => BaseType::Long,
                        (1, true) => BaseType::ULong,
                        (_, false) => BaseType::LongLong,
                        (_, true) => BaseType::ULongLong,
                    }
                } else {
                    if n_int > 1 { return Err(bad()) }
                    // A bare qualifier or storage class (`const x;`) is implicit int, as in C89.
                    if uns { BaseType::UInt } else { BaseType::Int }
                };
                TypeSpec::Base(base)
            }
        };
        Ok(DeclSpecs { storage, qualifiers, is_inline, ty, span, block_shared: self.dialect_specs().shared.is_some() })
    }

    fn struct_spec(&mut self) -> PResult<StructSpec> {
        let kw = self.bump();
        let is_union = kw.ident() == Some("union");
        let mut unnatural_layout = self.skip_layout_attributes()?;
        let tag = match self.peek().kind.clone() {
            TokKind::Ident(s) if !KEYWORDS.contains(&s.as_str()) => {
                self.bump();
                Some(s)
            }
            _ => None,
        };
        let fields = if self.is_punct("{") {
            self.bump();
            let mut fields = Vec::new();
            while !self.is_punct("}") {
                if self.at_eof() {
                    return Err(Diagnostic::error(kw.span, "unclosed struct body").with_help("add the closing `}`"));
                }
                if self.eat_punct(";") {
                    continue;
                }
                if self.peek().kind == TokKind::Pragma {
                    self.pragma()?;
                    continue;
                }
                let start = self.pos;
                fields.push(self.field_declaration()?);
                unnatural_layout = unnatural_layout.or_else(|| field_layout_note(&self.toks[start..self.pos]));
            }
            self.bump();
            unnatural_layout = unnatural_layout.or(self.skip_layout_attributes()?);
            if self.pack_pragma_seen {
                unnatural_layout = unnatural_layout.or(Some("`#pragma pack`"));
            }
            Some(fields)
        } else {
            if tag.is_none() {
                return Err(self.error_here(format!("expected a name or `{{` after `{}`", if is_union { "union" } else { "struct" })));
            }
            None
        };
        Ok(StructSpec { is_union, tag, fields, unnatural_layout, span: kw.span.to(self.prev_span()) })
    }

    /// Skips attributes around a struct's tag or body; says so when there were any (`packed`
    /// and `aligned` change the layout).
    fn skip_layout_attributes(&mut self) -> PResult<Option<&'static str>> {
        let before = self.pos;
        self.skip_attributes()?;
        Ok((self.pos != before).then_some("an attribute"))
    }

    fn field_declaration(&mut self) -> PResult<Declaration> {
        let start = self.peek().span;
        let specs = self.decl_specs()?;
        let mut declarators = Vec::new();
        if !self.is_punct(";") {
            loop {
                let declarator = if self.is_punct(":") {
                    Declarator { name: None, name_span: self.peek().span, derived: Vec::new(), span: self.peek().span }
                } else {
                    self.declarator(DeclaratorKind::Named)?
                };
                // Bit-field widths are parsed but not kept: the types we lay out have none.
                if self.eat_punct(":") {
                    self.conditional()?;
                }
                self.skip_attributes()?;
                declarators.push(InitDeclarator { declarator, init: None });
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(";", "after the struct member")?;
        Ok(Declaration { specs, declarators, span: start.to(self.prev_span()) })
    }

    fn enum_spec(&mut self) -> PResult<EnumSpec> {
        let kw = self.bump();
        self.skip_attributes()?;
        let tag = match self.peek().kind.clone() {
            TokKind::Ident(s) if !KEYWORDS.contains(&s.as_str()) => {
                self.bump();
                Some(s)
            }
            _ => None,
        };
        let variants = if self.eat_punct("{") {
            let mut vs = Vec::new();
            while !self.is_punct("}") {
                let (name, sp) = self.expect_ident("an enumerator name")?;
                let value = if self.eat_punct("=") { Some(self.conditional()?) } else { None };
                self.declare(&name, NameKind::Ordinary);
                vs.push((name, value, sp));
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct("}", "to close the enum")?;
            Some(vs)
        } else {
            if tag.is_none() {
                return Err(self.error_here("expected a name or `{` after `enum`"));
            }
            None
        };
        Ok(EnumSpec { tag, variants, span: kw.span.to(self.prev_span()) })
    }

    // ---- declarators --------------------------------------------------------------------

    fn qualifiers(&mut self) -> PResult<Qualifiers> {
        let mut q = Qualifiers::default();
        loop {
            match self.peek().ident() {
                Some("const" | "__const") => q.is_const = true,
                Some("volatile" | "__volatile__" | "__volatile") => q.is_volatile = true,
                Some("restrict" | "__restrict" | "__restrict__") => q.is_restrict = true,
                Some("_Atomic" | "__extension__") => {}
                Some("__attribute__" | "__attribute") => {
                    self.skip_attributes()?;
                    continue;
                }
                _ => return Ok(q),
            }
            self.bump();
        }
    }

    fn declarator(&mut self, kind: DeclaratorKind) -> PResult<Declarator> {
        self.enter()?;
        let r = self.declarator_inner(kind);
        self.leave();
        r
    }

    fn declarator_inner(&mut self, kind: DeclaratorKind) -> PResult<Declarator> {
        let start = self.peek().span;
        let start_pos = self.pos;
        let mut pointers = Vec::new();
        while self.eat_punct("*") {
            pointers.push(DerivedType::Pointer(self.qualifiers()?));
        }
        self.skip_attributes()?;
        let mut name = None;
        let mut name_span = Span::new(self.tu, start.lo, start.lo);
        let mut inner_derived = Vec::new();
        let t = self.peek().clone();
        match &t.kind {
            TokKind::Ident(s) if kind != DeclaratorKind::Abstract && !KEYWORDS.contains(&s.as_str()) => {
                name = Some(s.clone());
                name_span = t.span;
                self.bump();
            }
            TokKind::Punct("(") if self.paren_starts_nested_declarator(kind) => {
                self.bump();
                let inner = self.declarator(kind)?;
                self.expect_punct(")", "to close the parenthesised declarator")?;
                name = inner.name;
                name_span = inner.name_span;
                inner_derived = inner.derived;
            }
            _ => {
                if kind == DeclaratorKind::Named {
                    return Err(self.error_here("expected a name in the declaration"));
                }
            }
        }
        let mut suffixes = Vec::new();
        loop {
            if self.is_punct("[") {
                let open = self.bump().span;
                let mut q = Qualifiers::default();
                loop {
                    if self.eat_word("static") {
                        continue;
                    }
                    let more = self.qualifiers()?;
                    if more == Qualifiers::default() {
                        break;
                    }
                    q.is_const |= more.is_const;
                    q.is_volatile |= more.is_volatile;
                    q.is_restrict |= more.is_restrict;
                }
                let size = if self.is_punct("]") {
                    None
                } else if self.is_punct("*") && self.peek_at(1).is_punct("]") {
                    self.bump();
                    None
                } else {
                    Some(Box::new(self.assignment()?))
                };
                if !self.is_punct("]") {
                    return Err(self.error_here("expected `]` to close the array size").with_label(format!("`[` opened at byte {}", open.lo)));
                }
                self.bump();
                suffixes.push(DerivedType::Array { size, qualifiers: q });
            } else if self.is_punct("(") {
                self.bump();
                let (params, variadic, prototyped) = self.params()?;
                suffixes.push(DerivedType::Function { params, variadic, prototyped });
            } else {
                break;
            }
        }
        let mut derived = inner_derived;
        derived.extend(suffixes);
        derived.extend(pointers.into_iter().rev());
        // An empty abstract declarator (`(int)`) is an empty span where it would be.
        let span = if self.pos == start_pos { Span::new(self.tu, start.lo, start.lo) } else { start.to(self.prev_span()) };
        Ok(Declarator { name, name_span, derived, span })
    }

    /// At a `(` in a declarator: does it group a nested declarator (`(*p)`) or open a parameter
    /// list (`(int)`, `()`)?
    fn paren_starts_nested_declarator(&self, kind: DeclaratorKind) -> bool {
        let next = self.peek_at(1);
        if next.is_punct("*") || next.is_punct("(") || next.is_punct("[") {
            return !next.is_punct("[") || kind == DeclaratorKind::Abstract;
        }
        if next.ident().map(|w| w == "__attribute__").unwrap_or(false) {
            return true;
        }
        match next.ident() {
            Some(w) if kind != DeclaratorKind::Abstract => !self.starts_decl_specs(next) && !KEYWORDS.contains(&w),
            _ => false,
        }
    }

    /// A parameter list after its `(`: the parameters, whether it ends with `...`, and whether
    /// it is a prototype (`()` and an old-style identifier list are not; `(void)` is).
    fn params(&mut self) -> PResult<(Vec<ParamDecl>, bool, bool)> {
        let mut params = Vec::new();
        let mut variadic = false;
        if self.eat_punct(")") {
            return Ok((params, false, false));
        }
        if self.is_word("void") && self.peek_at(1).is_punct(")") {
            self.bump();
            self.bump();
            return Ok((params, false, true));
        }
        if self.at_identifier_list() {
            return Ok((self.identifier_list()?, false, false));
        }
        self.push_scope();
        let r = (|| -> PResult<()> {
            loop {
                if self.eat_punct("...") {
                    variadic = true;
                    break;
                }
                let start = self.peek().span;
                if !self.starts_decl_specs(&self.peek().clone()) {
                    return Err(self.error_here("expected a parameter type")
                        .with_help("each parameter needs a type, e.g. `int n`"));
                }
                let specs = self.decl_specs()?;
                let declarator = self.declarator(DeclaratorKind::Either)?;
                self.skip_attributes()?;
                if let Some(n) = &declarator.name {
                    self.declare(n, NameKind::Ordinary);
                }
                params.push(ParamDecl { specs, declarator, span: start.to(self.prev_span()) });
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")", "to close the parameter list")?;
            Ok(())
        })();
        self.pop_scope();
        r?;
        Ok((params, variadic, true))
    }

    pub(crate) fn type_name(&mut self) -> PResult<TypeName> {
        let start = self.peek().span;
        let specs = self.decl_specs()?;
        if specs.storage.is_some() {
            return Err(Diagnostic::error(specs.span, "a storage class is not allowed in a type name"));
        }
        let declarator = self.declarator(DeclaratorKind::Abstract)?;
        Ok(TypeName { specs, declarator, span: start.to(self.prev_span()) })
    }

    // ---- initializers -------------------------------------------------------------------

    fn initializer(&mut self) -> PResult<Initializer> {
        if self.is_punct("{") {
            self.enter()?;
            let r = self.initializer_list();
            self.leave();
            return r;
        }
        Ok(Initializer::Expr(self.assignment()?))
    }

    fn initializer_list(&mut self) -> PResult<Initializer> {
        let open = self.bump().span;
        let mut items = Vec::new();
        while !self.is_punct("}") {
            if let TokKind::Numbers(run) = &mut self.toks[self.pos].kind {
                // Taken, not cloned (`bump` clones): a run can be most of the program.
                items.push(InitItem::Numbers(std::mem::take(&mut **run)));
                self.bump();
                if !self.eat_punct(",") {
                    break;
                }
                continue;
            }
            let mut designators = Vec::new();
            loop {
                if self.eat_punct(".") {
                    let (f, _) = self.expect_ident("a member name after `.`")?;
                    designators.push(Designator::Field(f));
                } else if self.is_punct("[") {
                    self.bump();
                    designators.push(Designator::Index(self.conditional()?));
                    self.expect_punct("]", "to close the designator")?;
                } else {
                    break;
                }
            }
            if !designators.is_empty() {
                self.expect_punct("=", "after the designator")?;
            }
            let init = self.initializer()?;
            items.push(InitItem::One(designators, init));
            if !self.eat_punct(",") {
                break;
            }
        }
        if !self.is_punct("}") {
            return Err(self.error_here("expected `,` or `}` in the initializer list"));
        }
        let close = self.bump().span;
        Ok(Initializer::List(InitList::new(items, open.to(close))))
    }

    // ---- statements ---------------------------------------------------------------------

    fn block(&mut self) -> PResult<Block> {
        let open = self.expect_punct("{", "to start a block")?;
        self.push_scope();
        let r = (|| {
            let mut stmts = Vec::new();
            while !self.is_punct("}") {
                if self.at_eof() {
                    return Err(Diagnostic::error(open, "unclosed `{`").with_help("add the matching `}`"));
                }
                if let Some(s) = self.block_item()? {
                    stmts.push(s);
                }
            }
            let close = self.bump().span;
            Ok(Block { stmts, span: open.to(close) })
        })();
        self.pop_scope();
        r
    }

    /// A declaration or statement; `None` for a dropped pragma.
    fn block_item(&mut self) -> PResult<Option<Stmt>> {
        if self.is_word("_Static_assert") || self.is_word("static_assert") {
            let span = self.static_assert()?;
            return Ok(Some(Stmt { kind: StmtKind::Expr(None), span }));
        }
        if self.is_declaration_start() {
            let d = self.local_declaration()?;
            let span = d.span;
            return Ok(Some(Stmt { kind: StmtKind::Decl(d), span }));
        }
        self.statement_or_pragma()
    }

    /// `_Static_assert(expr, "message");` is checked by the C compiler that builds the host
    /// code; the tree does not keep it.
    fn static_assert(&mut self) -> PResult<Span> {
        let start = self.bump().span;
        self.expect_punct("(", "after `_Static_assert`")?;
        self.conditional()?;
        if self.eat_punct(",") {
            self.primary()?;
        }
        self.expect_punct(")", "to close `_Static_assert(...)`")?;
        self.expect_punct(";", "after `_Static_assert(...)`")?;
        Ok(start.to(self.prev_span()))
    }

    /// `real x;` or `real *x;` where `real` is no type we know: most likely a missing
    /// typedef or `#include`.
    fn unknown_type_name(&self) -> Option<Diagnostic> {
        let t = self.peek();
        let name = t.ident()?;
        let declared = self.scopes.iter().any(|s| s.contains_key(name));
        if KEYWORDS.contains(&name) || declared {
            return None;
        }
        let next = self.peek_at(1);
        let declares = match next.ident() {
            Some(w) => !KEYWORDS.contains(&w) || TYPE_KEYWORDS.contains(&w) || QUALIFIER_KEYWORDS.contains(&w),
            None => next.is_punct("*") && self.peek_at(2).ident().is_some() && matches!(self.peek_at(3).kind, TokKind::Punct(";" | "=" | "," | "[" | ")")),
        };
        declares.then(|| {
            Diagnostic::error(t.span, format!("unknown type name `{name}`"))
                .with_help(format!("declare `{name}` with `typedef`, or include the header that does"))
        })
    }

    fn is_declaration_start(&self) -> bool {
        let t = self.peek();
        if !self.starts_decl_specs(t) {
            return false;
        }
        // `T:` is a label even when T is a typedef name.
        if let Some(w) = t.ident()
            && self.is_typedef_name(w)
            && self.peek_at(1).is_punct(":")
        {
            return false;
        }
        true
    }

    fn local_declaration(&mut self) -> PResult<Declaration> {
        let start = self.peek().span;
        let specs = self.decl_specs()?;
        if self.in_dialect() {
            let words = self.dialect_specs();
            if let Some(shared) = words.shared
                && !self.in_kernel()
            {
                return Err(Diagnostic::error(shared, "`__shared__` arrays belong to kernels")
                    .with_help("declare the block's array inside the `__global__` function that uses it"));
            }
            if let Some(w) = words.global.or(words.device) {
                return Err(Diagnostic::error(w, "shared variables are declared at file scope")
                    .with_help("move the declaration out of the function: `__global__ float a[N];` before the functions"));
            }
            if matches!(&specs.ty, TypeSpec::TypedefName(t) if t == "dim3") {
                return self.dim3_declaration(specs, start);
            }
        }
        if self.eat_punct(";") {
            return Ok(Declaration { specs, declarators: Vec::new(), span: start.to(self.prev_span()) });
        }
        let first = self.declarator(DeclaratorKind::Named)?;
        self.rest_of_declaration(specs, first, start)
    }

    fn statement_or_pragma(&mut self) -> PResult<Option<Stmt>> {
        if self.peek().kind == TokKind::Pragma {
            let pragma_span = self.peek().span;
            let Some(d) = self.pragma()? else { return Ok(None) };
            if d.kind.is_standalone() {
                let span = d.span;
                return Ok(Some(Stmt { kind: StmtKind::Acc { directive: d, body: None }, span }));
            }
            let compute = d.kind.is_compute();
            self.compute_depth += u32::from(compute);
            let body = self.statement_after_directive(&d, pragma_span);
            self.compute_depth -= u32::from(compute);
            let body = body?;
            let span = d.span.to(body.span);
            return Ok(Some(Stmt { kind: StmtKind::Acc { directive: d, body: Some(Box::new(body)) }, span }));
        }
        Ok(Some(self.statement()?))
    }

    /// The statement a construct directive applies to (skipping ignored pragmas in between).
    fn statement_after_directive(&mut self, d: &Directive, pragma_span: Span) -> PResult<Stmt> {
        loop {
            if self.at_eof() || self.is_punct("}") {
                return Err(Diagnostic::error(pragma_span, format!("`{}` must be followed by a statement", directive_name(&d.kind)))
                    .with_help("put the loop or block the directive applies to right after it"));
            }
            if self.is_declaration_start() {
                return Err(self.error_here(format!("`{}` must be followed by a statement, not a declaration", directive_name(&d.kind)))
                    .with_help("wrap the code in `{ ... }`"));
            }
            if let Some(s) = self.statement_or_pragma()? {
                return Ok(s);
            }
        }
    }

    /// Consumes a pragma token. Returns the directive for `#pragma acc`; other pragmas are
    /// dropped (with a warning unless they come from a system header).
    fn pragma(&mut self) -> PResult<Option<Directive>> {
        let tok = self.bump();
        let text = &self.text[tok.span.lo as usize..tok.span.hi as usize];
        let rest = text.trim_start_matches('#').trim_start();
        let rest = rest.strip_prefix("pragma").unwrap_or(rest).trim_start();
        if rest.starts_with("acc") && rest[3..].chars().next().map(|c| !c.is_alphanumeric() && c != '_').unwrap_or(true) {
            if tok.in_system_header {
                return Ok(None);
            }
            return directive::parse_directive(self, tok.span).map(Some);
        }
        if !tok.in_system_header {
            let what = rest.split(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
            self.pack_pragma_seen |= what == "pack";
            if what == "omp" && self.compute_depth == 0 {
                // Host code: the host compiler reads it (with `-fopenmp`), or ignores it as gcc
                // does without; the driver says which, once for the program.
                self.openmp_pragmas.push(tok.span);
                return Ok(None);
            }
            let d = if what == "omp" {
                Diagnostic::warning(tok.span, "ignored pragma")
                    .with_label("OpenMP inside a compute region is ignored")
                    .with_help("the region's loops run as its `#pragma acc` directives say; put the OpenMP directive on host code outside the region, or use `#pragma acc loop` clauses")
            } else {
                Diagnostic::warning(tok.span, "ignored pragma").with_label(format!("`#pragma {what}` is not understood by yosegi"))
            };
            self.warnings.push(d);
        }
        Ok(None)
    }

    fn statement(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.statement_inner();
        self.leave();
        r
    }

    fn sub_statement(&mut self) -> PResult<Stmt> {
        // A declaration cannot be the body of if/while/for; a pragma can.
        loop {
            if self.is_declaration_start() {
                return Err(self.error_here("expected a statement, found a declaration").with_help("wrap the declaration in `{ ... }`"));
            }
            if let Some(s) = self.statement_or_pragma()? {
                return Ok(s);
            }
            if self.is_punct("}") || self.at_eof() {
                return Err(self.error_here("expected a statement"));
            }
        }
    }

    fn statement_inner(&mut self) -> PResult<Stmt> {
        let t = self.peek().clone();
        let start = t.span;
        let mk = |kind: StmtKind, p: &Parser| Stmt { kind, span: start.to(p.prev_span()) };
        if t.is_punct("{") {
            let b = self.block()?;
            let span = b.span;
            return Ok(Stmt { kind: StmtKind::Compound(b), span });
        }
        if t.is_punct(";") {
            self.bump();
            return Ok(mk(StmtKind::Expr(None), self));
        }
        if let Some(w) = t.ident() {
            match w {
                "if" => {
                    self.bump();
                    let cond = self.paren_condition("if")?;
                    let then = Box::new(self.sub_statement()?);
                    let otherwise = if self.eat_word("else") { Some(Box::new(self.sub_statement()?)) } else { None };
                    return Ok(mk(StmtKind::If { cond, then, otherwise }, self));
                }
                "while" => {
                    self.bump();
                    let cond = self.paren_condition("while")?;
                    let body = Box::new(self.sub_statement()?);
                    return Ok(mk(StmtKind::While { cond, body }, self));
                }
                "do" => {
                    self.bump();
                    let body = Box::new(self.sub_statement()?);
                    if !self.eat_word("while") {
                        return Err(self.error_here("expected `while` after the body of `do`"));
                    }
                    let cond = self.paren_condition("do-while")?;
                    self.expect_punct(";", "after `do ... while (...)`")?;
                    return Ok(mk(StmtKind::DoWhile { body, cond }, self));
                }
                "for" => return self.for_statement(),
                "switch" => {
                    self.bump();
                    let cond = self.paren_condition("switch")?;
                    let body = Box::new(self.sub_statement()?);
                    return Ok(mk(StmtKind::Switch { cond, body }, self));
                }
                "case" => {
                    self.bump();
                    let value = self.conditional()?;
                    self.expect_punct(":", "after the case value")?;
                    let body = Box::new(self.label_body()?);
                    return Ok(mk(StmtKind::Case { value, body }, self));
                }
                "default" => {
                    self.bump();
                    self.expect_punct(":", "after `default`")?;
                    let body = Box::new(self.label_body()?);
                    return Ok(mk(StmtKind::Default { body }, self));
                }
                "goto" => {
                    self.bump();
                    let (label, _) = self.expect_ident("a label name after `goto`")?;
                    self.expect_punct(";", "after the `goto`")?;
                    return Ok(mk(StmtKind::Goto(label), self));
                }
                "break" => {
                    self.bump();
                    self.expect_punct(";", "after `break`")?;
                    return Ok(mk(StmtKind::Break, self));
                }
                "continue" => {
                    self.bump();
                    self.expect_punct(";", "after `continue`")?;
                    return Ok(mk(StmtKind::Continue, self));
                }
                "return" => {
                    self.bump();
                    let value = if self.is_punct(";") { None } else { Some(self.expression()?) };
                    self.expect_punct(";", "after the return value")?;
                    return Ok(mk(StmtKind::Return(value), self));
                }
                "else" => return Err(self.error_here("`else` without a matching `if`")),
                "__asm__" | "__asm" | "asm" => {
                    // Inline assembly stays in the host code (copied by span); the tree
                    // keeps an empty statement.
                    self.bump();
                    while matches!(self.peek().ident(), Some("volatile" | "__volatile__" | "__volatile" | "goto" | "inline")) {
                        self.bump();
                    }
                    if !self.is_punct("(") {
                        return Err(self.error_here("expected `(` after `asm`"));
                    }
                    self.skip_parens()?;
                    self.expect_punct(";", "after the `asm` statement")?;
                    return Ok(mk(StmtKind::Expr(None), self));
                }
                _ => {
                    if self.peek_at(1).is_punct(":") && !KEYWORDS.contains(&w) {
                        let label = w.to_string();
                        self.bump();
                        self.bump();
                        let body = Box::new(self.label_body()?);
                        return Ok(mk(StmtKind::Labeled { label, body }, self));
                    }
                }
            }
        }
        if self.at_launch() {
            return self.launch_statement();
        }
        if let Some(d) = self.unknown_type_name() {
            return Err(d);
        }
        let e = self.expression()?;
        self.expect_punct(";", "after the expression")?;
        Ok(mk(StmtKind::Expr(Some(e)), self))
    }

    /// The statement after a label; C23 lets a label end a block (`end: }`), so allow an empty one.
    fn label_body(&mut self) -> PResult<Stmt> {
        if self.is_punct("}") {
            let sp = self.prev_span();
            return Ok(Stmt { kind: StmtKind::Expr(None), span: Span::new(self.tu, sp.hi, sp.hi) });
        }
        if self.is_declaration_start() {
            let d = self.local_declaration()?;
            let span = d.span;
            return Ok(Stmt { kind: StmtKind::Decl(d), span });
        }
        self.sub_statement()
    }

    fn paren_condition(&mut self, what: &str) -> PResult<Expr> {
        self.expect_punct("(", &format!("after `{}`", what.split('-').next().unwrap_or(what)))?;
        let e = self.expression()?;
        self.expect_punct(")", &format!("to close the `{what}` condition"))?;
        Ok(e)
    }

    fn for_statement(&mut self) -> PResult<Stmt> {
        let start = self.bump().span;
        self.expect_punct("(", "after `for`")?;
        self.push_scope();
        let r = (|| {
            let init = if self.eat_punct(";") {
                None
            } else if self.is_declaration_start() {
                Some(ForInit::Decl(self.local_declaration()?))
            } else {
                let e = self.expression()?;
                self.expect_punct(";", "after the `for` initialisation")?;
                Some(ForInit::Expr(e))
            };
            let cond = if self.is_punct(";") { None } else { Some(self.expression()?) };
            self.expect_punct(";", "after the `for` condition")?;
            let step = if self.is_punct(")") { None } else { Some(self.expression()?) };
            self.expect_punct(")", "to close the `for` header")?;
            let body = Box::new(self.sub_statement()?);
            Ok(Stmt { kind: StmtKind::For { init, cond, step, body }, span: start.to(self.prev_span()) })
        })();
        self.pop_scope();
        r
    }

}

fn is_function(d: &Declarator) -> bool {
    matches!(d.derived.first(), Some(DerivedType::Function { .. }))
}

/// The name of a directive as written after `#pragma acc` (`"enter data"`).
pub fn directive_name(k: &DirectiveKind) -> &'static str {
    match k {
        DirectiveKind::Parallel => "parallel",
        DirectiveKind::Kernels => "kernels",
        DirectiveKind::Serial => "serial",
        DirectiveKind::Loop => "loop",
        DirectiveKind::ParallelLoop => "parallel loop",
        DirectiveKind::KernelsLoop => "kernels loop",
        DirectiveKind::SerialLoop => "serial loop",
        DirectiveKind::Data => "data",
        DirectiveKind::EnterData => "enter data",
        DirectiveKind::ExitData => "exit data",
        DirectiveKind::HostData => "host_data",
        DirectiveKind::Update => "update",
        DirectiveKind::Wait(_) => "wait",
        DirectiveKind::Atomic(_) => "atomic",
        DirectiveKind::Routine(_) => "routine",
        DirectiveKind::Declare => "declare",
        DirectiveKind::Cache(_) => "cache",
        DirectiveKind::Init => "init",
        DirectiveKind::Shutdown => "shutdown",
        DirectiveKind::Set => "set",
        DirectiveKind::CudaKernel(_) => "CUDA kernel",
    }
}

#[cfg(test)]
mod tests;
