//! The C parser: hand-written recursive descent over the lexer's tokens, building
//! [`ast::TranslationUnit`]. It keeps the scoped set of typedef names (a local variable can
//! shadow one) to tell casts from parenthesised expressions and declarations from expression
//! statements. Declarations that start in a system header are skipped (only the typedef names
//! they declare are kept). `#pragma acc` lines go to [`crate::front::directive`]; other pragmas
//! are dropped with a warning.

use std::collections::HashMap;

use crate::diag::{Diagnostic, Span};
use crate::front::ast::*;
use crate::front::directive;
use crate::front::lexer::{TokKind, Token};

/// Parses the tokens of one translation unit (`text` is its preprocessed text, which the
/// pragma handling re-lexes). Returns the tree and the warnings.
pub fn parse_translation_unit(text: &str, tu: u32, tokens: Vec<Token>) -> Result<(TranslationUnit, Vec<Diagnostic>), Diagnostic> {
    let mut p = Parser::new(text, tu, tokens);
    let items = p.translation_unit()?;
    Ok((TranslationUnit { tu, items }, p.warnings))
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
    "enum", "__signed__", "__signed", "_Complex", "__int128", "_Float128",
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
    "signed", "unsigned", "_Bool", "struct", "union", "enum", "const", "volatile", "restrict", "inline",
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
        Parser { text, tu, toks, pos: 0, scopes: vec![global], warnings: Vec::new(), depth: 0, folds: 0, expression_frames: 0, pack_pragma_seen: false }
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
            TokKind::Int { .. } | TokKind::Float { .. } => "a number".into(),
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
        let specs = self.decl_specs()?;
        if self.eat_punct(";") {
            return Ok(ExternalDecl::Declaration(Declaration { specs, declarators: Vec::new(), span: start.to(self.prev_span()) }));
        }
        let declarator = self.declarator(DeclaratorKind::Named)?;
        self.skip_attributes()?;
        if self.is_punct("{") || (self.starts_decl_specs(&self.peek().clone()) && is_function(&declarator)) {
            if !is_function(&declarator) {
                return Err(self.error_here("expected `;` or `=` after the declarator")
                    .with_help("only a function declarator can be followed by a body"));
            }
            // Old-style (K&R) parameter declarations are not supported.
            if !self.is_punct("{") {
                return Err(self.error_here("expected `{` to start the function body")
                    .with_help("K&R-style parameter declarations are not supported; declare the parameter types in the parentheses"));
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
            let body = self.block();
            self.pop_scope();
            let body = body?;
            let span = start.to(body.span);
            return Ok(ExternalDecl::Function(FunctionDef { specs, declarator, body, routine: None, span }));
        }
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
        let (mut n_float, mut n_double, mut n_signed, mut n_unsigned) = (0, 0, 0, 0);
        let mut any = false;
        loop {
            let t = self.peek().clone();
            let Some(w) = t.ident() else { break };
            let w = w.to_string();
            match w.as_str() {
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
                "_Complex" => {
                    return Err(Diagnostic::error(t.span, "complex types are not supported"));
                }
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
                    let has_base = n_void + n_bool + n_char + n_short + n_int + n_long + n_float + n_double + n_signed + n_unsigned > 0;
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
        let counts = n_void + n_bool + n_char + n_short + n_int + n_long + n_float + n_double + n_signed + n_unsigned;
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
        Ok(DeclSpecs { storage, qualifiers, is_inline, ty, span })
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
                let (params, variadic) = self.params()?;
                suffixes.push(DerivedType::Function { params, variadic });
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

    fn params(&mut self) -> PResult<(Vec<ParamDecl>, bool)> {
        let mut params = Vec::new();
        let mut variadic = false;
        if self.eat_punct(")") {
            return Ok((params, false));
        }
        if self.is_word("void") && self.peek_at(1).is_punct(")") {
            self.bump();
            self.bump();
            return Ok((params, false));
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
        Ok((params, variadic))
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
            items.push((designators, init));
            if !self.eat_punct(",") {
                break;
            }
        }
        if !self.is_punct("}") {
            return Err(self.error_here("expected `,` or `}` in the initializer list"));
        }
        let close = self.bump().span;
        Ok(Initializer::List(items, open.to(close)))
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
            let body = self.statement_after_directive(&d, pragma_span)?;
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
            let d = Diagnostic::warning(tok.span, "ignored pragma").with_label(format!("`#pragma {what}` is not understood by yosegi"));
            let d = if what == "omp" { d.with_help("OpenMP directives are ignored; use `#pragma acc` directives") } else { d };
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

    // ---- expressions --------------------------------------------------------------------

    pub(crate) fn expression(&mut self) -> PResult<Expr> {
        self.full_expression(Self::expression_inner)
    }

    fn expression_inner(&mut self) -> PResult<Expr> {
        let mut e = self.assignment()?;
        while self.is_punct(",") {
            self.fold()?;
            self.bump();
            let rhs = self.assignment()?;
            let span = e.span.to(rhs.span);
            e = Expr { kind: ExprKind::Binary { op: BinaryOp::Comma, lhs: Box::new(e), rhs: Box::new(rhs) }, span };
        }
        Ok(e)
    }

    pub(crate) fn assignment(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.full_expression(Self::assignment_inner);
        self.leave();
        r
    }

    fn assignment_inner(&mut self) -> PResult<Expr> {
        let lhs = self.conditional()?;
        let op = match &self.peek().kind {
            TokKind::Punct(p) => match *p {
                "=" => Some(None),
                "+=" => Some(Some(BinaryOp::Add)),
                "-=" => Some(Some(BinaryOp::Sub)),
                "*=" => Some(Some(BinaryOp::Mul)),
                "/=" => Some(Some(BinaryOp::Div)),
                "%=" => Some(Some(BinaryOp::Rem)),
                "<<=" => Some(Some(BinaryOp::Shl)),
                ">>=" => Some(Some(BinaryOp::Shr)),
                "&=" => Some(Some(BinaryOp::BitAnd)),
                "|=" => Some(Some(BinaryOp::BitOr)),
                "^=" => Some(Some(BinaryOp::BitXor)),
                _ => None,
            },
            _ => None,
        };
        let Some(op) = op else { return Ok(lhs) };
        self.bump();
        let rhs = self.assignment()?;
        let span = lhs.span.to(rhs.span);
        Ok(Expr { kind: ExprKind::Assign { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span })
    }

    pub(crate) fn conditional(&mut self) -> PResult<Expr> {
        self.full_expression(Self::conditional_inner)
    }

    fn conditional_inner(&mut self) -> PResult<Expr> {
        let cond = self.binary(1)?;
        if !self.is_punct("?") {
            return Ok(cond);
        }
        self.bump();
        self.enter()?;
        let then = self.expression();
        self.leave();
        let then = then?;
        self.expect_punct(":", "in the conditional expression")?;
        self.enter()?;
        let otherwise = self.conditional();
        self.leave();
        let otherwise = otherwise?;
        let span = cond.span.to(otherwise.span);
        Ok(Expr { kind: ExprKind::Conditional { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) }, span })
    }

    fn binary_op(&self) -> Option<(BinaryOp, u8)> {
        let TokKind::Punct(p) = &self.peek().kind else { return None };
        Some(match *p {
            "||" => (BinaryOp::LogOr, 1),
            "&&" => (BinaryOp::LogAnd, 2),
            "|" => (BinaryOp::BitOr, 3),
            "^" => (BinaryOp::BitXor, 4),
            "&" => (BinaryOp::BitAnd, 5),
            "==" => (BinaryOp::Eq, 6),
            "!=" => (BinaryOp::Ne, 6),
            "<" => (BinaryOp::Lt, 7),
            ">" => (BinaryOp::Gt, 7),
            "<=" => (BinaryOp::Le, 7),
            ">=" => (BinaryOp::Ge, 7),
            "<<" => (BinaryOp::Shl, 8),
            ">>" => (BinaryOp::Shr, 8),
            "+" => (BinaryOp::Add, 9),
            "-" => (BinaryOp::Sub, 9),
            "*" => (BinaryOp::Mul, 10),
            "/" => (BinaryOp::Div, 10),
            "%" => (BinaryOp::Rem, 10),
            _ => return None,
        })
    }

    /// Precedence climbing over the left-associative binary operators.
    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.cast()?;
        while let Some((op, prec)) = self.binary_op() {
            if prec < min_prec {
                break;
            }
            self.fold()?;
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
        }
        Ok(lhs)
    }

    fn cast(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.cast_inner();
        self.leave();
        r
    }

    fn cast_inner(&mut self) -> PResult<Expr> {
        if self.is_punct("(") && self.starts_type_name(&self.peek_at(1).clone()) {
            let open = self.bump().span;
            let ty = self.type_name()?;
            self.expect_punct(")", "to close the type in the cast")?;
            if self.is_punct("{") {
                let init = self.initializer()?;
                let span = open.to(self.prev_span());
                let e = Expr { kind: ExprKind::CompoundLiteral { ty: Box::new(ty), init: Box::new(init) }, span };
                return self.postfix_ops(e);
            }
            let expr = self.cast()?;
            let span = open.to(expr.span);
            return Ok(Expr { kind: ExprKind::Cast { ty: Box::new(ty), expr: Box::new(expr) }, span });
        }
        self.unary()
    }

    fn unary(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        let op = match &t.kind {
            TokKind::Punct(p) => match *p {
                "-" => Some(UnaryOp::Neg),
                "+" => Some(UnaryOp::Plus),
                "!" => Some(UnaryOp::Not),
                "~" => Some(UnaryOp::BitNot),
                "*" => Some(UnaryOp::Deref),
                "&" => Some(UnaryOp::AddrOf),
                "++" => Some(UnaryOp::PreInc),
                "--" => Some(UnaryOp::PreDec),
                _ => None,
            },
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let operand = if matches!(op, UnaryOp::PreInc | UnaryOp::PreDec) { self.unary_nested()? } else { self.cast()? };
            let span = t.span.to(operand.span);
            return Ok(Expr { kind: ExprKind::Unary { op, operand: Box::new(operand) }, span });
        }
        if t.ident() == Some("sizeof") || t.ident() == Some("_Alignof") || t.ident() == Some("__alignof__") {
            self.bump();
            if self.is_punct("(") && self.starts_type_name(&self.peek_at(1).clone()) {
                self.bump();
                let ty = self.type_name()?;
                self.expect_punct(")", "to close `sizeof(type)`")?;
                if self.is_punct("{") {
                    // `sizeof (T){...}`: the size of a compound literal.
                    let init = self.initializer()?;
                    let lit_span = t.span.to(self.prev_span());
                    let lit = Expr { kind: ExprKind::CompoundLiteral { ty: Box::new(ty), init: Box::new(init) }, span: lit_span };
                    let e = self.postfix_ops(lit)?;
                    let span = t.span.to(e.span);
                    return Ok(Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span });
                }
                let span = t.span.to(self.prev_span());
                return Ok(Expr { kind: ExprKind::SizeofType(Box::new(ty)), span });
            }
            let e = self.unary_nested()?;
            let span = t.span.to(e.span);
            return Ok(Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span });
        }
        if t.ident() == Some("__extension__") {
            self.bump();
            return self.cast();
        }
        let e = self.primary()?;
        self.postfix_ops(e)
    }

    fn unary_nested(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.unary();
        self.leave();
        r
    }

    fn postfix_ops(&mut self, mut e: Expr) -> PResult<Expr> {
        // A chain of postfix operators (`a[i][j]`, `p->next->next`, `f()()`) nests the way a
        // binary chain does: bounded the same way, on its own count.
        let mut chain = 0usize;
        loop {
            if ["[", "(", ".", "->", "++", "--"].iter().any(|p| self.is_punct(p)) {
                chain += 1;
                if chain > MAX_EXPRESSION_OPERATORS {
                    return Err(self
                        .error_here(format!("this expression has more than {MAX_EXPRESSION_OPERATORS} operators"))
                        .with_help("split it into several statements"));
                }
            }
            if self.eat_punct("[") {
                let index = self.expression()?;
                self.expect_punct("]", "to close the subscript")?;
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Index { base: Box::new(e), index: Box::new(index) }, span };
            } else if self.eat_punct("(") {
                let mut args = Vec::new();
                if !self.is_punct(")") {
                    loop {
                        args.push(self.assignment()?);
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                }
                self.expect_punct(")", "to close the argument list")?;
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Call { callee: Box::new(e), args }, span };
            } else if self.is_punct(".") || self.is_punct("->") {
                let arrow = self.bump().is_punct("->");
                let (field, _) = self.expect_ident(if arrow { "a member name after `->`" } else { "a member name after `.`" })?;
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Member { base: Box::new(e), field, arrow }, span };
            } else if self.is_punct("++") || self.is_punct("--") {
                let op = if self.bump().is_punct("++") { UnaryOp::PostInc } else { UnaryOp::PostDec };
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Unary { op, operand: Box::new(e) }, span };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        let span = t.span;
        let kind = match t.kind {
            TokKind::Ident(ref s) if matches!(s.as_str(), "__builtin_offsetof" | "__builtin_va_arg" | "__builtin_types_compatible_p") => {
                return self.builtin_with_type_argument(s.clone());
            }
            TokKind::Ident(ref s) if !KEYWORDS.contains(&s.as_str()) => {
                if self.is_typedef_name(s) {
                    return Err(self.error_here(format!("expected expression, found the type name `{s}`")));
                }
                self.bump();
                ExprKind::Ident(s.clone())
            }
            TokKind::Int { value, suffix, radix } => {
                self.bump();
                ExprKind::IntLit { value, suffix, radix }
            }
            TokKind::Float { value, single, long_double } => {
                self.bump();
                ExprKind::FloatLit { value, single, long_double }
            }
            TokKind::Char(c) => {
                self.bump();
                ExprKind::CharLit(c)
            }
            TokKind::Str(_) => {
                let mut s = String::new();
                let mut end = span;
                while let TokKind::Str(part) = &self.peek().kind {
                    s.push_str(part);
                    end = self.bump().span;
                }
                return Ok(Expr { kind: ExprKind::StringLit(s), span: span.to(end) });
            }
            TokKind::Punct("(") => {
                self.bump();
                if self.is_punct("{") {
                    // GNU statement expression (glibc's `assert` expands to one).
                    self.block()?;
                    self.expect_punct(")", "to close the statement expression")?;
                    let span = span.to(self.prev_span());
                    return Ok(opaque_builtin(STMT_EXPR_CALLEE, Vec::new(), span));
                }
                let inner = self.expression()?;
                self.expect_punct(")", "to close the parenthesised expression")?;
                // The parentheses are part of the span so host code can be copied verbatim.
                return Ok(Expr { kind: inner.kind, span: span.to(self.prev_span()) });
            }
            _ => return Err(self.error_here("expected expression")),
        };
        Ok(Expr { kind, span })
    }
}

/// The callee name standing for a GNU statement expression `({ ... })`: the tree keeps it as
/// a call with no arguments (its span covers the whole expression, so host code copied by span
/// is unchanged; a kernel cannot call it).
pub const STMT_EXPR_CALLEE: &str = "__builtin_stmt_expr";

/// A call to a compiler builtin whose arguments are not all expressions (they take types), kept
/// as a call with the expression arguments only.
fn opaque_builtin(name: &str, args: Vec<Expr>, span: Span) -> Expr {
    let callee = Expr { kind: ExprKind::Ident(name.to_string()), span };
    Expr { kind: ExprKind::Call { callee: Box::new(callee), args }, span }
}

impl Parser<'_> {
    /// `__builtin_offsetof(type, member.designator[i])`, `__builtin_va_arg(ap, type)`,
    /// `__builtin_types_compatible_p(t1, t2)`: what `offsetof`, `va_arg` and friends expand to.
    fn builtin_with_type_argument(&mut self, name: String) -> PResult<Expr> {
        let start = self.bump().span;
        self.expect_punct("(", &format!("after `{name}`"))?;
        let mut args = Vec::new();
        match name.as_str() {
            "__builtin_offsetof" => {
                self.type_name()?;
                self.expect_punct(",", "after the type in `offsetof`")?;
                self.expect_ident("a member name")?;
                loop {
                    if self.eat_punct(".") {
                        self.expect_ident("a member name")?;
                    } else if self.eat_punct("[") {
                        args.push(self.expression()?);
                        self.expect_punct("]", "to close the subscript")?;
                    } else {
                        break;
                    }
                }
            }
            "__builtin_va_arg" => {
                args.push(self.assignment()?);
                self.expect_punct(",", "after the `va_list` in `va_arg`")?;
                self.type_name()?;
            }
            _ => {
                self.type_name()?;
                self.expect_punct(",", "between the two types")?;
                self.type_name()?;
            }
        }
        self.expect_punct(")", &format!("to close `{name}(...)`"))?;
        let span = start.to(self.prev_span());
        let e = opaque_builtin(&name, args, span);
        self.postfix_ops(e)
    }
}

/// What in a struct member's declaration (its tokens) can make the struct's layout other than
/// the natural one: a bit-field width, an attribute, `_Alignas`.
fn field_layout_note(toks: &[Token]) -> Option<&'static str> {
    let mut depth = 0i32;
    for t in toks {
        match &t.kind {
            TokKind::Punct("(" | "[" | "{") => depth += 1,
            TokKind::Punct(")" | "]" | "}") => depth -= 1,
            TokKind::Punct(":") if depth == 0 => return Some("a bit-field"),
            TokKind::Ident(w) if matches!(w.as_str(), "__attribute__" | "__attribute") => return Some("an attribute"),
            TokKind::Ident(w) if matches!(w.as_str(), "_Alignas" | "alignas") => return Some("`_Alignas`"),
            _ => {}
        }
    }
    None
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
    }
}

/// The names a skipped `typedef` declaration declares (see the parser's module doc).
fn typedef_names_in(toks: &[Token]) -> Vec<String> {
    // Drop attribute/asm groups and brace bodies, then split at depth-0 commas.
    let mut cleaned: Vec<&Token> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if matches!(t.ident(), Some("__attribute__" | "__attribute" | "__asm__" | "__asm" | "asm")) {
            i += 1;
            let mut depth = 0;
            while i < toks.len() {
                if toks[i].is_punct("(") {
                    depth += 1;
                } else if toks[i].is_punct(")") {
                    depth -= 1;
                    if depth <= 0 {
                        i += 1;
                        break;
                    }
                }
                i += 1;
            }
            continue;
        }
        if t.is_punct("{") {
            let mut depth = 0;
            while i < toks.len() {
                if toks[i].is_punct("{") {
                    depth += 1;
                } else if toks[i].is_punct("}") {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        cleaned.push(t);
        i += 1;
    }
    let mut names = Vec::new();
    let mut segment: Vec<&Token> = Vec::new();
    let mut depth = 0;
    for t in cleaned.into_iter().chain(std::iter::once(&Token { kind: TokKind::Punct(","), span: Span::default(), in_system_header: true })) {
        if t.is_punct("(") || t.is_punct("[") {
            depth += 1;
        } else if t.is_punct(")") || t.is_punct("]") {
            depth -= 1;
        }
        if (t.is_punct(",") && depth == 0) || t.is_punct(";") {
            if let Some(n) = declarator_name_in(&segment) {
                names.push(n);
            }
            segment.clear();
            continue;
        }
        segment.push(t);
    }
    names
}

fn declarator_name_in(seg: &[&Token]) -> Option<String> {
    // `( * name` (pointer to function or array).
    for w in seg.windows(3) {
        if w[0].is_punct("(")
            && w[1].is_punct("*")
            && let Some(n) = w[2].ident()
        {
            return Some(n.to_string());
        }
    }
    // Otherwise the last identifier before the first depth-0 `(` or `[`.
    let mut last = None;
    for t in seg {
        if t.is_punct("(") || t.is_punct("[") {
            break;
        }
        if let Some(w) = t.ident()
            && !QUALIFIER_KEYWORDS.contains(&w)
        {
            last = Some(w.to_string());
        }
    }
    last
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn other_pragmas_warn() {
        let (tu, warnings) = parse("void f(void) {\n#pragma omp parallel for\nfor (;;) break;\n}\n#pragma GCC optimize(\"O3\")\n").unwrap();
        assert_eq!(warnings.len(), 2);
        assert_eq!(warnings[0].message, "ignored pragma");
        assert!(matches!(body(&tu, 0).stmts[0].kind, StmtKind::For { .. }));
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
}
