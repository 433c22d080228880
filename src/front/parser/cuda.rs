//! The parser's part of the MESI-CUDA dialect (`front::cuda` says what the dialect means):
//! its declaration words, `dim3` declarations written as constructor calls, kernel
//! definitions and prototypes, and launches `k<<<grid, block>>>(args);`.

use crate::diag::{Diagnostic, Span};
use crate::front::ast::*;
use crate::front::cuda;
use crate::front::lexer::{self, TokKind, Token};

use super::{PResult, Parser};

/// Joins `<<` `<` and `>>` `>` written without a space into the launch brackets `<<<`, `>>>`
/// (no C expression has either sequence).
pub(crate) fn join_launch_brackets(toks: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    for t in toks {
        if let Some(prev) = out.last_mut()
            && prev.span.hi == t.span.lo
            && ((prev.is_punct("<<") && t.is_punct("<")) || (prev.is_punct(">>") && t.is_punct(">")))
        {
            prev.kind = TokKind::Punct(if t.is_punct("<") { "<<<" } else { ">>>" });
            prev.span = prev.span.to(t.span);
            continue;
        }
        out.push(t);
    }
    out
}

impl<'a> Parser<'a> {
    pub(super) fn in_dialect(&self) -> bool {
        self.cuda.is_some()
    }

    /// A CUDA declaration word at the cursor: noted for the declaration being read, and removed
    /// from the host code.
    pub(super) fn dialect_spec_word(&mut self, word: &str) -> PResult<()> {
        let t = self.bump();
        if let Some(state) = self.cuda.as_mut() {
            state.specs.note(word, t.span);
            state.rewrites.push(HostRewrite { span: t.span, text: String::new() });
        }
        Ok(())
    }

    /// The CUDA words of the declaration specifiers just read.
    pub(super) fn dialect_specs(&self) -> cuda::SpecWords {
        self.cuda.as_ref().map(|s| s.specs).unwrap_or_default()
    }

    pub(super) fn set_in_kernel(&mut self, inside: bool) {
        if let Some(state) = self.cuda.as_mut() {
            state.in_kernel = inside;
        }
    }

    pub(super) fn in_kernel(&self) -> bool {
        self.cuda.as_ref().is_some_and(|s| s.in_kernel)
    }

    pub(super) fn reset_dialect_specs(&mut self) {
        if let Some(state) = self.cuda.as_mut() {
            state.specs = cuda::SpecWords::default();
        }
    }

    /// A call in the dialect's code: the runtime API is refused (see [`cuda::check_api_call`]).
    pub(super) fn dialect_call(&mut self, callee: &Expr, span: Span) -> PResult<()> {
        let Some(state) = self.cuda.as_mut() else { return Ok(()) };
        if let ExprKind::Ident(name) = &callee.kind {
            cuda::check_api_call(name, span, &mut state.rewrites)?;
        }
        Ok(())
    }

    /// The offsets just inside the parentheses of `declarator`'s parameter list.
    fn param_list_bounds(&self, declarator: &Declarator) -> Option<(u32, u32)> {
        let from = declarator.name_span.hi as usize;
        let to = declarator.span.hi as usize;
        let text = self.text.get(from..to)?;
        let open = from + text.find('(')? + 1;
        let close = from + text.rfind(')')?;
        (open <= close).then_some((open as u32, close as u32))
    }

    /// A `__global__` function declarator (a definition's or a prototype's): it gets the hidden
    /// launch parameters; the kernel is known to launches from here on.
    pub(super) fn dialect_kernel_declarator(&mut self, declarator: &mut Declarator) -> PResult<()> {
        let name = declarator.name.clone().unwrap_or_default();
        let Some((open, close)) = self.param_list_bounds(declarator) else {
            return Err(Diagnostic::error(declarator.span, "a kernel needs a parameter list").with_help("write `__global__ void k(...)`"));
        };
        let params = match declarator.derived.first() {
            Some(DerivedType::Function { params, variadic: false, .. }) => params.len(),
            _ => {
                return Err(Diagnostic::error(declarator.span, format!("kernel `{name}` cannot take variable arguments"))
                    .with_help("give it a fixed parameter list"));
            }
        };
        let text = self.text;
        let state = self.cuda.as_mut().expect("in the dialect");
        cuda::add_hidden_params(declarator, text, open, close, &mut state.rewrites);
        state.kernels.insert(name, params);
        Ok(())
    }

    /// A kernel's definition, made the host function that runs it (see [`cuda::desugar_kernel`]).
    pub(super) fn dialect_kernel_definition(&mut self, f: &mut FunctionDef) -> PResult<()> {
        let snippets = self.dialect_snippets()?;
        let text = self.text;
        let state = self.cuda.as_mut().expect("in the dialect");
        if let Some(at) = cuda::desugar_kernel(f, text, &snippets, &mut state.rewrites)? {
            state.per_thread_kernels.push((f.declarator.name.clone().unwrap_or_default(), at));
        }
        Ok(())
    }

    /// The trees of [`cuda::snippets`], parsed from the unit's [`cuda::trailer`].
    fn dialect_snippets(&mut self) -> PResult<cuda::Snippets> {
        if let Some(s) = self.cuda.as_ref().and_then(|s| s.snippets.clone()) {
            return Ok(s);
        }
        let trailer = cuda::trailer();
        let missing = || Diagnostic::global_error("internal error: the MESI-CUDA trailer is missing from the unit");
        let base = self.text.rfind(trailer.as_str()).ok_or_else(missing)?;
        let text = self.text;
        let tu = self.tu;
        let parse = |snippet: &str, statement: bool| -> PResult<(Option<Stmt>, Option<Expr>)> {
            let lo = base + trailer.find(snippet).ok_or_else(missing)?;
            let toks = lexer::lex_range(text, tu, lo, lo + snippet.len())?;
            let mut p = Parser::new(text, tu, toks);
            Ok(if statement { (Some(p.statement()?), None) } else { (None, Some(p.expression()?)) })
        };
        let mut loops = Vec::new();
        let mut exprs: [Vec<Expr>; 5] = Default::default();
        for axis in 0..3 {
            let pieces = cuda::snippets(axis);
            loops.push(parse(&pieces[0], true)?.0.ok_or_else(missing)?);
            for (k, piece) in pieces[1..].iter().enumerate() {
                exprs[k].push(parse(piece, false)?.1.ok_or_else(missing)?);
            }
        }
        let warp_size = parse("32", false)?.1.ok_or_else(missing)?;
        let three = |v: Vec<Expr>| -> [Expr; 3] { v.try_into().expect("three axes") };
        let [thread_idx, block_idx, block_dim, grid_dim, global_index] = exprs.map(three);
        let snippets = cuda::Snippets {
            loops: loops.try_into().expect("three axes"),
            thread_idx,
            block_idx,
            block_dim,
            grid_dim,
            global_index,
            warp_size,
        };
        self.cuda.as_mut().expect("in the dialect").snippets = Some(snippets.clone());
        Ok(snippets)
    }

    /// Whether the cursor is at a launch, `name <<<`.
    pub(super) fn at_launch(&self) -> bool {
        self.in_dialect() && self.peek().ident().is_some() && self.peek_at(1).is_punct("<<<")
    }

    /// `k<<<grid, block[, 0]>>>(args);`, the call `k(grid, block, args)`.
    pub(super) fn launch_statement(&mut self) -> PResult<Stmt> {
        let name_tok = self.bump();
        let name = name_tok.ident().unwrap_or_default().to_string();
        let open = self.bump().span;
        let grid = self.assignment()?;
        self.expect_punct(",", "between the launch's grid and block")?;
        let block = self.assignment()?;
        if self.eat_punct(",") {
            let shared = self.assignment()?;
            if !matches!(shared.kind, ExprKind::IntLit { value: 0, .. }) {
                return Err(Diagnostic::error(shared.span, "dynamic shared memory is not part of the MESI-CUDA dialect")
                    .with_help("remove the third launch argument: kernels use shared variables, and Yosegi stages them in shared memory itself"));
            }
            if self.is_punct(",") {
                return Err(self.error_here("streams are not part of the MESI-CUDA dialect")
                    .with_help("launch with `<<<grid, block>>>`: Yosegi overlaps transfers and independent kernels itself"));
            }
        }
        if !self.is_punct(">>>") {
            return Err(self.error_here("expected `>>>` to close the launch configuration")
                .with_help("a launch is `kernel<<<grid, block>>>(arguments);`"));
        }
        let close = self.bump().span;
        let paren = self.expect_punct("(", "after the launch configuration")?;
        let args = self.arguments_until_close()?;
        self.expect_punct(")", "to close the argument list")?;
        let end = self.prev_span();
        self.expect_punct(";", "after the launch")?;
        let span = name_tok.span.to(self.prev_span());
        let state = self.cuda.as_mut().expect("in the dialect");
        let Some(&params) = state.kernels.get(&name) else {
            return Err(Diagnostic::error(name_tok.span, format!("`{name}` is not a kernel declared before this launch"))
                .with_help(format!("define it (or declare it) above as `__global__ void {name}(...)`")));
        };
        if params != args.len() {
            return Err(Diagnostic::error(name_tok.span.to(end), format!("kernel `{name}` takes {params} arguments, and this launch passes {}", args.len()))
                .with_help("pass one argument per parameter of the kernel"));
        }
        // The block's shape when it is constant (a kernel written per thread needs it).
        let constant_block = match &block.kind {
            ExprKind::Ident(v) => state.dim3_constants.get(v).copied(),
            _ => cuda::constant(&block).and_then(|x| u32::try_from(x).ok()).map(|x| [x, 1, 1]),
        };
        state.launches.push(cuda::Launch { kernel: name.clone(), span: name_tok.span.to(end), block: constant_block });
        let text = |e: &Expr| self.text[e.span.lo as usize..e.span.hi as usize].to_string();
        let shapes = format!("{}, {}", cuda::shape_arg_text(&text(&grid)), cuda::shape_arg_text(&text(&block)));
        let inserted = if args.is_empty() { shapes } else { format!("{shapes}, ") };
        let state = self.cuda.as_mut().expect("in the dialect");
        state.rewrites.push(HostRewrite { span: open.to(close), text: keep_lines(String::new(), &self.text[open.lo as usize..close.hi as usize]) });
        state.rewrites.push(HostRewrite { span: Span::new(paren.tu, paren.hi, paren.hi), text: inserted });
        let callee = Expr { kind: ExprKind::Ident(name), span: name_tok.span };
        let mut all = vec![grid, block];
        all.extend(args);
        let call = Expr { kind: ExprKind::Call { callee: Box::new(callee), args: all }, span: name_tok.span.to(end) };
        Ok(Stmt { kind: StmtKind::Expr(Some(call)), span })
    }

    /// After `dim3`: declarators written as constructor calls (`dim3 grid(n / 256, m);`), each
    /// the initializer `{n / 256, m, 1}`; plain ones (`dim3 b = {...}`, `dim3 b;`) as in C.
    pub(super) fn dim3_declaration(&mut self, specs: DeclSpecs, start: Span) -> PResult<Declaration> {
        let mut declarators = Vec::new();
        loop {
            if !(self.peek().ident().is_some() && self.peek_at(1).is_punct("(")) {
                let declarator = self.declarator(super::DeclaratorKind::Named)?;
                if let Some(n) = &declarator.name {
                    self.declare(n, super::NameKind::Ordinary);
                }
                let init = if self.eat_punct("=") { Some(self.initializer()?) } else { None };
                declarators.push(InitDeclarator { declarator, init });
            } else {
                let name_tok = self.bump();
                let name = name_tok.ident().unwrap_or_default().to_string();
                let open = self.bump().span;
                let mut values = self.arguments_until_close()?;
                let close = self.expect_punct(")", "to close the `dim3` sizes")?;
                if values.is_empty() || values.len() > 3 {
                    return Err(Diagnostic::error(open.to(close), format!("`dim3 {name}(...)` takes one to three sizes"))
                        .with_help("give x, and y and z when they are not 1"));
                }
                let constants: Vec<Option<u32>> = values.iter().map(|v| cuda::constant(v).and_then(|x| u32::try_from(x).ok())).collect();
                if let Some(state) = self.cuda.as_mut() {
                    if constants.iter().all(Option::is_some) {
                        let mut shape = [1u32; 3];
                        for (k, c) in constants.iter().enumerate() {
                            shape[k] = c.unwrap_or(1);
                        }
                        state.dim3_constants.insert(name.clone(), shape);
                    } else {
                        state.dim3_constants.remove(&name);
                    }
                }
                let texts: Vec<String> = values.iter().map(|e| self.text[e.span.lo as usize..e.span.hi as usize].to_string()).collect();
                let mut items: Vec<String> = texts.iter().map(|t| format!("({t})")).collect();
                while items.len() < 3 {
                    items.push("1".to_string());
                    values.push(Expr { kind: ExprKind::IntLit { value: 1, suffix: IntSuffix::default(), radix: 10 }, span: close });
                }
                let replaced = &self.text[open.lo as usize..close.hi as usize];
                let text = keep_lines(format!(" = {{ {} }}", items.join(", ")), replaced);
                self.cuda.as_mut().expect("in the dialect").rewrites.push(HostRewrite { span: open.to(close), text });
                self.declare(&name, super::NameKind::Ordinary);
                let declarator = Declarator { name: Some(name), name_span: name_tok.span, derived: Vec::new(), span: name_tok.span };
                let list = values.into_iter().map(|v| (Vec::new(), Initializer::Expr(v))).collect();
                declarators.push(InitDeclarator { declarator, init: Some(Initializer::List(InitList::of_trees(list, open.to(close)))) });
            }
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(";", "after the declaration")?;
        Ok(Declaration { specs, declarators, span: start.to(self.prev_span()) })
    }
}
