//! The MESI-CUDA dialect (the first research document's programming model; `.cu` files): CUDA
//! kernels and launches over *shared variables*, arrays declared at file scope
//! (`__global__ float a[N];`) that host code and kernels both read and write directly, with no
//! memory code at all. This module owns what the dialect means in terms of the C the rest of
//! the front end reads; the parser (`parser/cuda.rs`) calls it.
//!
//! Each construct becomes ordinary C with OpenACC, so that lowering, the analysis, staging,
//! padding, fusion, the multi-GPU split and the coherence of shared variables apply unchanged:
//!
//! * a shared variable is a file-scope array: the runtime keeps its host and device copies
//!   coherent already (a transfer only where the other side wrote since, per section);
//! * `__global__ void k(P) { S }` becomes the host function
//!   `void k(dim3 __yosegi_grid, dim3 __yosegi_block, P)` whose body is one compute construct,
//!   a `parallel loop` over the global thread index of every axis the kernel reads (`x`, then
//!   `y` and `z` collapsed around it), running `S` per thread: `blockIdx.x * blockDim.x +
//!   threadIdx.x` is the loop index itself (so the access analysis sees `a[id + 1]` as affine),
//!   `threadIdx.x` and `blockIdx.x` alone are its remainder and quotient by the block's size,
//!   `blockDim`/`gridDim` are the launch's; `return` ends the thread (`continue`);
//! * a launch `k<<<g, b>>>(args)` is the call `k(g, b, args)` (an integer shape is `x` alone);
//! * `atomicAdd(&h[i], v);` and the other atomics are `#pragma acc atomic` updates (captures
//!   when the old value is assigned);
//! * `dim3 g(a, b);` is `dim3 g = {a, b, 1};`; `__device__` functions are the device routines
//!   that compute constructs call.
//!
//! The host code is the user's text with [`HostRewrite`]s (the parser records them): the CUDA
//! keywords removed, hidden parameters and arguments inserted, `<<<...>>>` removed.
//!
//! A kernel whose threads work together (`__shared__` arrays, `__syncthreads()`) is not a loop
//! of independent iterations: it becomes a construct of its own (`DirectiveKind::CudaKernel`)
//! whose body lowering keeps per thread, reading the grid's indices, with the block's shared
//! arrays and barriers (`ir::ExplicitGrid`); its block shape comes from its launches, which
//! must agree on a constant one ([`finish_per_thread_kernels`]).
//!
//! Refused, each with a diagnostic saying what to write instead: CUDA's memory and stream API
//! (`cudaMalloc`, `cudaMemcpy`, ...), warp operations, dynamic shared memory and streams in a
//! launch, `return` inside a loop of a kernel (anywhere in one with barriers), atomics inside
//! larger expressions, `atomicCAS`/`atomicInc`/`atomicDec`.

use std::collections::HashSet;
use std::path::Path;

use crate::diag::{Diagnostic, Span};
use crate::front::ast::*;
use crate::front::lower::walk;

mod guards;

/// The header included before every `.cu` file (`include/yosegi_cuda.h`).
pub const HEADER_NAME: &str = "yosegi_cuda.h";
pub const HEADER: &str = include_str!("../../include/yosegi_cuda.h");

/// The hidden parameters of a kernel's host function: the launch's grid and block.
pub const GRID_PARAM: &str = "__yosegi_grid";
pub const BLOCK_PARAM: &str = "__yosegi_block";

const AXES: [&str; 3] = ["x", "y", "z"];

/// Whether `path` is a source in the dialect.
pub fn is_dialect_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cu")
}

/// The loop index of a kernel's axis: the thread's global index along it.
fn thread_index(axis: usize) -> String {
    format!("__yosegi_t{}", AXES[axis])
}

/// The C that kernels turn into, per axis: the loop over the axis's threads (its body empty)
/// and what the built-in variables become (`threadIdx`, `blockIdx`, `blockDim`, `gridDim`,
/// the global index). Later stages take the host's C for an expression from its span, so the
/// trees the desugaring builds must have text: it is this, in a comment after the unit's last
/// line ([`trailer`]), parsed from there.
pub fn snippets(axis: usize) -> [String; 6] {
    let (t, a) = (thread_index(axis), AXES[axis]);
    [
        format!("for (int {t} = {}; {t} < {}; {t}++) ;", first_var(axis), end_var(axis)),
        format!("(unsigned int)({t} % {BLOCK_PARAM}.{a})"),
        format!("(unsigned int)({t} / {BLOCK_PARAM}.{a})"),
        format!("{BLOCK_PARAM}.{a}"),
        format!("{GRID_PARAM}.{a}"),
        t,
    ]
}

/// The host variables holding the first thread index a kernel's loop runs along `axis` and the
/// one past its last: the launch's threads, narrowed by the tests folded into them (`guards`).
fn first_var(axis: usize) -> String {
    format!("__yosegi_first_{}", AXES[axis])
}
fn end_var(axis: usize) -> String {
    format!("__yosegi_end_{}", AXES[axis])
}

/// What the dialect appends to a unit's preprocessed text: the [`snippets`] of the three axes,
/// inside a comment (the parser reads them from there; the host compiler skips them).
pub fn trailer() -> String {
    let mut out = String::from("\n/* MESI-CUDA kernels:");
    for axis in 0..3 {
        for s in snippets(axis) {
            out.push_str("\n  ");
            out.push_str(&s);
        }
    }
    out.push_str("\n  32\n*/\n");
    out
}

/// The parsed [`snippets`] of the three axes, and `warpSize`'s value.
#[derive(Clone, Debug)]
pub struct Snippets {
    /// `for (int t = first; t < end; t++) ;`
    pub loops: [Stmt; 3],
    pub thread_idx: [Expr; 3],
    pub block_idx: [Expr; 3],
    pub block_dim: [Expr; 3],
    pub grid_dim: [Expr; 3],
    pub global_index: [Expr; 3],
    pub warp_size: Expr,
}

/// The CUDA words that may start or qualify a declaration in the dialect.
pub const SPEC_WORDS: &[&str] =
    &["__global__", "__device__", "__host__", "__shared__", "__constant__", "__forceinline__", "__noinline__", "__managed__"];

/// The CUDA words of one declaration's specifiers.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpecWords {
    pub global: Option<Span>,
    pub device: Option<Span>,
    pub shared: Option<Span>,
}

impl SpecWords {
    pub fn note(&mut self, word: &str, span: Span) {
        match word {
            "__global__" => self.global = Some(span),
            "__device__" | "__constant__" | "__managed__" => self.device = Some(span),
            "__shared__" => self.shared = Some(span),
            _ => {}
        }
    }
}

/// What the parser keeps while it reads a unit in the dialect.
#[derive(Debug, Default)]
pub struct ParserState {
    /// Kernels declared or defined so far, with their parameter counts.
    pub kernels: std::collections::HashMap<String, usize>,
    pub rewrites: Vec<HostRewrite>,
    /// The CUDA words of the declaration specifiers read last.
    pub specs: SpecWords,
    /// Parsed at the first kernel.
    pub snippets: Option<Snippets>,
    /// Inside a kernel's body (where `__shared__` arrays may be declared).
    pub in_kernel: bool,
    /// Kernels written per thread, with where their host prologue goes.
    pub per_thread_kernels: Vec<(String, Span)>,
    pub launches: Vec<Launch>,
    /// `dim3` variables declared from constants (`dim3 block(16, 16);`), by name.
    pub dim3_constants: std::collections::HashMap<String, [u32; 3]>,
}

fn err(span: Span, message: impl Into<String>, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(span, message).with_help(help)
}

/// Checks a call in the dialect's code: CUDA's runtime API has no place in it. A few calls that
/// mean nothing here are kept as no-ops (their text becomes a constant); the rest are refused.
pub fn check_api_call(name: &str, span: Span, rewrites: &mut Vec<HostRewrite>) -> Result<(), Diagnostic> {
    match name {
        "cudaDeviceSynchronize" | "cudaThreadSynchronize" | "cudaGetLastError" | "cudaPeekAtLastError" => {
            // Yosegi waits for kernels where the host needs their results; errors end the run.
            rewrites.push(HostRewrite { span, text: "0".to_string() });
            Ok(())
        }
        "cudaMalloc" | "cudaMallocManaged" | "cudaMallocHost" | "cudaHostAlloc" | "cudaMallocPitch" | "cudaMalloc3D" => Err(err(
            span,
            format!("`{name}` has no place in a MESI-CUDA program: memory is not allocated by hand"),
            "declare the array as a shared variable at file scope (`__global__ float a[N];`); host code and kernels both use it, and Yosegi allocates and moves it",
        )),
        "cudaMemcpy" | "cudaMemcpyAsync" | "cudaMemcpyToSymbol" | "cudaMemcpyFromSymbol" | "cudaMemcpy2D" | "cudaMemcpy3D"
        | "cudaMemset" | "cudaMemsetAsync" => Err(err(
            span,
            format!("`{name}` has no place in a MESI-CUDA program: data is not copied by hand"),
            "delete the copy: host code and kernels read and write shared variables directly, and Yosegi transfers only what the other side changed",
        )),
        "cudaFree" | "cudaFreeHost" => Err(err(
            span,
            format!("`{name}` has no place in a MESI-CUDA program"),
            "delete it: shared variables live as long as the program, and Yosegi frees their device copies",
        )),
        _ if name.starts_with("cudaStream") || name.starts_with("cudaEvent") => Err(err(
            span,
            format!("`{name}`: streams and events are not part of the MESI-CUDA dialect"),
            "delete it: Yosegi puts transfers on streams of its own and overlaps them with independent kernels",
        )),
        _ if name.starts_with("cuda") || name.starts_with("tex") || name.starts_with("surf") => Err(err(
            span,
            format!("`{name}` is not part of the MESI-CUDA dialect"),
            "a MESI-CUDA program has kernels, launches and shared variables, and no runtime API calls, textures or surfaces",
        )),
        _ => Ok(()),
    }
}

/// The text of the hidden parameters, in front of the kernel's own.
fn hidden_params_text() -> String {
    format!("dim3 {GRID_PARAM}, dim3 {BLOCK_PARAM}")
}

fn dim3_specs(span: Span) -> DeclSpecs {
    DeclSpecs {
        storage: None,
        qualifiers: Qualifiers::default(),
        is_inline: false,
        ty: TypeSpec::TypedefName("dim3".to_string()),
        span,
        block_shared: false,
    }
}

/// Gives a kernel's declarator the hidden grid and block parameters, in the tree and in the host
/// text (`open` is the offset just after the parameter list's `(`, `close` that of its `)`).
pub fn add_hidden_params(declarator: &mut Declarator, text: &str, open: u32, close: u32, rewrites: &mut Vec<HostRewrite>) {
    let Some(DerivedType::Function { params, .. }) = declarator.derived.first_mut() else { return };
    let at = declarator.name_span;
    let inside = &text[open as usize..close as usize];
    let hidden = hidden_params_text();
    if inside.trim().is_empty() || inside.trim() == "void" {
        rewrites.push(HostRewrite { span: Span::new(at.tu, open, close), text: hidden });
    } else {
        rewrites.push(HostRewrite { span: Span::new(at.tu, open, open), text: format!("{hidden}, ") });
    }
    for name in [BLOCK_PARAM, GRID_PARAM] {
        let declarator = Declarator { name: Some(name.to_string()), name_span: at, derived: Vec::new(), span: at };
        params.insert(0, ParamDecl { specs: dim3_specs(at), declarator, span: at });
    }
}

/// The host text of a launch's shape argument: a `dim3` as it is, an integer as `x`.
pub fn shape_arg_text(expr_text: &str) -> String {
    format!("_Generic(({expr_text}), dim3: __yosegi_dim3_of_dim3, default: __yosegi_dim3_of_uint)({expr_text})")
}

// ---------------------------------------------------------------------------------------------
// Kernels

fn ident(name: &str, span: Span) -> Expr {
    Expr { kind: ExprKind::Ident(name.to_string()), span }
}

fn int_lit(value: u64, span: Span) -> Expr {
    Expr { kind: ExprKind::IntLit { value, suffix: IntSuffix::default(), radix: 10 }, span }
}

/// `threadIdx`, `blockIdx`, `blockDim` or `gridDim` `.axis`: the variable and the axis.
fn builtin_index(e: &Expr) -> Option<(&'static str, usize)> {
    let ExprKind::Member { base, field, arrow: false } = &e.kind else { return None };
    let ExprKind::Ident(name) = &base.kind else { return None };
    let var = ["threadIdx", "blockIdx", "blockDim", "gridDim"].into_iter().find(|v| v == name)?;
    let axis = AXES.iter().position(|a| a == field)?;
    Some((var, axis))
}

/// `blockIdx.a * blockDim.a` in either order: the axis.
pub(crate) fn block_offset(e: &Expr) -> Option<usize> {
    let ExprKind::Binary { op: BinaryOp::Mul, lhs, rhs } = &e.kind else { return None };
    match (builtin_index(lhs)?, builtin_index(rhs)?) {
        (("blockIdx", a), ("blockDim", b)) | (("blockDim", a), ("blockIdx", b)) if a == b => Some(a),
        _ => None,
    }
}

/// `blockIdx.a * blockDim.a + threadIdx.a` in any order: the axis of that global index.
pub(crate) fn global_index(e: &Expr) -> Option<usize> {
    let ExprKind::Binary { op: BinaryOp::Add, lhs, rhs } = &e.kind else { return None };
    let pair = |offset: &Expr, thread: &Expr| match (block_offset(offset), builtin_index(thread)) {
        (Some(a), Some(("threadIdx", b))) if a == b => Some(a),
        _ => None,
    };
    pair(lhs, rhs).or_else(|| pair(rhs, lhs))
}

/// Which axes a kernel's body reads `threadIdx` or `blockIdx` along.
fn used_axes(block: &Block) -> [bool; 3] {
    let mut used = [false; 3];
    let mut visit = |e: &Expr| {
        if let Some((var, axis)) = builtin_index(e)
            && (var == "threadIdx" || var == "blockIdx")
        {
            used[axis] = true;
        }
    };
    for s in &block.stmts {
        walk::each_expr(s, &mut visit);
    }
    used
}

/// Rewrites a kernel's body, thread by thread, into C: the built-in variables, `return`,
/// atomics. `loops` counts the loops (and switches do not) around the statement.
struct KernelBody<'s> {
    snippets: &'s Snippets,
    errors: Vec<Diagnostic>,
    /// The kernel runs as written on every thread of its launch (it uses `__shared__` or
    /// `__syncthreads()`): the built-in variables stay (lowering reads them as the grid's).
    per_thread: bool,
}

impl KernelBody<'_> {
    fn expr(&mut self, e: &mut Expr) {
        let span = e.span;
        let snippets = self.snippets;
        if self.per_thread && builtin_index(e).is_some() {
            return;
        }
        if !self.per_thread && let Some(axis) = global_index(e) {
            *e = snippets.global_index[axis].clone();
            return;
        }
        if let Some((var, axis)) = builtin_index(e) {
            *e = match var {
                "threadIdx" => snippets.thread_idx[axis].clone(),
                "blockIdx" => snippets.block_idx[axis].clone(),
                "blockDim" => snippets.block_dim[axis].clone(),
                _ => snippets.grid_dim[axis].clone(),
            };
            return;
        }
        match &mut e.kind {
            ExprKind::Ident(name) => match name.as_str() {
                "warpSize" => *e = snippets.warp_size.clone(),
                "threadIdx" | "blockIdx" | "blockDim" | "gridDim" => self.errors.push(err(
                    span,
                    format!("`{name}` is used here as a whole; Yosegi reads it one axis at a time"),
                    format!("write `{name}.x`, `{name}.y` or `{name}.z`"),
                )),
                _ => {}
            },
            ExprKind::Call { callee, args } => {
                if let ExprKind::Ident(name) = &callee.kind
                    && let Some(d) = self.refused_call(name, span)
                {
                    self.errors.push(d);
                    return;
                }
                self.expr(callee);
                args.iter_mut().for_each(|a| self.expr(a));
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Binary { lhs, rhs, .. } | ExprKind::Assign { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                self.expr(cond);
                self.expr(then);
                self.expr(otherwise);
            }
            ExprKind::Cast { expr, .. } | ExprKind::SizeofExpr(expr) => self.expr(expr),
            ExprKind::Index { base, index } => {
                self.expr(base);
                self.expr(index);
            }
            ExprKind::Member { base, .. } => self.expr(base),
            ExprKind::CompoundLiteral { init, .. } => self.init(init),
            _ => {}
        }
    }

    fn init(&mut self, i: &mut Initializer) {
        match i {
            Initializer::Expr(e) => self.expr(e),
            // Runs of numbers name nothing.
            Initializer::List(list) => list.trees_mut().for_each(|i| self.init(i)),
        }
    }

    /// A call a kernel may not make where it stands (atomics are statements of their own).
    fn refused_call(&self, name: &str, span: Span) -> Option<Diagnostic> {
        if name == "__syncthreads" && self.per_thread {
            return None;
        }
        if name == "__syncthreads" || name.starts_with("__syncthreads_") || name.starts_with("__syncwarp") {
            return Some(err(
                span,
                format!("`{name}()` is not supported: Yosegi runs the threads of a kernel independently"),
                "write the kernel so that each thread reads only shared variables and its own locals; Yosegi stages data that neighbouring threads reuse in shared memory itself (see `yosegi explain`)",
            ));
        }
        if name.starts_with("__shfl") || name.starts_with("__ballot") || name.starts_with("__any") || name.starts_with("__all") {
            return Some(err(
                span,
                format!("`{name}` is not supported: warp-level operations need the threads of a warp together"),
                "compute the value from shared variables in each thread, or use an atomic on a shared variable",
            ));
        }
        if let Some(kind) = atomic_kind(name) {
            return Some(match kind {
                Err(help) => err(span, format!("`{name}` is not supported"), help),
                Ok(_) => err(
                    span,
                    format!("`{name}` is supported as a statement of its own (`{name}(p, v);` or `old = {name}(p, v);`)"),
                    "assign its result to a variable in a statement of its own, then use the variable",
                ),
            });
        }
        None
    }

    fn block(&mut self, b: &mut Block, loops: u32) {
        for s in &mut b.stmts {
            self.stmt(s, loops);
        }
    }

    fn stmt(&mut self, s: &mut Stmt, loops: u32) {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Compound(b) => self.block(b, loops),
            StmtKind::Expr(Some(e)) => {
                if let Some(atomic) = self.atomic_statement(e, span) {
                    *s = atomic;
                } else {
                    self.expr(e);
                }
            }
            StmtKind::Expr(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Goto(_) => {}
            StmtKind::Decl(d) => {
                for id in &mut d.declarators {
                    if let Some(i) = &mut id.init {
                        self.init(i);
                    }
                    for derived in &mut id.declarator.derived {
                        if let DerivedType::Array { size: Some(size), .. } = derived {
                            self.expr(size);
                        }
                    }
                }
            }
            StmtKind::If { cond, then, otherwise } => {
                self.expr(cond);
                self.stmt(then, loops);
                if let Some(o) = otherwise {
                    self.stmt(o, loops);
                }
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.expr(cond);
                self.stmt(body, loops + 1);
            }
            StmtKind::Switch { cond, body } => {
                self.expr(cond);
                self.stmt(body, loops);
            }
            StmtKind::For { init, cond, step, body } => {
                match init {
                    Some(ForInit::Expr(e)) => self.expr(e),
                    Some(ForInit::Decl(d)) => {
                        for id in &mut d.declarators {
                            if let Some(i) = &mut id.init {
                                self.init(i);
                            }
                        }
                    }
                    None => {}
                }
                if let Some(c) = cond {
                    self.expr(c);
                }
                if let Some(st) = step {
                    self.expr(st);
                }
                self.stmt(body, loops + 1);
            }
            StmtKind::Case { value, body } => {
                self.expr(value);
                self.stmt(body, loops);
            }
            StmtKind::Default { body } | StmtKind::Labeled { body, .. } => self.stmt(body, loops),
            StmtKind::Return(_) if self.per_thread => self.errors.push(err(
                span,
                "`return` in a kernel that uses `__shared__` or `__syncthreads()` is not supported",
                "put the rest of the kernel's body under an `if` instead of returning early",
            )),
            StmtKind::Return(value) => {
                if value.is_some() {
                    self.errors.push(err(span, "a kernel returns nothing", "write `return;`, or store the value in a shared variable"));
                } else if loops > 0 {
                    self.errors.push(err(
                        span,
                        "`return` inside a loop of a kernel is not supported",
                        "leave the loop with `break` (after setting a flag if needed) and return after it",
                    ));
                } else {
                    // The thread ends: the next iteration of the loop over threads.
                    s.kind = StmtKind::Continue;
                }
            }
            StmtKind::Acc { directive, .. } => self.errors.push(err(
                directive.span,
                "OpenACC directives are not allowed inside a kernel",
                "a kernel's threads already run in parallel; write the loop without the directive",
            )),
        }
    }

    /// `atomicOp(p, v);` or `lhs = atomicOp(p, v);` as `#pragma acc atomic` update or capture.
    fn atomic_statement(&mut self, e: &mut Expr, span: Span) -> Option<Stmt> {
        let (target, call) = match &mut e.kind {
            ExprKind::Call { .. } => (None, e),
            ExprKind::Assign { op: None, lhs, rhs } if matches!(&rhs.kind, ExprKind::Call { .. }) => (Some(lhs), rhs.as_mut()),
            _ => return None,
        };
        let ExprKind::Call { callee, args } = &mut call.kind else { return None };
        let ExprKind::Ident(name) = &callee.kind else { return None };
        let name = name.clone();
        let op = match atomic_kind(&name)? {
            Ok(op) => op,
            Err(help) => {
                self.errors.push(err(call.span, format!("`{name}` is not supported"), help));
                return Some(Stmt { kind: StmtKind::Expr(None), span });
            }
        };
        if args.len() != 2 {
            self.errors.push(err(call.span, format!("`{name}` takes an address and a value"), format!("write `{name}(&a[i], v)`")));
            return Some(Stmt { kind: StmtKind::Expr(None), span });
        }
        for a in args.iter_mut() {
            self.expr(a);
        }
        let value = args.pop().expect("two args");
        let address = args.pop().expect("two args");
        let cs = call.span;
        // The element updated: `&a[i]` is `a[i]`, any other address `p[0]`.
        let x = match address.kind {
            ExprKind::Unary { op: UnaryOp::AddrOf, operand } => *operand,
            _ => Expr { kind: ExprKind::Index { base: Box::new(address), index: Box::new(int_lit(0, cs)) }, span: cs },
        };
        let update = |x: Expr, value: Expr| -> Expr {
            let kind = match op {
                AtomicUpdate::Binary(op) => ExprKind::Assign { op: Some(op), lhs: Box::new(x), rhs: Box::new(value) },
                AtomicUpdate::Exchange => ExprKind::Assign { op: None, lhs: Box::new(x), rhs: Box::new(value) },
                AtomicUpdate::Extremum(f) => {
                    let call = Expr { kind: ExprKind::Call { callee: Box::new(ident(f, cs)), args: vec![x.clone(), value] }, span: cs };
                    ExprKind::Assign { op: None, lhs: Box::new(x), rhs: Box::new(call) }
                }
            };
            Expr { kind, span: cs }
        };
        let directive = |kind| Directive { kind: DirectiveKind::Atomic(kind), clauses: Vec::new(), span };
        let stmt = |e: Expr| Stmt { kind: StmtKind::Expr(Some(e)), span };
        Some(match target {
            None => {
                let kind = if matches!(op, AtomicUpdate::Exchange) { AtomicKind::Write } else { AtomicKind::Update };
                Stmt { kind: StmtKind::Acc { directive: directive(kind), body: Some(Box::new(stmt(update(x, value)))) }, span }
            }
            Some(lhs) => {
                self.expr(lhs);
                let read = Expr { kind: ExprKind::Assign { op: None, lhs: lhs.clone(), rhs: Box::new(x.clone()) }, span: cs };
                let block = Block { stmts: vec![stmt(read), stmt(update(x, value))], span };
                let body = Stmt { kind: StmtKind::Compound(block), span };
                Stmt { kind: StmtKind::Acc { directive: directive(AtomicKind::Capture), body: Some(Box::new(body)) }, span }
            }
        })
    }
}

#[derive(Clone, Copy)]
enum AtomicUpdate {
    Binary(BinaryOp),
    Exchange,
    /// `x = fmax(x, v)` / `fmin`: OpenACC's extremum update, which keeps `x`'s type.
    Extremum(&'static str),
}

/// A CUDA atomic's update, or why it is refused; `None` for other names.
fn atomic_kind(name: &str) -> Option<Result<AtomicUpdate, &'static str>> {
    let name = name.strip_suffix("_system").or_else(|| name.strip_suffix("_block")).unwrap_or(name);
    Some(Ok(match name {
        "atomicAdd" => AtomicUpdate::Binary(BinaryOp::Add),
        "atomicSub" => AtomicUpdate::Binary(BinaryOp::Sub),
        "atomicAnd" => AtomicUpdate::Binary(BinaryOp::BitAnd),
        "atomicOr" => AtomicUpdate::Binary(BinaryOp::BitOr),
        "atomicXor" => AtomicUpdate::Binary(BinaryOp::BitXor),
        "atomicMax" => AtomicUpdate::Extremum("fmax"),
        "atomicMin" => AtomicUpdate::Extremum("fmin"),
        "atomicExch" => AtomicUpdate::Exchange,
        "atomicCAS" => return Some(Err("compare-and-swap loops build other atomics; use atomicAdd, atomicMax, atomicMin, atomicExch or the bitwise ones directly")),
        "atomicInc" | "atomicDec" => return Some(Err("write the wrap-around with atomicAdd/atomicSub on a counter and a `%` where it is read")),
        _ => return None,
    }))
}

/// Turns the kernel `f` (its declarator already has the hidden parameters) into the host
/// function whose body is one `parallel loop` over the kernel's threads. `text` is the unit's
/// preprocessed text; the host code's edits go to `rewrites`.
/// Returns, for a kernel written per thread, where its host prologue goes (its launch's block
/// check, added once the launches' block sizes are known: [`finish_per_thread_kernels`]).
pub fn desugar_kernel(f: &mut FunctionDef, text: &str, snippets: &Snippets, rewrites: &mut Vec<HostRewrite>) -> Result<Option<Span>, Diagnostic> {
    let name = f.declarator.name.clone().unwrap_or_default();
    if !matches!(f.specs.ty, TypeSpec::Base(BaseType::Void)) || f.declarator.derived.len() != 1 {
        return Err(err(f.declarator.name_span, format!("kernel `{name}` must return `void`"), "a kernel's results go to shared variables or its pointer parameters"));
    }
    if let Some(at) = per_thread_kernel(f, snippets)? {
        return Ok(Some(at));
    }
    let used = used_axes(&f.body);
    let params: HashSet<String> = match f.declarator.derived.first() {
        Some(DerivedType::Function { params, .. }) => params.iter().filter_map(|p| p.declarator.name.clone()).collect(),
        _ => HashSet::new(),
    };
    let bounds = guards::fold(&mut f.body, &params, text);
    let mut body = KernelBody { snippets, errors: Vec::new(), per_thread: false };
    body.block(&mut f.body, 0);
    if let Some(first) = body.errors.into_iter().next() {
        return Err(first);
    }
    let axes = used.iter().rposition(|u| *u).map_or(1, |top| top + 1);
    // Where the body's text was: between the braces, which stay.
    let outer = f.body.span;
    let inner = Span::new(outer.tu, outer.lo + 1, outer.hi.saturating_sub(1).max(outer.lo + 1));
    let at = Span::new(outer.tu, inner.lo, inner.lo);
    let mut stmt = Stmt { kind: StmtKind::Compound(std::mem::replace(&mut f.body, Block { stmts: Vec::new(), span: outer })), span: inner };
    for axis in 0..axes {
        let mut for_loop = snippets.loops[axis].clone();
        if let StmtKind::For { body, .. } = &mut for_loop.kind {
            **body = stmt;
        }
        // The loop stands where the kernel's body is (its name and line come from there).
        for_loop.span = inner;
        stmt = for_loop;
    }
    let mut clauses = Vec::new();
    if axes > 1 {
        clauses.push(Clause { kind: ClauseKind::Collapse(axes as u32), span: at });
    }
    let directive = Directive { kind: DirectiveKind::ParallelLoop, clauses, span: inner };
    let construct = Stmt { kind: StmtKind::Acc { directive, body: Some(Box::new(stmt)) }, span: inner };
    // The host computes each loop's range before the construct: the launch's threads, narrowed
    // by the folded tests.
    let mut stmts = Vec::new();
    let mut prologue = String::new();
    for (axis, b) in bounds.iter().enumerate().take(axes) {
        let a = AXES[axis];
        let first = b.lowers.iter().fold("0LL".to_string(), |acc, l| format!("__yosegi_max_ll({acc}, {l})"));
        let threads = format!("(long long){GRID_PARAM}.{a} * {BLOCK_PARAM}.{a}");
        let end = b.uppers.iter().fold(threads, |acc, u| format!("__yosegi_min_ll({acc}, {u})"));
        prologue.push_str(&format!(" int {} = (int)({first}); int {} = (int)({end});", first_var(axis), end_var(axis)));
        for var in [first_var(axis), end_var(axis)] {
            let specs = DeclSpecs { storage: None, qualifiers: Qualifiers::default(), is_inline: false, ty: TypeSpec::Base(BaseType::Int), span: at, block_shared: false };
            let declarator = Declarator { name: Some(var), name_span: at, derived: Vec::new(), span: at };
            let decl = Declaration { specs, declarators: vec![InitDeclarator { declarator, init: None }], span: at };
            stmts.push(Stmt { kind: StmtKind::Decl(decl), span: at });
        }
    }
    stmts.push(construct);
    f.body = Block { stmts, span: outer };
    // Threads along the axes above those the kernel reads would all run the same body.
    if axes < 3 {
        let unused: Vec<&str> = AXES[axes..].to_vec();
        let threads: Vec<String> = unused.iter().map(|a| format!("{GRID_PARAM}.{a} * {BLOCK_PARAM}.{a}")).collect();
        let product = threads.join(" * ");
        prologue.push_str(&format!(
            " if (({product}) != 1u) __yosegi_cuda_unused_axes(\"{name}\", \"{}\", (unsigned long long)({product}));",
            unused.join(" and ")
        ));
    }
    rewrites.push(HostRewrite { span: at, text: prologue });
    Ok(None)
}

/// Whether a kernel's threads work together: a `__shared__` array or a `__syncthreads()`.
fn cooperates(body: &Block) -> bool {
    let mut found = false;
    for s in &body.stmts {
        walk::each_stmt(s, &mut |s| found |= matches!(&s.kind, StmtKind::Decl(d) if d.specs.block_shared));
        walk::each_expr(s, &mut |e| {
            found |= matches!(&e.kind, ExprKind::Call { callee, .. } if matches!(&callee.kind, ExprKind::Ident(n) if n == "__syncthreads"));
        });
    }
    found
}

/// A kernel whose threads work together becomes one construct that runs its body, as
/// written, on every thread of the launch (`DirectiveKind::CudaKernel`); its block size comes
/// from its launches. `None` for other kernels.
fn per_thread_kernel(f: &mut FunctionDef, snippets: &Snippets) -> Result<Option<Span>, Diagnostic> {
    if !cooperates(&f.body) {
        return Ok(None);
    }
    let mut body = KernelBody { snippets, errors: Vec::new(), per_thread: true };
    body.block(&mut f.body, 0);
    if let Some(first) = body.errors.into_iter().next() {
        return Err(first);
    }
    let outer = f.body.span;
    let inner = Span::new(outer.tu, outer.lo + 1, outer.hi.saturating_sub(1).max(outer.lo + 1));
    let at = Span::new(outer.tu, inner.lo, inner.lo);
    let stmt = Stmt { kind: StmtKind::Compound(std::mem::replace(&mut f.body, Block { stmts: Vec::new(), span: outer })), span: inner };
    let launch = CudaLaunch { block: [1, 1, 1], grid: snippets.grid_dim.clone() };
    let directive = Directive { kind: DirectiveKind::CudaKernel(Box::new(launch)), clauses: Vec::new(), span: inner };
    let construct = Stmt { kind: StmtKind::Acc { directive, body: Some(Box::new(stmt)) }, span: inner };
    f.body = Block { stmts: vec![construct], span: outer };
    Ok(Some(at))
}

/// A launch of a kernel written per thread: its block shape when constant.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: String,
    pub span: Span,
    pub block: Option<[u32; 3]>,
}

/// Gives each kernel written per thread the block size its launches use (they must agree, and
/// be constants: its shared arrays and barriers are written for one shape), and its host
/// prologue: a check that the launch's block is that one.
pub fn finish_per_thread_kernels(
    items: &mut [ExternalDecl],
    kernels: &[(String, Span)],
    launches: &[Launch],
    rewrites: &mut Vec<HostRewrite>,
) -> Result<(), Diagnostic> {
    for (name, at) in kernels {
        let mut block: Option<[u32; 3]> = None;
        for l in launches.iter().filter(|l| &l.kernel == name) {
            let Some(b) = l.block else {
                return Err(err(
                    l.span,
                    format!("kernel `{name}` uses `__shared__` or `__syncthreads()`, so its block size must be a constant"),
                    "give the block as a number (`<<<blocks, 256>>>`) or a `dim3` declared from numbers (`dim3 block(16, 16);`)",
                ));
            };
            match block {
                Some(first) if first != b => {
                    return Err(err(
                        l.span,
                        format!("kernel `{name}` is launched with blocks of {}x{}x{} here and {}x{}x{} before", b[0], b[1], b[2], first[0], first[1], first[2]),
                        "a kernel that uses `__shared__` or `__syncthreads()` runs with one block shape: launch it with the same block everywhere",
                    ));
                }
                _ => block = Some(b),
            }
        }
        let block = block.unwrap_or([1, 1, 1]);
        for item in items.iter_mut() {
            let ExternalDecl::Function(f) = item else { continue };
            if f.declarator.name.as_deref() != Some(name.as_str()) {
                continue;
            }
            for s in &mut f.body.stmts {
                if let StmtKind::Acc { directive, .. } = &mut s.kind
                    && let DirectiveKind::CudaKernel(launch) = &mut directive.kind
                {
                    launch.block = block;
                }
            }
        }
        let [x, y, z] = block;
        rewrites.push(HostRewrite {
            span: *at,
            text: format!(
                " if ({BLOCK_PARAM}.x != {x}u || {BLOCK_PARAM}.y != {y}u || {BLOCK_PARAM}.z != {z}u) __yosegi_cuda_block_mismatch(\"{name}\", {BLOCK_PARAM}, {x}u, {y}u, {z}u);"
            ),
        });
    }
    Ok(())
}

/// The value of a constant integer expression (macros already expanded).
pub fn constant(e: &Expr) -> Option<u64> {
    match &e.kind {
        ExprKind::IntLit { value, .. } => Some(*value),
        ExprKind::Cast { expr, .. } | ExprKind::Unary { op: UnaryOp::Plus, operand: expr } => constant(expr),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (constant(lhs)?, constant(rhs)?);
            match op {
                BinaryOp::Add => a.checked_add(b),
                BinaryOp::Sub => a.checked_sub(b),
                BinaryOp::Mul => a.checked_mul(b),
                BinaryOp::Div => a.checked_div(b),
                BinaryOp::Shl => a.checked_shl(u32::try_from(b).ok()?),
                _ => None,
            }
        }
        _ => None,
    }
}
