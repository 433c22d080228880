//! CUDA C for grid kernels: what the `cuda` device compiles with NVRTC, and what `yosegi emit`
//! shows. The text is meant to be read: one `extern "C" __global__` function per grid kernel,
//! its locals declared at the top with their C types, C operators, and casts exactly where the
//! IR converts a value (implicit conversions of the IR — a param read at another type, a store
//! into an element of another type — are written out as casts too).
//!
//! Names: params are `<name>_p<k>`, locals `<name>_<index>`, shared arrays `<name>_s<k>`,
//! device functions `<name>_f<index>`, reduction partials `__partials_<n>` and scalar outputs
//! `__scalar_out_<n>`; the suffixes keep names from different namespaces apart (a
//! `firstprivate(n)` local and the param `n` it starts from are different variables).
//!
//! Control flow: a `Loop` becomes `for (;;)` with its test at the top (`test_first`) or at the
//! bottom; `Break` is C's `break` (the emitted code has no `switch`, so the innermost C loop is
//! always the IR's innermost loop); `Continue` is `goto continue_<n>`, a label placed before the
//! loop's `continuing` block, so that the step of a `for` loop runs on `continue` as C requires.
//!
//! Arithmetic: integer arithmetic narrower than `int` is cast back to its type (C promotes it);
//! shift counts are masked to the operand's width, as the simulator does; `max`/`min` of
//! integers and the atomics CUDA has no instruction for are small `__device__` helpers emitted
//! before the kernel (only those the kernel uses). Floating constants are printed with the
//! shortest decimal that reads back to the same value (`f` suffix for `float`).
//!
//! Variants ([`CudaOptions`]): the generic kernel reads every scalar param at run time and
//! indexes in `long long`. A *specialised* variant writes the launch's values of the integer
//! params that shape the iteration space ([`specialisable_params`]: grid sizes, array
//! dimensions, loop and guard conditions) as constants, so that NVRTC folds the index
//! arithmetic; with [`IndexWidth::Bits32`] it also computes thread positions and array indices
//! in `int`, which the caller may ask for only when every array param's extent and the launch's
//! thread count fit in `int` (the cuda device checks this at launch).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::ir::{
    ArrayRef, AtomicOp, BinaryOp, Block, Body, Expr, ExprKind, Function, GridKernel, Handle, LocalKind, MathFn,
    Module, ParamKind, ParamValue, ScalarType, Stmt, UnaryOp,
};
use crate::diag::Span;
use crate::ir::value;
use crate::source::SourceSet;

mod helpers;

use helpers::{AtomicKey, Helper, TypeKey, combine, helper_definition, helper_name};

/// The integer width of thread positions and array index arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// `long long`, as the simulator computes: always correct.
    Bits64,
    /// `int`: only for launches whose array extents and thread count fit in `int`.
    Bits32,
}

/// What a launch guarantees about the memory its array params point to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamAliasing {
    /// Params may share memory: `__restrict__` only where the program wrote `restrict`.
    Unknown,
    /// No array param the kernel writes shares its allocation with another array param (see
    /// [`param_aliasing`]): every array param is `__restrict__`.
    Disjoint,
}

/// How to write a grid kernel (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct CudaOptions<'v> {
    /// The launch's values, one per `kernel.params`: the params [`specialisable_params`] names
    /// are written as these constants. `None`: the generic kernel.
    pub specialise: Option<&'v [ParamValue]>,
    pub index_width: IndexWidth,
    pub aliasing: ParamAliasing,
    /// The program's sources: statements are preceded by `#line` directives naming the user's
    /// file and line, so that a tool reading the kernel's line information (`compute-sanitizer`,
    /// Nsight Compute's source view; NVRTC compiles with `-lineinfo`) points at the C source.
    /// `None`: no directives (the text the goldens and the tuning cache's hashes see).
    pub sources: Option<&'v SourceSet>,
}

impl CudaOptions<'_> {
    /// The kernel for any launch: params read at run time, 64-bit indexing, no aliasing
    /// promise, no line directives.
    pub const GENERIC: CudaOptions<'static> =
        CudaOptions { specialise: None, index_width: IndexWidth::Bits64, aliasing: ParamAliasing::Unknown, sources: None };
}


/// What a launch guarantees, from the allocation each param is bound to (`None` for scalar
/// params; one entry per `kernel.params`): `Disjoint` when no param the kernel writes shares
/// its allocation with another array param. Read-only params may share one: `__restrict__`
/// promises only that memory written through one pointer is not reached through another. A
/// kernel with a row table, or with accesses at computed addresses, is always `Unknown`.
pub fn param_aliasing(kernel: &GridKernel, allocations: &[Option<u64>]) -> ParamAliasing {
    // The rows of a table lie in allocations of their own, which any other param may share;
    // so may memory at a computed address.
    if kernel.params.iter().any(|p| matches!(p.kind, ParamKind::RowTable { .. })) || crate::ir::uses_addresses(&kernel.body) {
        return ParamAliasing::Unknown;
    }
    let written = kernel.written_array_params();
    for (i, a) in allocations.iter().enumerate() {
        for (j, b) in allocations.iter().enumerate().skip(i + 1) {
            let shared = a.is_some() && a == b;
            if shared && (written.contains(&(i as u32)) || written.contains(&(j as u32))) {
                return ParamAliasing::Unknown;
            }
        }
    }
    ParamAliasing::Disjoint
}

/// Whether the CUDA C declares an array param of `kind` `__restrict__`: only where the program
/// or the launch promised it (`aliasing`), since two params may name the same array (`a` and
/// `a + 1`) and restrict would let the compiler keep stale values. Row tables never: two rows
/// may be one array.
pub fn writes_restrict(kind: &ParamKind, aliasing: ParamAliasing) -> bool {
    match kind {
        ParamKind::Array { restrict, .. } => *restrict || aliasing == ParamAliasing::Disjoint,
        _ => false,
    }
}

/// CUDA C for one grid kernel: the helpers and device functions it needs, then the kernel.
pub fn grid_kernel_cuda(module: &Module, kernel: &GridKernel) -> String {
    grid_kernel_cuda_with(module, kernel, &CudaOptions::GENERIC)
}

/// [`grid_kernel_cuda`] for a variant of the kernel.
pub fn grid_kernel_cuda_with(module: &Module, kernel: &GridKernel, options: &CudaOptions) -> String {
    let mut unit = Unit::new(module);
    unit.add_kernel_with(kernel, options);
    unit.finish()
}

/// The integer scalar params that shape the kernel's iteration space: read by a grid size, an
/// array param's dimension, a loop condition or an `if` condition. These are the params a
/// specialised variant turns into constants (other params, such as a float coefficient or a
/// time step used only in arithmetic, would give a new variant per value and gain nothing).
pub fn specialisable_params(kernel: &GridKernel) -> Vec<u32> {
    let body = &kernel.body;
    let mut roots: Vec<Handle<Expr>> = kernel.launch.grid.to_vec();
    // Where each axis's iterations start: a split kernel's block offset (`i_first`, 0 on one
    // device), so that one device runs the very code the unsplit kernel would.
    roots.extend(kernel.axes.iter().map(|a| a.start));
    for p in &kernel.params {
        if let ParamKind::Array { dims, .. } = &p.kind {
            roots.extend(dims.iter().flatten().copied());
        }
    }
    // The conditions of every loop and `if`, nested ones included.
    crate::ir::for_each_stmt(&body.block, &mut |stmt| match stmt {
        Stmt::If { cond, .. } => roots.push(*cond),
        Stmt::Loop { cond, .. } => roots.extend(*cond),
        _ => {}
    });
    let mut found = BTreeSet::new();
    let mut pending = roots;
    while let Some(e) = pending.pop() {
        if e.index() >= body.exprs.len() {
            continue;
        }
        match &body.exprs[e].kind {
            ExprKind::Param(p) => {
                if matches!(kernel.params.get(*p as usize).map(|p| &p.kind), Some(ParamKind::Scalar(t)) if !t.is_float()) {
                    found.insert(*p);
                }
            }
            kind => pending.extend(kind.operands()),
        }
    }
    found.into_iter().collect()
}



/// Whether `e` computes a thread position from the launch registers only (`blockIdx.x *
/// blockDim.x + threadIdx.x` and the like), so that it fits in `int` when the launch's thread
/// count does.
fn is_position(body: &Body, e: Handle<Expr>) -> bool {
    match &body.exprs[e].kind {
        ExprKind::ThreadIdx(_) | ExprKind::BlockIdx(_) | ExprKind::BlockDim(_) | ExprKind::GridDim(_) => true,
        ExprKind::ConstInt(v) => (0..=1024).contains(v),
        ExprKind::Cast { arg } => !body.exprs[e].ty.is_float() && is_position(body, *arg),
        ExprKind::Binary { op: BinaryOp::Add | BinaryOp::Mul, lhs, rhs } => is_position(body, *lhs) && is_position(body, *rhs),
        _ => false,
    }
}

/// The `long long` locals assigned exactly once, from a thread position (see [`is_position`]):
/// in a 32-bit variant they are `int`.
fn position_locals(body: &Body) -> BTreeSet<Handle<crate::ir::Local>> {
    let mut all = Vec::new();
    crate::ir::for_each_stmt(&body.block, &mut |stmt| {
        if let Stmt::Assign { local, value } = stmt {
            all.push((*local, *value));
        }
    });
    let mut assignments: std::collections::HashMap<Handle<crate::ir::Local>, usize> = std::collections::HashMap::new();
    for (local, _) in &all {
        *assignments.entry(*local).or_default() += 1;
    }
    all.iter()
        .filter(|(local, value)| {
            let l = &body.locals[*local];
            l.ty == ScalarType::I64
                && l.kind == LocalKind::Var
                && l.array_dims.is_none()
                && assignments[local] == 1
                && is_position(body, *value)
        })
        .map(|(local, _)| *local)
        .collect()
}

/// CUDA C for every grid kernel of the module, in one translation unit.
pub fn module_cuda(module: &Module) -> String {
    let mut unit = Unit::new(module);
    for (_, kernel) in module.grid_kernels.iter() {
        unit.add_kernel(kernel);
    }
    unit.finish()
}

/// The symbol of the kernel's `__global__` function (what `cuModuleGetFunction` looks up).
pub fn kernel_symbol(kernel: &GridKernel) -> String {
    identifier(&kernel.name)
}

/// The C spelling of a scalar type in CUDA C (`bool` rather than C's `_Bool`).
pub fn cuda_type(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Bool => "bool",
        // A memory format only (array elements): values are `double`.
        ScalarType::F80 => "yosegi_f80",
        other => other.c_name(),
    }
}

// ---------------------------------------------------------------------------------------------
// Names

/// A C identifier from a host expression or a source name: other characters become `_`,
/// runs of `_` collapse, and no leading `_` (names beginning with `__` are reserved).
fn identifier(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    out
}

fn param_name(kernel: &GridKernel, p: u32) -> String {
    match kernel.params.get(p as usize) {
        Some(param) => format!("{}_p{}", identifier(&param.name), p),
        None => format!("missing_param_p{p}"),
    }
}

fn local_name(body: &Body, l: Handle<crate::ir::Local>) -> String {
    format!("{}_{}", identifier(&body.locals[l].name), l.index())
}

fn shared_name(kernel: &GridKernel, s: u32) -> String {
    match kernel.shared.get(s as usize) {
        Some(shared) => format!("{}_s{}", identifier(&shared.name), s),
        None => format!("missing_shared_s{s}"),
    }
}

fn function_name(module: &Module, f: Handle<Function>) -> String {
    format!("{}_f{}", identifier(&module.functions[f].name), f.index())
}

fn type_suffix(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Bool => "bool",
        ScalarType::I8 => "i8",
        ScalarType::U8 => "u8",
        ScalarType::I16 => "i16",
        ScalarType::U16 => "u16",
        ScalarType::I32 => "i32",
        ScalarType::U32 => "u32",
        ScalarType::I64 => "i64",
        ScalarType::U64 => "u64",
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
        ScalarType::F80 => "f80",
    }
}


// ---------------------------------------------------------------------------------------------
// Literals

/// An integer constant of type `ty` (the IR's bit pattern, wrapped to the type's width).
fn int_literal(ty: ScalarType, v: i64) -> String {
    if ty.is_float() {
        return float_literal(ty, v as f64);
    }
    let raw = value::wrap_int(ty, v);
    match ty {
        ScalarType::Bool => if raw != 0 { "true" } else { "false" }.to_string(),
        ScalarType::I32 => signed_literal(raw as i64, i32::MIN as i64, ""),
        ScalarType::I64 => signed_literal(raw as i64, i64::MIN, "ll"),
        ScalarType::U32 => format!("{raw}u"),
        ScalarType::U64 => format!("{raw}ull"),
        // Narrow types have no literal of their own: an `int` constant converted.
        ScalarType::I8 | ScalarType::I16 => format!("(({}){})", cuda_type(ty), signed_literal(raw as i64, i64::MIN, "")),
        _ => format!("(({}){})", cuda_type(ty), raw),
    }
}

fn signed_literal(v: i64, min: i64, suffix: &str) -> String {
    if v == min {
        // `-2147483648` is the negation of a literal too large for `int`.
        format!("(-{}{suffix} - 1{suffix})", (v + 1).unsigned_abs())
    } else if v < 0 {
        format!("(-{}{suffix})", v.unsigned_abs())
    } else {
        format!("{v}{suffix}")
    }
}

/// A floating constant of type `ty`: the shortest decimal that reads back exactly (Rust's
/// formatting round-trips, and C compilers round decimal literals correctly).
fn float_literal(ty: ScalarType, f: f64) -> String {
    let (text, suffix) = if ty == ScalarType::F32 {
        let x = f as f32;
        if x.is_nan() {
            return "(0.0f / 0.0f)".to_string();
        }
        if x.is_infinite() {
            return if x > 0.0 { "(1.0f / 0.0f)" } else { "(-1.0f / 0.0f)" }.to_string();
        }
        (format!("{x:?}"), "f")
    } else {
        if f.is_nan() {
            return "(0.0 / 0.0)".to_string();
        }
        if f.is_infinite() {
            return if f > 0.0 { "(1.0 / 0.0)" } else { "(-1.0 / 0.0)" }.to_string();
        }
        (format!("{f:?}"), "")
    };
    // `1f` is not a C literal: make sure there is a point or an exponent.
    let text = if text.contains(['.', 'e', 'E']) { text } else { format!("{text}.0") };
    if text.starts_with('-') { format!("({text}{suffix})") } else { format!("{text}{suffix}") }
}

/// A raw value (see `ir::value`) of type `ty` as a constant.
fn raw_literal(ty: ScalarType, raw: u64) -> String {
    if ty.is_float() { float_literal(ty, value::as_f64(raw)) } else { int_literal(ty, raw as i64) }
}

/// `text` (of type `from`) converted to `to`.
fn convert(text: String, from: ScalarType, to: ScalarType) -> String {
    if from == to { text } else { format!("(({}){})", cuda_type(to), text) }
}

// ---------------------------------------------------------------------------------------------
// The translation unit

struct Unit<'m> {
    module: &'m Module,
    helpers: BTreeSet<Helper>,
    functions: BTreeSet<Handle<Function>>,
    kernels: Vec<String>,
    /// For `#line` directives (see [`CudaOptions::sources`]).
    sources: Option<&'m SourceSet>,
}

impl<'m> Unit<'m> {
    fn new(module: &'m Module) -> Unit<'m> {
        Unit { module, helpers: BTreeSet::new(), functions: BTreeSet::new(), kernels: Vec::new(), sources: None }
    }

    fn add_kernel(&mut self, kernel: &GridKernel) {
        self.add_kernel_with(kernel, &CudaOptions::GENERIC);
    }

    fn add_kernel_with(&mut self, kernel: &GridKernel, options: &CudaOptions<'m>) {
        self.sources = self.sources.or(options.sources);
        let mut w = Writer::new(self.module, &kernel.body, Some(kernel), &mut self.helpers);
        w.sources = self.sources;
        if let Some(values) = options.specialise {
            for p in specialisable_params(kernel) {
                if let Some(ParamValue::Int(v)) = values.get(p as usize) {
                    w.constants.push((p, *v));
                }
            }
        }
        w.index_width = options.index_width;
        w.aliasing = options.aliasing;
        if options.index_width == IndexWidth::Bits32 {
            w.int_positions = position_locals(&kernel.body);
        }
        w.kernel(kernel);
        let text = w.out;
        self.kernels.push(text);
        self.collect_functions(&kernel.body);
    }

    /// The device functions `body` calls, transitively.
    fn collect_functions(&mut self, body: &Body) {
        let mut pending: Vec<Handle<Function>> = calls_in(body);
        while let Some(f) = pending.pop() {
            if f.index() >= self.module.functions.len() || !self.functions.insert(f) {
                continue;
            }
            pending.extend(calls_in(&self.module.functions[f].body));
        }
    }

    fn finish(mut self) -> String {
        let mut functions = Vec::new();
        for &f in &self.functions {
            let function = &self.module.functions[f];
            let mut w = Writer::new(self.module, &function.body, None, &mut self.helpers);
            w.sources = self.sources;
            w.function(f, function);
            functions.push(w.out);
        }
        let mut out = String::from("// Generated by yosegi from the program's OpenACC regions.\n\n");
        for &h in &self.helpers {
            out.push_str(&helper_definition(h));
            out.push('\n');
        }
        if !self.functions.is_empty() {
            // Prototypes first: device functions may call each other in any order.
            for &f in &self.functions {
                out.push_str(&function_signature(self.module, f));
                out.push_str(";\n");
            }
            out.push('\n');
        }
        for f in functions {
            out.push_str(&f);
            out.push('\n');
        }
        for (i, k) in self.kernels.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(k);
        }
        out
    }
}

fn calls_in(body: &Body) -> Vec<Handle<Function>> {
    body.exprs
        .iter()
        .filter_map(|(_, e)| match &e.kind {
            ExprKind::Call { func, .. } => Some(*func),
            _ => None,
        })
        .collect()
}

fn function_signature(module: &Module, f: Handle<Function>) -> String {
    let function = &module.functions[f];
    let result = function.result.map(cuda_type).unwrap_or("void");
    let params: Vec<String> = function
        .params
        .iter()
        .map(|&p| format!("{} {}", cuda_type(function.body.locals[p].ty), local_name(&function.body, p)))
        .collect();
    let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
    format!("__device__ static {} {}({})", result, function_name(module, f), params)
}

/// Whether `block` has a `Continue` of the loop it is the body of (not of a nested loop).
fn has_continue(block: &Block) -> bool {
    block.iter().any(|s| match s {
        Stmt::Continue => true,
        Stmt::If { then, otherwise, .. } => has_continue(then) || has_continue(otherwise),
        _ => false,
    })
}

struct Writer<'a> {
    module: &'a Module,
    body: &'a Body,
    /// The kernel being written (`None` in a device function: it has no params of its own).
    kernel: Option<&'a GridKernel>,
    /// The result type of the device function being written.
    result: Option<ScalarType>,
    helpers: &'a mut BTreeSet<Helper>,
    out: String,
    indent: usize,
    /// Per enclosing loop: its `continue` label, when it has one.
    loops: Vec<Option<String>>,
    next_label: u32,
    /// Scalar params written as constants (a specialised variant).
    constants: Vec<(u32, i64)>,
    index_width: IndexWidth,
    /// Thread-position locals declared `int` (a 32-bit variant).
    int_positions: BTreeSet<Handle<crate::ir::Local>>,
    aliasing: ParamAliasing,
    sources: Option<&'a SourceSet>,
    /// The user's file and line the last `#line` directive named.
    source_line: Option<(String, u32)>,
}

impl<'a> Writer<'a> {
    fn new(
        module: &'a Module,
        body: &'a Body,
        kernel: Option<&'a GridKernel>,
        helpers: &'a mut BTreeSet<Helper>,
    ) -> Writer<'a> {
        Writer {
            module,
            body,
            kernel,
            result: None,
            helpers,
            out: String::new(),
            indent: 1,
            loops: Vec::new(),
            next_label: 0,
            constants: Vec::new(),
            index_width: IndexWidth::Bits64,
            int_positions: BTreeSet::new(),
            aliasing: ParamAliasing::Unknown,
            sources: None,
            source_line: None,
        }
    }

    /// A `#line` directive for the user's line `span` starts on, unless the last one named it
    /// (generated code has no span and keeps the line before it).
    fn source_line(&mut self, span: Span) {
        let Some(sources) = self.sources else { return };
        if span == Span::default() {
            return;
        }
        let location = sources.location(span);
        if location.line == 0 {
            return;
        }
        let file = location.file.display().to_string();
        if self.source_line.as_ref().is_some_and(|(f, l)| *l == location.line && *f == file) {
            return;
        }
        let quoted: String = file.chars().flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            '\n' => vec![' '],
            c => vec![c],
        }).collect();
        let _ = writeln!(self.out, "#line {} \"{quoted}\"", location.line);
        self.source_line = Some((file, location.line));
    }

    /// The span of the user's code a statement comes from, where the IR keeps one.
    fn stmt_span(&self, stmt: &Stmt) -> Span {
        let of = |e: Handle<Expr>| if e.index() < self.body.exprs.len() { self.body.exprs[e].span } else { Span::default() };
        match stmt {
            Stmt::Store { span, .. } | Stmt::Atomic { span, .. } => *span,
            Stmt::Assign { value, .. } => of(*value),
            Stmt::If { cond, .. } => of(*cond),
            Stmt::Loop { cond: Some(c), .. } => of(*c),
            Stmt::Eval(e) | Stmt::Return(Some(e)) => of(*e),
            _ => Span::default(),
        }
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn kernel(&mut self, kernel: &'a GridKernel) {
        let mut params = Vec::new();
        let written = kernel.written_array_params();
        for (k, p) in kernel.params.iter().enumerate() {
            let name = param_name(kernel, k as u32);
            params.push(match &p.kind {
                ParamKind::Scalar(ty) => format!("{} {}", cuda_type(*ty), name),
                ParamKind::Array { elem, read_only, .. } => {
                    if *elem == ScalarType::F80 {
                        self.helpers.insert(Helper::LongDouble);
                    }
                    let constness = if *read_only || !written.contains(&(k as u32)) { "const " } else { "" };
                    let restrict = if writes_restrict(&p.kind, self.aliasing) { "__restrict__ " } else { "" };
                    format!("{constness}{} *{restrict}{name}", cuda_type(*elem))
                }
                // The device table of the rows' device addresses; the kernel never writes the
                // table itself. No `__restrict__`: two rows may be one array.
                ParamKind::RowTable { elem, read_only } => {
                    if *elem == ScalarType::F80 {
                        self.helpers.insert(Helper::LongDouble);
                    }
                    let constness = if *read_only || !written.contains(&(k as u32)) { "const " } else { "" };
                    format!("{constness}{} *const *{name}", cuda_type(*elem))
                }
            });
        }
        for (n, r) in kernel.reductions.iter().enumerate() {
            params.push(format!("{} *__partials_{n}", cuda_type(r.ty)));
        }
        for (n, (local, _)) in kernel.scalar_outputs.iter().enumerate() {
            let ty = kernel.body.locals.iter().find(|(h, _)| h == local).map(|(_, l)| l.ty).unwrap_or(ScalarType::I64);
            params.push(format!("{} *__scalar_out_{n}", cuda_type(ty)));
        }
        let _ = writeln!(self.out, "extern \"C\" __global__ void {}({})\n{{", kernel_symbol(kernel), params.join(", "));
        for (s, shared) in kernel.shared.iter().enumerate() {
            let dims: String = shared.dims.iter().map(|d| format!("[{d}]")).collect();
            let text = format!("__shared__ {} {}{};", cuda_type(shared.elem), shared_name(kernel, s as u32), dims);
            self.line(&text);
        }
        self.declare_locals(&[]);
        // Starting values the IR gives implicitly (the simulator sets them the same way).
        for (h, local) in self.body.locals.iter() {
            let init = match local.kind {
                LocalKind::FirstPrivate(p) => match kernel.params.get(p as usize).map(|p| &p.kind) {
                    Some(ParamKind::Scalar(pty)) => convert(param_name(kernel, p), *pty, local.ty),
                    _ => continue,
                },
                LocalKind::Reduction(r) => match kernel.reductions.get(r as usize) {
                    Some(red) => raw_literal(local.ty, value::cast(red.ty, local.ty, value::part_identity(red.op, red.ty, red.part))),
                    None => continue,
                },
                _ => continue,
            };
            if local.array_dims.is_none() {
                let text = format!("{} = {};", local_name(self.body, h), init);
                self.line(&text);
            }
        }
        self.block(&kernel.body.block);
        if !kernel.scalar_outputs.is_empty() {
            self.line("if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {");
            self.indent += 1;
            for (n, (local, _)) in kernel.scalar_outputs.iter().enumerate() {
                let text = format!("__scalar_out_{n}[0] = {};", local_name(self.body, *local));
                self.line(&text);
            }
            self.indent -= 1;
            self.line("}");
        }
        self.out.push_str("}\n");
    }

    fn function(&mut self, f: Handle<Function>, function: &'a Function) {
        self.result = function.result;
        let _ = writeln!(self.out, "{}\n{{", function_signature(self.module, f));
        self.declare_locals(&function.params);
        self.block(&function.body.block);
        self.out.push_str("}\n");
    }

    fn declare_locals(&mut self, skip: &[Handle<crate::ir::Local>]) {
        for (h, local) in self.body.locals.iter() {
            if skip.contains(&h) {
                continue;
            }
            let dims: String = local.array_dims.iter().flatten().map(|d| format!("[{d}]")).collect();
            let ty = if self.int_positions.contains(&h) { "int" } else { cuda_type(local.ty) };
            let text = format!("{} {}{};", ty, local_name(self.body, h), dims);
            self.line(&text);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    fn block(&mut self, block: &Block) {
        for stmt in block {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let span = self.stmt_span(stmt);
        self.source_line(span);
        match stmt {
            Stmt::Assign { local, value } if self.int_positions.contains(local) => {
                let v = self.position_expr(*value);
                let text = format!("{} = {};", local_name(self.body, *local), strip_parens(&v));
                self.line(&text);
            }
            Stmt::Assign { local, value } => {
                let lty = self.body.locals[*local].ty;
                let v = self.expr_as(*value, lty);
                let text = format!("{} = {};", local_name(self.body, *local), strip_parens(&v));
                self.line(&text);
            }
            Stmt::Store { array, indices, value, .. } => {
                let elem = self.element_type(*array);
                let v = self.expr_as(*value, elem.value_type());
                let target = self.element(*array, indices);
                let v = if elem == ScalarType::F80 {
                    self.helpers.insert(Helper::LongDouble);
                    format!("yosegi_f80_from_double({})", strip_parens(&v))
                } else {
                    v
                };
                let text = format!("{target} = {};", strip_parens(&v));
                self.line(&text);
            }
            Stmt::Atomic { op, array, indices, value, capture, .. } => self.atomic(*op, *array, indices, *value, *capture),
            Stmt::If { cond, then, otherwise } => {
                let c = self.expr(*cond);
                let text = format!("if ({}) {{", strip_parens(&c));
                self.line(&text);
                self.indent += 1;
                self.block(then);
                self.indent -= 1;
                if otherwise.is_empty() {
                    self.line("}");
                } else {
                    self.line("} else {");
                    self.indent += 1;
                    self.block(otherwise);
                    self.indent -= 1;
                    self.line("}");
                }
            }
            Stmt::Loop { cond, test_first, body, continuing, .. } => {
                let label = if has_continue(body) {
                    self.next_label += 1;
                    Some(format!("continue_{}", self.next_label))
                } else {
                    None
                };
                let test = cond.map(|c| {
                    let c = self.expr(c);
                    format!("if (!{}) break;", parens(&c))
                });
                self.line("for (;;) {");
                self.indent += 1;
                if *test_first && let Some(t) = &test {
                    self.line(t);
                }
                self.loops.push(label.clone());
                self.block(body);
                self.loops.pop();
                if let Some(label) = &label {
                    self.indent -= 1;
                    let text = format!("{label}:;");
                    self.line(&text);
                    self.indent += 1;
                }
                // Still inside the loop: a `break` there (a condition tested in the continuing
                // block, as a `do ... while` with an assignment in it is lowered) leaves it.
                self.loops.push(None);
                self.block(continuing);
                self.loops.pop();
                if !*test_first && let Some(t) = &test {
                    self.line(t);
                }
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Break => {
                if !self.loops.is_empty() {
                    self.line("break;");
                }
            }
            Stmt::Continue => {
                // A `continue` has a label unless it is outside any loop (the verifier refuses
                // that; the simulator ignores it, and so does this).
                if let Some(Some(label)) = self.loops.last() {
                    let text = format!("goto {label};");
                    self.line(&text);
                }
            }
            Stmt::Return(value) => match (value, self.result) {
                (Some(v), Some(rty)) => {
                    let v = self.expr_as(*v, rty);
                    let text = format!("return {};", strip_parens(&v));
                    self.line(&text);
                }
                _ => self.line("return;"),
            },
            Stmt::Eval(e) => {
                let v = self.expr(*e);
                let text = format!("(void){};", parens(&v));
                self.line(&text);
            }
            Stmt::Barrier => self.line("__syncthreads();"),
        }
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        array: ArrayRef,
        indices: &[Handle<Expr>],
        value: Handle<Expr>,
        capture: Option<Handle<crate::ir::Local>>,
    ) {
        let elem = self.element_type(array);
        // The operand goes in the element's type where C would convert it there anyway, else
        // in its own (the update then computes in the wider type, as C does).
        // (`&&`/`||` test the operand's own truth: converting it first could change it.)
        let own = self.body.exprs[value].ty;
        let logical = matches!(op, AtomicOp::LogAnd | AtomicOp::LogOr);
        let vty = if op.compute_type(elem, own) == elem && !logical { elem } else { own };
        let operand = self.expr_as(value, vty);
        let target = self.element(array, indices);
        let capture = capture.map(|c| (local_name(self.body, c), self.body.locals[c].ty));
        if let ArrayRef::Local(_) = array {
            // A thread's own array: no other thread can see it, and CUDA has no atomics on
            // local memory.
            if let Some((name, cty)) = &capture {
                let text = format!("{name} = {};", strip_parens(&convert(target.clone(), elem, *cty)));
                self.line(&text);
            }
            let next = match op {
                AtomicOp::Max | AtomicOp::Min if !elem.is_float() => {
                    let h = if op == AtomicOp::Max { Helper::IntMax(TypeKey::of(elem)) } else { Helper::IntMin(TypeKey::of(elem)) };
                    self.helpers.insert(h);
                    format!("{}({target}, {operand})", helper_name(h))
                }
                _ => combine(op, elem, vty, &target, &operand),
            };
            let text = format!("{target} = {next};");
            self.line(&text);
            return;
        }
        let (call, old) = self.atomic_call(op, elem, vty, &format!("&{target}"), &operand);
        let text = match &capture {
            Some((name, cty)) => format!("{name} = {};", strip_parens(&convert(old, elem, *cty))),
            None => format!("{call};"),
        };
        self.line(&text);
    }

    /// `op` applied atomically at `address`: the call, and the old value as an expression of
    /// the element type (the call converted back where it goes through another type).
    fn atomic_call(&mut self, op: AtomicOp, elem: ScalarType, vty: ScalarType, address: &str, operand: &str) -> (String, String) {
        use ScalarType::*;
        let ull = format!("(unsigned long long *){address}");
        let as_ull = format!("(unsigned long long){}", parens(operand));
        let plain = |call: String| (call.clone(), call);
        let via_ull = |call: String| (call.clone(), format!("({}){call}", cuda_type(elem)));
        if vty != elem {
            let h = Helper::Atomic(AtomicKey::of(op), TypeKey::of(elem), TypeKey::of(vty));
            self.helpers.insert(h);
            return plain(format!("{}({address}, {operand})", helper_name(h)));
        }
        match (op, elem) {
            (AtomicOp::Add, I32 | U32 | U64 | F32 | F64) => plain(format!("atomicAdd({address}, {operand})")),
            (AtomicOp::Add, I64) => via_ull(format!("atomicAdd({ull}, {as_ull})")),
            (AtomicOp::Sub, I32 | U32) => plain(format!("atomicSub({address}, {operand})")),
            (AtomicOp::Sub, F32 | F64) => plain(format!("atomicAdd({address}, -{})", parens(operand))),
            (AtomicOp::Sub, I64 | U64) => via_ull(format!("atomicAdd({ull}, 0ull - {as_ull})")),
            (AtomicOp::Max, I32 | U32 | I64 | U64) => plain(format!("atomicMax({address}, {operand})")),
            (AtomicOp::Min, I32 | U32 | I64 | U64) => plain(format!("atomicMin({address}, {operand})")),
            (AtomicOp::BitAnd | AtomicOp::BitOr | AtomicOp::BitXor, I32 | U32 | U64) => {
                plain(format!("{}({address}, {operand})", bit_atomic(op)))
            }
            (AtomicOp::BitAnd | AtomicOp::BitOr | AtomicOp::BitXor, I64) => {
                via_ull(format!("{}({ull}, {as_ull})", bit_atomic(op)))
            }
            (AtomicOp::Write, I32 | U32 | U64 | F32) => plain(format!("atomicExch({address}, {operand})")),
            (AtomicOp::Write, I64) => via_ull(format!("atomicExch({ull}, {as_ull})")),
            (AtomicOp::Write, F64) => {
                let call = format!("atomicExch({ull}, (unsigned long long)__double_as_longlong({operand}))");
                (call.clone(), format!("__longlong_as_double((long long){call})"))
            }
            _ => {
                let h = Helper::Atomic(AtomicKey::of(op), TypeKey::of(elem), TypeKey::of(elem));
                self.helpers.insert(h);
                plain(format!("{}({address}, {operand})", helper_name(h)))
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Memory

    fn element_type(&self, array: ArrayRef) -> ScalarType {
        match array {
            ArrayRef::Param(p) => match self.kernel.and_then(|k| k.params.get(p as usize)).map(|p| &p.kind) {
                Some(ParamKind::Array { elem, .. } | ParamKind::RowTable { elem, .. }) => *elem,
                _ => ScalarType::I32,
            },
            ArrayRef::Local(l) => self.body.locals[l].ty,
            ArrayRef::Shared(s) => self.kernel.and_then(|k| k.shared.get(s as usize)).map(|s| s.elem).unwrap_or(ScalarType::I32),
            ArrayRef::Partials(r) => self.kernel.and_then(|k| k.reductions.get(r as usize)).map(|r| r.ty).unwrap_or(ScalarType::I32),
            ArrayRef::Address(ty) => ty,
        }
    }

    /// The lvalue `array[indices]`.
    fn element(&mut self, array: ArrayRef, indices: &[Handle<Expr>]) -> String {
        match array {
            ArrayRef::Param(p) => {
                let kernel = self.kernel;
                let name = kernel.map(|k| param_name(k, p)).unwrap_or_else(|| format!("missing_param_p{p}"));
                let dims: Vec<Option<Handle<Expr>>> = match kernel.and_then(|k| k.params.get(p as usize)).map(|p| &p.kind) {
                    Some(ParamKind::Array { dims, .. }) => dims.clone(),
                    // `a[i][j]`: load the row's address from the table, then index the row.
                    Some(ParamKind::RowTable { .. }) => {
                        let subscripts: Vec<String> = indices.iter().map(|&i| self.index_expr(i)).collect();
                        return subscripts.iter().fold(name, |acc, i| format!("{acc}[{}]", strip_parens(i)));
                    }
                    _ => Vec::new(),
                };
                let index = self.linear_index(indices, |w, k| match dims.get(k).copied().flatten() {
                    Some(d) => w.index_expr(d),
                    None if w.index_width == IndexWidth::Bits32 => "0".to_string(),
                    None => "0ll".to_string(),
                });
                format!("{name}[{index}]")
            }
            ArrayRef::Partials(r) => {
                let index = indices.first().map(|&i| self.expr(i)).unwrap_or_else(|| "0".to_string());
                format!("__partials_{r}[{}]", strip_parens(&index))
            }
            ArrayRef::Shared(s) => {
                let kernel = self.kernel;
                let name = kernel.map(|k| shared_name(k, s)).unwrap_or_else(|| format!("missing_shared_s{s}"));
                let dims = kernel.and_then(|k| k.shared.get(s as usize)).map(|s| s.dims.clone()).unwrap_or_default();
                let elem = self.element_type(array);
                self.fixed_element(&name, elem, &dims, indices)
            }
            ArrayRef::Local(l) => {
                let name = local_name(self.body, l);
                let Some(dims) = self.body.locals[l].array_dims.clone() else { return name };
                let elem = self.body.locals[l].ty;
                self.fixed_element(&name, elem, &dims, indices)
            }
            // The device address the kernel computed, as a pointer to the element's type.
            ArrayRef::Address(ty) => {
                let address = indices.first().map(|&i| self.expr(i)).unwrap_or_else(|| "0ull".to_string());
                format!("(*({} *)({}))", cuda_type(ty), strip_parens(&address))
            }
        }
    }

    /// An element of an array with constant dimensions: C's own indexing when every dimension
    /// is indexed, the row-major linear index otherwise.
    fn fixed_element(&mut self, name: &str, elem: ScalarType, dims: &[u32], indices: &[Handle<Expr>]) -> String {
        if indices.len() == dims.len() {
            let mut s = name.to_string();
            for &i in indices {
                let text = self.expr(i);
                let _ = write!(s, "[{}]", strip_parens(&text));
            }
            s
        } else {
            let suffix = if self.index_width == IndexWidth::Bits32 { "" } else { "ll" };
            let index = self.linear_index(indices, |_, k| format!("{}{suffix}", dims.get(k).copied().unwrap_or(1)));
            format!("(({} *){name})[{index}]", cuda_type(elem))
        }
    }

    /// `((i0 * d1 + i1) * d2 + i2)`, in `long long` (as the simulator computes it), or the
    /// index itself for one dimension.
    fn linear_index(&mut self, indices: &[Handle<Expr>], mut dim: impl FnMut(&mut Self, usize) -> String) -> String {
        if indices.len() == 1 {
            let text = if self.index_width == IndexWidth::Bits32 { self.index_expr(indices[0]) } else { self.expr(indices[0]) };
            return strip_parens(&text).to_string();
        }
        let mut acc = String::new();
        for (k, &i) in indices.iter().enumerate() {
            let index = self.index_expr(i);
            if k == 0 {
                acc = index;
            } else {
                let d = dim(self, k);
                acc = format!("({acc} * {d} + {index})");
            }
        }
        if acc.is_empty() { "0".to_string() } else { strip_parens(&acc).to_string() }
    }

    /// An index or dimension in `long long` (`int` in a 32-bit variant).
    fn index_expr(&mut self, e: Handle<Expr>) -> String {
        let ty = self.body.exprs[e].ty;
        if self.index_width == IndexWidth::Bits32 {
            // Widening an `int` only to narrow it again: use the `int` itself.
            match &self.body.exprs[e].kind {
                ExprKind::Local(l) if self.int_positions.contains(l) => return local_name(self.body, *l),
                ExprKind::ConstInt(v) if i32::try_from(*v).is_ok() && !ty.is_float() => return signed_literal(*v, i64::MIN, ""),
                ExprKind::Cast { arg } if ty == ScalarType::I64 && self.body.exprs[*arg].ty == ScalarType::I32 => {
                    return self.index_expr(*arg);
                }
                _ => {}
            }
        }
        let text = self.expr(e);
        let (index_ty, name) = match self.index_width {
            IndexWidth::Bits64 => (ScalarType::I64, "long long"),
            IndexWidth::Bits32 => (ScalarType::I32, "int"),
        };
        if ty == index_ty { text } else { format!("({name}){}", parens(&text)) }
    }

    /// A thread position (see [`is_position`]) computed in `int`.
    fn position_expr(&mut self, e: Handle<Expr>) -> String {
        match &self.body.exprs[e].kind {
            ExprKind::ThreadIdx(a) => format!("((int)threadIdx.{})", a.name()),
            ExprKind::BlockIdx(a) => format!("((int)blockIdx.{})", a.name()),
            ExprKind::BlockDim(a) => format!("((int)blockDim.{})", a.name()),
            ExprKind::GridDim(a) => format!("((int)gridDim.{})", a.name()),
            ExprKind::ConstInt(v) => v.to_string(),
            ExprKind::Cast { arg } => self.position_expr(*arg),
            ExprKind::Binary { op, lhs, rhs } => {
                let sym = if *op == BinaryOp::Mul { "*" } else { "+" };
                let (lhs, rhs) = (*lhs, *rhs);
                let a = self.position_expr(lhs);
                let b = self.position_expr(rhs);
                format!("({a} {sym} {b})")
            }
            _ => self.expr(e),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    /// `e` converted to `ty`.
    fn expr_as(&mut self, e: Handle<Expr>, ty: ScalarType) -> String {
        let from = self.body.exprs[e].ty;
        let text = self.expr(e);
        convert(text, from, ty)
    }

    /// The C text of `e`: an identifier, a literal, a call or an element, or a parenthesised
    /// expression (so that callers never need to think about precedence).
    fn expr(&mut self, e: Handle<Expr>) -> String {
        let expr = &self.body.exprs[e];
        let ty = expr.ty;
        match &expr.kind {
            ExprKind::ConstInt(v) => int_literal(ty, *v),
            ExprKind::ConstFloat(f) => float_literal(ty, *f),
            ExprKind::Param(p) => match self.kernel {
                Some(k) => {
                    let pty = match k.params.get(*p as usize).map(|p| &p.kind) {
                        Some(ParamKind::Scalar(t)) => *t,
                        _ => ty,
                    };
                    match self.constants.iter().find(|(q, _)| q == p) {
                        Some(&(_, v)) => convert(int_literal(pty, v), pty, ty),
                        None => convert(param_name(k, *p), pty, ty),
                    }
                }
                None => format!("missing_param_p{p}"),
            },
            // A thread position kept in `int`: the rest of the kernel sees its IR type.
            ExprKind::Local(l) if self.int_positions.contains(l) => format!("((long long){})", local_name(self.body, *l)),
            ExprKind::Local(l) => local_name(self.body, *l),
            ExprKind::Load { array, indices } => {
                let elem = self.element_type(*array);
                let text = self.element(*array, indices);
                if elem == ScalarType::F80 {
                    self.helpers.insert(Helper::LongDouble);
                    return convert(format!("yosegi_f80_to_double({text})"), ScalarType::F64, ty);
                }
                convert(text, elem, ty)
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(*arg);
                match op {
                    UnaryOp::Neg => narrow(ty, format!("(-{a})")),
                    UnaryOp::Not => format!("(!{a})"),
                    UnaryOp::BitNot => narrow(ty, format!("(~{a})")),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs, ty),
            ExprKind::Select { cond, then, otherwise } => {
                let c = self.expr(*cond);
                let t = self.expr_as(*then, ty);
                let o = self.expr_as(*otherwise, ty);
                format!("({c} ? {t} : {o})")
            }
            ExprKind::Cast { arg } => {
                let a = self.expr(*arg);
                format!("(({}){a})", cuda_type(ty))
            }
            ExprKind::Math { func, args } => self.math(*func, args, ty),
            ExprKind::Call { func, args } => {
                let module = self.module;
                let Some(function) = (func.index() < module.functions.len()).then(|| &module.functions[*func]) else {
                    return format!("missing_function_f{}()", func.index());
                };
                let mut texts = Vec::new();
                for (k, &a) in args.iter().enumerate() {
                    let pty = function.params.get(k).map(|&p| function.body.locals[p].ty).unwrap_or(self.body.exprs[a].ty);
                    let text = self.expr_as(a, pty);
                    texts.push(strip_parens(&text).to_string());
                }
                let call = format!("{}({})", function_name(module, *func), texts.join(", "));
                match function.result {
                    Some(rty) => convert(call, rty, ty),
                    None => call,
                }
            }
            ExprKind::ThreadIdx(a) => format!("(({})threadIdx.{})", cuda_type(ty), a.name()),
            ExprKind::BlockIdx(a) => format!("(({})blockIdx.{})", cuda_type(ty), a.name()),
            ExprKind::BlockDim(a) => format!("(({})blockDim.{})", cuda_type(ty), a.name()),
            ExprKind::GridDim(a) => format!("(({})gridDim.{})", cuda_type(ty), a.name()),
        }
    }

    fn binary(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>, ty: ScalarType) -> String {
        let operand = self.body.exprs[lhs].ty;
        let a = self.left_chain(lhs);
        // Both operands have the operand type (lowering casts); convert if a builder did not.
        let rhs_ty = self.body.exprs[rhs].ty;
        let b_raw = self.expr(rhs);
        let b = if matches!(op, BinaryOp::LogAnd | BinaryOp::LogOr) { b_raw } else { convert(b_raw, rhs_ty, operand) };
        let sym = match op.c_operator() {
            Some(sym) => sym,
            None => {
                let is_max = op == BinaryOp::Max;
                let call = if operand.is_float() {
                    let f = if operand == ScalarType::F32 { "f" } else { "" };
                    format!("{}{f}({}, {})", if is_max { "fmax" } else { "fmin" }, strip_parens(&a), strip_parens(&b))
                } else {
                    let key = TypeKey::of(operand);
                    let h = if is_max { Helper::IntMax(key) } else { Helper::IntMin(key) };
                    self.helpers.insert(h);
                    format!("{}({}, {})", helper_name(h), strip_parens(&a), strip_parens(&b))
                };
                return convert(call, operand, ty);
            }
        };
        if operand.is_float() {
            match op {
                BinaryOp::Rem => {
                    let f = if operand == ScalarType::F32 { "fmodf" } else { "fmod" };
                    return convert(format!("{f}({}, {})", strip_parens(&a), strip_parens(&b)), operand, ty);
                }
                // Refused by lowering; the simulator yields the left operand.
                BinaryOp::Shl | BinaryOp::Shr | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                    return convert(a, operand, ty);
                }
                _ => {}
            }
        }
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            // C leaves shifts by the width or more undefined; the simulator (like x86) masks.
            let bits = operand.size_bytes() * 8;
            let in_range = matches!(self.body.exprs[rhs].kind, ExprKind::ConstInt(c) if (0..bits as i64).contains(&c));
            let count = if in_range { b } else { format!("({b} & {})", int_literal(operand, bits as i64 - 1)) };
            return narrow(ty, format!("({a} {sym} {count})"));
        }
        let text = format!("({a} {sym} {b})");
        if matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne | BinaryOp::LogAnd | BinaryOp::LogOr) {
            return text;
        }
        if ty != operand { convert(text, operand, ty) } else { narrow(ty, text) }
    }

    /// The text of a binary operator's left operand. A long left-leaning chain (`a + b + c + ...`,
    /// as generated code writes sums of thousands of terms, or `a < b < c < ...`, whose every
    /// link converts the comparison before the next) is written in one pass over its spine
    /// into one buffer: the same text [`Self::binary`] and [`Self::expr`]'s casts would make
    /// node by node, without copying every prefix again at each level (quadratic in the
    /// chain's length).
    fn left_chain(&mut self, lhs: Handle<Expr>) -> String {
        enum Link {
            Binary(BinaryOp, Handle<Expr>, Handle<Expr>),
            Cast(ScalarType),
        }
        let mut spine = Vec::new();
        let mut at = lhs;
        loop {
            match self.body.exprs[at].kind {
                ExprKind::Binary { op, lhs: inner, rhs } if self.plain_chain_link(op, inner, self.body.exprs[at].ty) => {
                    spine.push(Link::Binary(op, inner, rhs));
                    at = inner;
                }
                // Written `((T)a)` by `expr`, whatever `a` is.
                ExprKind::Cast { arg } => {
                    spine.push(Link::Cast(self.body.exprs[at].ty));
                    at = arg;
                }
                _ => break,
            }
        }
        if spine.is_empty() {
            return self.expr(lhs);
        }
        // Every link's opening text, outermost first, then the innermost operand, then each
        // link's closing text from the inside out (the order `binary` evaluates operands in).
        let mut text = String::new();
        for link in &spine {
            match link {
                Link::Binary(..) => text.push('('),
                Link::Cast(ty) => {
                    text.push_str("((");
                    text.push_str(cuda_type(*ty));
                    text.push(')');
                }
            }
        }
        text.push_str(&self.expr(at));
        for link in spine.iter().rev() {
            match *link {
                Link::Binary(op, inner, rhs) => {
                    let operand = self.body.exprs[inner].ty;
                    let rhs_ty = self.body.exprs[rhs].ty;
                    let b_raw = self.expr(rhs);
                    let b = if matches!(op, BinaryOp::LogAnd | BinaryOp::LogOr) { b_raw } else { convert(b_raw, rhs_ty, operand) };
                    text.push(' ');
                    text.push_str(op.c_operator().unwrap_or_default());
                    text.push(' ');
                    text.push_str(&b);
                    text.push(')');
                }
                Link::Cast(_) => text.push(')'),
            }
        }
        text
    }

    /// Whether [`Self::binary`] writes this node as plain `(a op b)` with nothing around it, so
    /// that [`Self::left_chain`] may write it in line.
    fn plain_chain_link(&self, op: BinaryOp, inner: Handle<Expr>, ty: ScalarType) -> bool {
        let operand = self.body.exprs[inner].ty;
        if op.c_operator().is_none() || matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            return false;
        }
        if operand.is_float() && matches!(op, BinaryOp::Rem | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor) {
            return false;
        }
        let unconverted = matches!(
            op,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne | BinaryOp::LogAnd | BinaryOp::LogOr
        );
        unconverted || (ty == operand && (ty.is_float() || ty.size_bytes() >= 4))
    }

    fn math(&mut self, func: MathFn, args: &[Handle<Expr>], ty: ScalarType) -> String {
        if func == MathFn::Abs && !ty.is_float() {
            let arg = args.first().map(|&a| self.expr_as(a, ty)).unwrap_or_else(|| "0".to_string());
            let arg = strip_parens(&arg).to_string();
            return match ty {
                ScalarType::I64 => format!("llabs({arg})"),
                t if t.is_signed() => convert(format!("abs((int){})", parens(&arg)), ScalarType::I32, t),
                // |x| of an unsigned value is the value.
                _ => parens(&arg).to_string(),
            };
        }
        // Integer-typed math calls compute in double, as C's would after conversion.
        let at = if ty.is_float() { ty } else { ScalarType::F64 };
        let base = match func {
            MathFn::Sqrt => "sqrt",
            MathFn::Cbrt => "cbrt",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Expm1 => "expm1",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Log1p => "log1p",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Fabs | MathFn::Abs => "fabs",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::Trunc => "trunc",
            MathFn::Fmod => "fmod",
            MathFn::Fmin => "fmin",
            MathFn::Fmax => "fmax",
            MathFn::Hypot => "hypot",
            MathFn::Copysign => "copysign",
            MathFn::Erf => "erf",
        };
        let suffix = if at == ScalarType::F32 { "f" } else { "" };
        let texts: Vec<String> = args
            .iter()
            .map(|&a| {
                let t = self.expr_as(a, at);
                strip_parens(&t).to_string()
            })
            .collect();
        convert(format!("{base}{suffix}({})", texts.join(", ")), at, ty)
    }
}

fn bit_atomic(op: AtomicOp) -> &'static str {
    match op {
        AtomicOp::BitAnd => "atomicAnd",
        AtomicOp::BitOr => "atomicOr",
        _ => "atomicXor",
    }
}

/// C computes arithmetic on types narrower than `int` in `int`: cast the result back.
fn narrow(ty: ScalarType, text: String) -> String {
    if ty.size_bytes() < 4 && !ty.is_float() { format!("(({}){text})", cuda_type(ty)) } else { text }
}

/// `text` in parentheses unless it already is one parenthesised group or a plain name,
/// literal, element or call.
fn parens(text: &str) -> String {
    if is_atom(text) || is_grouped(text) { text.to_string() } else { format!("({text})") }
}

fn is_atom(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Whether `text` is `( ... )` with the outer parentheses matching each other.
fn is_grouped(text: &str) -> bool {
    if !text.starts_with('(') || !text.ends_with(')') {
        return false;
    }
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i + 1 != text.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// `text` without one outer pair of parentheses (for statement-level expressions), unless
/// they belong to a cast (`(int)x` must keep its shape: `((int)x)` is returned as `(int)x`).
fn strip_parens(text: &str) -> &str {
    if is_grouped(text) { &text[1..text.len() - 1] } else { text }
}

#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(test)]
pub(crate) mod tests;
