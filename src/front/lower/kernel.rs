//! The builder of one kernel (or `routine seq` function) body: resolves names against kernel
//! locals first and the host scope second (host values become params bound to region args),
//! types expressions with C's conversions, and lowers statements to the IR.

use std::collections::{HashMap, HashSet};

use crate::diag::{Diagnostic, Span};
use crate::front::linkage::{Definitions, FunctionKey};
use crate::front::ast::{self, BinaryOp as AB, DirectiveKind, ExprKind as AE, ReductionOp, StmtKind, UnaryOp as AU};
use crate::front::sema::{self, ArrayLen, CType, Sema, Symbol, VarInfo};
use crate::source::SourceSet;
use crate::ir::{
    ArrayRef, Axis, BinaryOp, Block, Body, Expr, ExprKind, Handle, HostArg, HostArgKind, Local, LocalKind, LoopRange,
    MathFn, Param, ParamKind, Reduction, ScalarType, SharedArray, Stmt, UnaryOp,
};

use super::loops::{self, Cmp};

pub use complex::is_complex_function;

mod complex;
mod effects;
mod expr;
mod pointers;
mod stmt;
mod structs;
mod switch;

/// A `routine seq` function callers may call: its index in `Module::functions`.
#[derive(Clone, Debug)]
pub struct RoutineInfo {
    pub index: usize,
    /// Its type as its own file declares it at its definition, for a call that file's code
    /// makes in a kernel of another file (through an inlined routine), where the kernel's scope
    /// may not know it or may know another function of that name, and for a call through a
    /// declaration without parameter types (see `routines::add_signatures`).
    pub signature: Option<CType>,
}

/// What the program around a kernel offers: sources, the host scope at the construct, the
/// device functions, the functions the program defines.
pub struct Context<'a> {
    pub sources: &'a SourceSet,
    pub routines: &'a HashMap<FunctionKey, RoutineInfo>,
    /// `routine seq` functions with array parameters, inlined at each call.
    pub inline_routines: &'a HashMap<FunctionKey, &'a ast::FunctionDef>,
    /// Every function the program defines: a call is resolved in the file it is written in.
    pub definitions: &'a Definitions<'a>,
    /// The translation unit whose scope the builder's `sema` is (the construct's or the
    /// routine's file).
    pub unit: u32,
}

/// Whether the body runs once per iteration of a parallel space or once in total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Parallel,
    Single,
    /// A `routine seq` function body.
    Function,
}

/// How a clause (or the `kernels` analysis) makes a host scalar local to the kernel.
#[derive(Clone, Debug)]
pub enum Treatment {
    Private,
    FirstPrivate,
    Reduction(ReductionOp, Span),
    /// `private(c[lo:len])` / `firstprivate(...)` of an array the kernel cannot hold in a local
    /// array (a pointer section, or a firstprivate array): a copy per iteration in a buffer.
    PrivateArray { first: bool, section: Box<ast::DataRef> },
    /// `reduction(op:a)` or `reduction(op:a[lo:len])` on an array: its element updates become
    /// atomics on the array (`atomic.rs`).
    ArrayReduction(ReductionOp, Span),
    /// A host scalar that every iteration which assigns it gives the same value, and that the
    /// loop does not read (`stop = true;`, `if (i == 0) on_device = ...;`): the iterations
    /// store the value into the host variable's memory itself, one element seen as an array.
    /// Their stores race, but between equal values, so whichever lands last leaves the value
    /// the sequential program leaves (or the variable as it was, when no iteration assigns it).
    SameValue,
}

/// Where the iterations' copies of a private array live: the buffer param and the local that
/// holds the offset of this iteration's copy minus the section's start (so the copy of
/// element `j` is `buffer[base + j]`).
#[derive(Clone, Copy, Debug)]
pub struct PrivateCopies {
    pub buffer: u32,
    pub base: Handle<Local>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BreakTarget {
    Loop,
    /// A switch lowered as a chain of `if`s (every case ends with `break`): `break` only ends
    /// a case.
    Switch,
    /// A switch lowered as a one-trip loop (cases fall through, `break` anywhere): `break`
    /// leaves that loop; `continue` sets the switch's flag in `switch_continues` first.
    SwitchLoop,
    /// The body of one parallel iteration: `continue` ends the iteration, `break` is refused.
    Iteration,
}

/// `default(none)`: the names that have a clause.
#[derive(Clone, Debug, Default)]
pub struct DefaultNone {
    pub span: Option<Span>,
    pub named: HashSet<String>,
}

pub struct KernelBuilder<'a> {
    cx: &'a Context<'a>,
    pub sema: Sema,
    pub args: &'a mut Vec<HostArg>,
    pub body: Body,
    pub params: Vec<Param>,
    pub(super) param_keys: HashMap<String, u32>,
    scopes: Vec<HashMap<String, Binding>>,
    pub(super) host_locals: HashMap<String, Handle<Local>>,
    pub treatments: HashMap<String, Treatment>,
    /// Private arrays of a parallel loop, by name (see [`Treatment::PrivateArray`]).
    pub private_arrays: HashMap<String, PrivateCopies>,
    pub reductions: Vec<Reduction>,
    pub scalar_outputs: Vec<(Handle<Local>, u32)>,
    pub mode: Mode,
    /// Names the lowered statements assign (decided before lowering).
    pub written: HashSet<String>,
    /// Host scalars used as sequential loop counters inside the kernel: private per iteration.
    pub loop_vars: HashSet<String>,
    breaks: Vec<BreakTarget>,
    /// One entry per `BreakTarget::SwitchLoop` in `breaks`: the flag a `continue` inside that
    /// switch sets, made when the first one is lowered.
    switch_continues: Vec<Option<Handle<Local>>>,
    pub errors: Vec<Diagnostic>,
    pub default_none: DefaultNone,
    reported: HashSet<String>,
    /// Set when a `continue` ends a parallel iteration (the body is wrapped in a one-trip loop).
    pub iteration_continue: bool,
    pub function_result: Option<ScalarType>,
    /// Lowering parallel loop bounds: host scalars are read as params (their values at launch),
    /// whatever clause makes them local in the body.
    pub reading_bounds: bool,
    /// Statements an expression needs run before the statement that holds it (inlined calls).
    pending: Vec<Stmt>,
    inline_frames: Vec<InlineFrame>,
    /// Calls inlined so far (at most [`MAX_INLINED_CALLS`]).
    inlined_calls: usize,
    /// The kernel's pointer locals (and inlined routines' pointer parameters), by
    /// [`Binding::Pointer`].
    pointers: Vec<pointers::PointerLocal>,
    /// The kernel's local arrays of structs: the struct and the array's dimensions.
    struct_arrays: Vec<(usize, Vec<u32>)>,
    /// Memo of [`KernelBuilder::pointer_depth`], by node address.
    pointer_nodes: HashMap<(usize, Span), Option<usize>>,
    /// What the statements being lowered assign to plain names (`walk::assigned_values`),
    /// which tells a pointer's object where a use precedes its assignment in the text.
    assigned_values: HashMap<String, Vec<ast::Expr>>,
    /// Pointer locals whose object is being inferred (a value that reads the pointer itself
    /// tells nothing).
    inferring: HashSet<usize>,
    /// How deep `stmt` calls nest (the outermost one scans its statement's assignments).
    stmt_depth: usize,
    /// Lowering the element an atomic or a reduction update writes (reduction arrays allowed).
    pub(super) reduction_update_target: bool,
    /// Which expression nodes have a complex type (see `complex::is_complex`), by address.
    complex_nodes: HashMap<(usize, Span), bool>,
    /// Host complex variables named in the kernel, and how the kernel sees them.
    host_complexes: HashMap<String, complex::HostComplex>,
    /// Lowering a MESI-CUDA kernel written per thread: the built-in indices are the grid's,
    /// `__syncthreads()` is a barrier, `__shared__` arrays are the block's.
    pub per_thread: bool,
    /// Its `__shared__` arrays, and their names.
    pub block_shared: Vec<SharedArray>,
    block_shared_names: HashMap<String, u32>,
}

/// What a name declared in the kernel stands for.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Local(Handle<Local>),
    /// A struct local (index into `Sema::structs`): its members are bound as `name.member`.
    Struct(usize),
    /// A complex local: the locals of its parts, and the parts' format (for `sizeof`).
    Complex { re: Handle<Local>, im: Handle<Local>, format: ScalarType },
    /// A pointer local (index into `KernelBuilder::pointers`).
    Pointer(usize),
    /// A local array of structs (index into `KernelBuilder::struct_arrays`): its members are
    /// bound as `name.member` to local arrays with the array's dimensions first.
    StructArray(usize),
}

/// A named array as the kernel indexes it: the array, how many subscripts its elements take,
/// and their format.
#[derive(Clone, Debug)]
pub(super) struct ArrayView {
    pub array: ArrayRef,
    pub ndims: usize,
    pub elem: ScalarType,
}

/// A call being inlined: where `return` puts the value and the flag that ends the body.
struct InlineFrame {
    result: Option<InlineResult>,
    done: Handle<Local>,
    /// The routine being inlined (its definition, by address), so that a call of a routine
    /// already on the stack is refused as recursion at once.
    routine: *const ast::FunctionDef,
}

/// Where an inlined call's `return` puts what it returns.
#[derive(Clone, Debug)]
enum InlineResult {
    Number(Handle<Local>, ScalarType),
    /// A pointer local (index into `KernelBuilder::pointers`).
    Pointer(usize),
    /// A struct local of this name and struct.
    Struct(String, usize),
}

/// How deep inlined calls may nest.
const MAX_INLINE_DEPTH: usize = 8;

/// How many calls one kernel may inline in all. Without a bound, routines that each call the
/// next several times multiply: eight levels of 49 calls are 49^8 bodies.
const MAX_INLINED_CALLS: usize = 10_000;

/// Where an assignment stores.
#[derive(Clone, Debug)]
pub(super) enum Target {
    Local(Handle<Local>),
    Element { array: ArrayRef, indices: Vec<Handle<Expr>>, ty: ScalarType },
}

pub(super) type R<T> = Result<T, Diagnostic>;

pub(super) fn err(span: Span, msg: impl Into<String>, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(span, msg).with_help(help)
}

/// Functions of the OpenACC API a kernel evaluates itself (on the host they stay library
/// calls), and the barrier of a MESI-CUDA kernel written per thread.
pub fn is_device_builtin(name: &str) -> bool {
    name == "acc_on_device" || name == "__syncthreads"
}

/// `math.h` names: the function, its arity, and the type it computes in.
pub fn math_function(name: &str) -> Option<(MathFn, usize, ScalarType)> {
    use MathFn::*;
    let (base, ty) = match name {
        "abs" => return Some((Abs, 1, ScalarType::I32)),
        "labs" | "llabs" => return Some((Abs, 1, ScalarType::I64)),
        n if n.ends_with('f') && n != "erf" => (&n[..n.len() - 1], ScalarType::F32),
        n => (n, ScalarType::F64),
    };
    let (f, arity) = match base {
        "sqrt" => (Sqrt, 1),
        "cbrt" => (Cbrt, 1),
        "exp" => (Exp, 1),
        "exp2" => (Exp2, 1),
        "expm1" => (Expm1, 1),
        "log" => (Log, 1),
        "log2" => (Log2, 1),
        "log10" => (Log10, 1),
        "log1p" => (Log1p, 1),
        "pow" => (Pow, 2),
        "sin" => (Sin, 1),
        "cos" => (Cos, 1),
        "tan" => (Tan, 1),
        "asin" => (Asin, 1),
        "acos" => (Acos, 1),
        "atan" => (Atan, 1),
        "atan2" => (Atan2, 2),
        "sinh" => (Sinh, 1),
        "cosh" => (Cosh, 1),
        "tanh" => (Tanh, 1),
        "fabs" => (Fabs, 1),
        "floor" => (Floor, 1),
        "ceil" => (Ceil, 1),
        "round" => (Round, 1),
        "trunc" => (Trunc, 1),
        "fmod" => (Fmod, 2),
        "fmin" => (Fmin, 2),
        "fmax" => (Fmax, 2),
        "hypot" => (Hypot, 2),
        "copysign" => (Copysign, 2),
        "erf" => (Erf, 1),
        _ => return None,
    };
    if name == "erff" {
        return Some((Erf, 1, ScalarType::F32));
    }
    Some((f, arity, ty))
}

impl<'a> KernelBuilder<'a> {
    pub fn new(cx: &'a Context<'a>, sema: Sema, args: &'a mut Vec<HostArg>, mode: Mode) -> KernelBuilder<'a> {
        KernelBuilder {
            cx,
            sema,
            args,
            body: Body::default(),
            params: Vec::new(),
            param_keys: HashMap::new(),
            scopes: vec![HashMap::new()],
            host_locals: HashMap::new(),
            treatments: HashMap::new(),
            private_arrays: HashMap::new(),
            reductions: Vec::new(),
            scalar_outputs: Vec::new(),
            mode,
            written: HashSet::new(),
            loop_vars: HashSet::new(),
            breaks: Vec::new(),
            switch_continues: Vec::new(),
            errors: Vec::new(),
            default_none: DefaultNone::default(),
            reported: HashSet::new(),
            iteration_continue: false,
            function_result: None,
            reading_bounds: false,
            pending: Vec::new(),
            inline_frames: Vec::new(),
            inlined_calls: 0,
            pointers: Vec::new(),
            pointer_nodes: HashMap::new(),
            struct_arrays: Vec::new(),
            assigned_values: HashMap::new(),
            inferring: HashSet::new(),
            stmt_depth: 0,
            reduction_update_target: false,
            complex_nodes: HashMap::new(),
            host_complexes: HashMap::new(),
            per_thread: false,
            block_shared: Vec::new(),
            block_shared_names: HashMap::new(),
        }
    }

    /// In a kernel written per thread, `threadIdx.x` and the other built-in indices: the
    /// grid's index they name.
    pub(super) fn grid_builtin(&self, e: &ast::Expr) -> Option<ExprKind> {
        if !self.per_thread {
            return None;
        }
        let ast::ExprKind::Member { base, field, arrow: false } = &e.kind else { return None };
        let ast::ExprKind::Ident(name) = &base.kind else { return None };
        let axis = match field.as_str() {
            "x" => Axis::X,
            "y" => Axis::Y,
            "z" => Axis::Z,
            _ => return None,
        };
        match name.as_str() {
            "threadIdx" => Some(ExprKind::ThreadIdx(axis)),
            "blockIdx" => Some(ExprKind::BlockIdx(axis)),
            "blockDim" => Some(ExprKind::BlockDim(axis)),
            "gridDim" => Some(ExprKind::GridDim(axis)),
            _ => None,
        }
    }

    /// A `__shared__` array declared in a kernel written per thread.
    pub(super) fn declare_block_shared(&mut self, name: &str, dims: Vec<u32>, elem: ScalarType) {
        let index = self.block_shared.len() as u32;
        self.block_shared.push(SharedArray { name: name.to_string(), elem, dims });
        self.block_shared_names.insert(name.to_string(), index);
    }

    /// The block's shared array a name stands for, with its element type and rank.
    pub(super) fn block_shared_array(&self, name: &str) -> Option<(u32, ScalarType, usize)> {
        let index = *self.block_shared_names.get(name)?;
        let array = &self.block_shared[index as usize];
        Some((index, array.elem, array.dims.len()))
    }

    pub(super) fn text(&self, span: Span) -> String {
        self.cx.sources.text(span).split_whitespace().collect::<Vec<_>>().join(" ")
    }

    pub(super) fn sources(&self) -> &'a SourceSet {
        self.cx.sources
    }

    /// The text of a host expression as a dedup key (whitespace removed).
    fn key(&self, span: Span) -> String {
        self.cx.sources.text(span).chars().filter(|c| !c.is_whitespace()).collect()
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
        self.sema.push_scope();
    }
    pub fn pop_scope(&mut self) {
        self.scopes.pop();
        self.sema.pop_scope();
    }

    pub fn bind(&mut self, name: &str, local: Handle<Local>) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), Binding::Local(local));
        }
    }

    fn binding(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// The local a name declared in the kernel stands for (`None` for a struct local).
    pub(super) fn kernel_local(&self, name: &str) -> Option<Handle<Local>> {
        match self.binding(name) {
            Some(Binding::Local(l)) => Some(l),
            _ => None,
        }
    }

    /// The struct of a struct local declared in the kernel.
    pub(super) fn kernel_struct(&self, name: &str) -> Option<usize> {
        match self.binding(name) {
            Some(Binding::Struct(i)) => Some(i),
            _ => None,
        }
    }

    /// Whether the name is declared in the kernel (rather than a host name).
    pub(super) fn is_kernel_name(&self, name: &str) -> bool {
        self.binding(name).is_some()
    }

    pub fn new_local(&mut self, name: &str, ty: ScalarType, kind: LocalKind, span: Span) -> Handle<Local> {
        self.body.locals.append(Local { name: name.to_string(), ty, array_dims: None, kind, span })
    }

    pub fn add(&mut self, kind: ExprKind, ty: ScalarType, span: Span) -> Handle<Expr> {
        self.body.add_expr(kind, ty, span)
    }

    pub fn ty(&self, h: Handle<Expr>) -> ScalarType {
        self.body.exprs[h].ty
    }

    pub fn cast(&mut self, h: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        let e = &self.body.exprs[h];
        if e.ty == ty {
            return h;
        }
        // Conversion to `_Bool` is a test against zero (C11 6.3.1.2), not a truncation.
        if ty == ScalarType::Bool {
            return self.truth(h);
        }
        let span = e.span;
        // Fold casts of integer constants so trip counts and bounds stay readable.
        if let ExprKind::ConstInt(v) = e.kind {
            if !ty.is_float() {
                return self.add(ExprKind::ConstInt(sema::wrap_int(v, ty)), ty, span);
            }
            return self.add(ExprKind::ConstFloat(v as f64), ty, span);
        }
        self.add(ExprKind::Cast { arg: h }, ty, span)
    }

    pub fn int_const(&mut self, v: i64, ty: ScalarType) -> Handle<Expr> {
        self.add(ExprKind::ConstInt(v), ty, Span::default())
    }

    fn zero_of(&mut self, ty: ScalarType) -> Handle<Expr> {
        if ty.is_float() { self.add(ExprKind::ConstFloat(0.0), ty, Span::default()) } else { self.int_const(0, ty) }
    }

    /// A condition as `Bool` (`x` becomes `x != 0`).
    pub fn truth(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        let ty = self.ty(h);
        if ty == ScalarType::Bool {
            return h;
        }
        let span = self.body.exprs[h].span;
        let zero = self.zero_of(ty);
        self.add(ExprKind::Binary { op: BinaryOp::Ne, lhs: h, rhs: zero }, ScalarType::Bool, span)
    }

    pub fn binary(&mut self, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>, ty: ScalarType, span: Span) -> Handle<Expr> {
        self.add(ExprKind::Binary { op, lhs: a, rhs: b }, ty, span)
    }

    pub(super) fn add_arg(&mut self, arg: HostArg) -> u32 {
        if let Some(i) = self.args.iter().position(|a| a.c_expr == arg.c_expr && a.kind == arg.kind) {
            return i as u32;
        }
        self.args.push(arg);
        (self.args.len() - 1) as u32
    }

    pub(super) fn check_default_none(&mut self, root: &str, span: Span) {
        if self.default_none.span.is_some() && !self.default_none.named.contains(root) && self.reported.insert(format!("dn:{root}")) {
            self.errors.push(err(
                span,
                format!("`{root}` has no data clause, and default(none) requires one"),
                format!("add `{root}` to a data clause (copy, copyin, present, ...) or to private/firstprivate"),
            ));
        }
    }

    /// [`Self::check_default_none`] for a host scalar the construct reads and never assigns:
    /// strictly a violation, but its meaning is not in doubt (firstprivate, the host's value),
    /// so it is a warning. Test suites and older compilers' users name loop bounds such as a
    /// global `n` under `default(none)` without a clause; gcc builds them.
    pub(super) fn check_default_none_read(&mut self, root: &str, span: Span) {
        if self.written.contains(root) {
            return self.check_default_none(root, span);
        }
        if self.default_none.span.is_some() && !self.default_none.named.contains(root) && self.reported.insert(format!("dn:{root}")) {
            self.errors.push(
                Diagnostic::warning(span, format!("`{root}` has no data clause, and default(none) requires one; the construct reads it, so it is firstprivate"))
                    .with_help(format!("add firstprivate({root}) (or `{root}` to a data clause)")),
            );
        }
    }

    pub fn scalar_param(&mut self, key: &str, ty: ScalarType) -> u32 {
        if let Some(&p) = self.param_keys.get(key) {
            return p;
        }
        let kind = if ty.is_float() { HostArgKind::Float } else { HostArgKind::Int };
        let arg = self.add_arg(HostArg { c_expr: key.to_string(), kind, size_expr: None });
        self.params.push(Param { name: key.to_string(), kind: ParamKind::Scalar(ty), arg });
        let p = (self.params.len() - 1) as u32;
        self.param_keys.insert(key.to_string(), p);
        p
    }

    /// The array param for a host array or pointer (`key` is its C text).
    fn array_param(&mut self, key: &str, info: &VarInfo, span: Span) -> R<u32> {
        self.array_param_as(key, key, info, span)
    }

    /// The array param for the host array or pointer whose C text is `key`, seen with the type
    /// in `info` (an array of structs is seen as rows of one member type); `map_key` tells
    /// apart several views of one host array.
    fn array_param_as(&mut self, key: &str, map_key: &str, info: &VarInfo, span: Span) -> R<u32> {
        if let Some(&p) = self.param_keys.get(map_key) {
            return Ok(p);
        }
        let (first, rest) = match &info.ty {
            CType::Pointer { to, .. } => (None, &**to),
            CType::Array { elem, len } => (Some(len.clone()), &**elem),
            _ => return Err(err(span, format!("`{key}` is not an array or a pointer"), "index only arrays and pointers")),
        };
        // `double **a` or `double *a[N]`: a table of row pointers, indexed `a[i][j]`.
        if let CType::Pointer { to: row, .. } = rest
            && let Some(elem) = row.element_scalar()
        {
            if elem == ScalarType::F80 {
                long_double_format(span)?;
            }
            let size_expr = matches!(info.ty, CType::Array { len: ArrayLen::Const(_) | ArrayLen::Var(_), .. }).then(|| format!("sizeof({key})"));
            let arg = self.add_arg(HostArg { c_expr: key.to_string(), kind: HostArgKind::Pointer, size_expr });
            self.params.push(Param { name: key.to_string(), kind: ParamKind::RowTable { elem, read_only: info.is_const }, arg });
            let p = (self.params.len() - 1) as u32;
            self.param_keys.insert(map_key.to_string(), p);
            return Ok(p);
        }
        let mut lens = Vec::new();
        let mut cur = rest;
        loop {
            match cur {
                CType::Array { elem, len } => {
                    lens.push(len.clone());
                    cur = elem;
                }
                CType::Scalar(_) | CType::Complex(_) => break,
                CType::Pointer { .. } => {
                    return Err(err(
                        span,
                        format!("`{key}` is an array of pointers; kernels can only index contiguous arrays"),
                        "allocate one contiguous block and index it as a[i*n + j]",
                    ));
                }
                _ => {
                    return Err(err(
                        span,
                        format!("the elements of `{key}` are not numbers"),
                        "kernels can index arrays of numbers only; split structs into arrays of their fields",
                    ));
                }
            }
        }
        // An array of complex numbers is seen as rows of 2 parts (real, imaginary).
        let (elem, complex) = match cur {
            CType::Complex(f) => (Some(*f), true),
            _ => (cur.element_scalar(), false),
        };
        let Some(elem) = elem else { return Err(err(span, format!("`{key}` has no element type"), "index arrays of numbers")) };
        if elem == ScalarType::F80 {
            long_double_format(span)?;
        }
        let mut dims = Vec::new();
        dims.push(match first {
            Some(ArrayLen::Const(n)) => Some(self.int_const(n as i64, ScalarType::I64)),
            _ => None,
        });
        for len in lens {
            let d = match len {
                ArrayLen::Const(n) => self.int_const(n as i64, ScalarType::I64),
                ArrayLen::Var(e) => {
                    let h = self.expr(&e)?;
                    if !self.is_uniform(h) {
                        return Err(err(e.span, "the array's dimension is not a host value", "use a dimension the host knows"));
                    }
                    self.cast(h, ScalarType::I64)
                }
                ArrayLen::Unknown => {
                    return Err(err(span, format!("an inner dimension of `{key}` has no length"), "give every dimension but the first a length"));
                }
            };
            dims.push(Some(d));
        }
        if complex {
            dims.push(Some(self.int_const(2, ScalarType::I64)));
        }
        // An array object (static, local or VLA) has a size the host can take; a pointer has not.
        let size_expr = match info.ty {
            CType::Array { len: ArrayLen::Const(_) | ArrayLen::Var(_), .. } => Some(format!("sizeof({key})")),
            _ => None,
        };
        let arg = self.add_arg(HostArg { c_expr: key.to_string(), kind: HostArgKind::Pointer, size_expr });
        self.params.push(Param {
            name: key.to_string(),
            kind: ParamKind::Array { elem, dims, restrict: info.restrict, read_only: info.is_const },
            arg,
        });
        let p = (self.params.len() - 1) as u32;
        self.param_keys.insert(map_key.to_string(), p);
        Ok(p)
    }

    /// True when the expression only reads params and constants (a launch-time value).
    pub fn is_uniform(&self, h: Handle<Expr>) -> bool {
        let e = &self.body.exprs[h];
        match &e.kind {
            ExprKind::ConstInt(_) | ExprKind::ConstFloat(_) | ExprKind::Param(_) => true,
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => self.is_uniform(*arg),
            ExprKind::Binary { lhs, rhs, .. } => self.is_uniform(*lhs) && self.is_uniform(*rhs),
            ExprKind::Select { cond, then, otherwise } => self.is_uniform(*cond) && self.is_uniform(*then) && self.is_uniform(*otherwise),
            ExprKind::Math { args, .. } => args.iter().all(|a| self.is_uniform(*a)),
            _ => false,
        }
    }

    /// Makes `name` (a `private`/`firstprivate` array section `r` of a parallel loop) a copy
    /// per iteration: a buffer of `host_iterations` (C text: the parallel iterations, which the
    /// host evaluates at the construct) times the section's length, allocated by the host
    /// through the runtime's tracked `malloc` and reused by later launches. `iteration` is the
    /// linear index of the running iteration. Appends to `out` the statements that compute this
    /// iteration's offset and, for `firstprivate`, copy the section in.
    pub fn private_array(
        &mut self,
        name: &str,
        first: bool,
        r: &ast::DataRef,
        iteration: Handle<Expr>,
        host_iterations: &str,
        out: &mut Block,
    ) -> R<()> {
        let Some(info) = self.host_var(name) else {
            return Err(err(r.span, format!("undeclared variable `{name}` in a private clause"), "declare the variable before the construct"));
        };
        let one_dim = |help: &str| err(r.span, format!("the private array `{name}` must be a one-dimensional array of numbers"), help.to_string());
        let (elem, whole_len) = match &info.ty {
            CType::Pointer { to, .. } => (to.element_scalar(), None),
            CType::Array { elem, len } => (elem.element_scalar(), match len { ArrayLen::Const(n) => Some(*n as i64), _ => None }),
            _ => (None, None),
        };
        let Some(elem) = elem else { return Err(one_dim("privatise a section of a one-dimensional array or pointer, such as c[0:n]")) };
        if elem == ScalarType::F80 {
            long_double_format(r.span)?;
        }
        let not_known = || err(r.span, format!("the section of `{name}` is not known when the loop starts"), "give a section of host values");
        self.reading_bounds = true;
        let parts = (|| -> R<(Handle<Expr>, Handle<Expr>, String)> {
            match (r.sections.as_slice(), whole_len) {
                ([], Some(n)) => Ok((self.int_const(0, ScalarType::I64), self.int_const(n, ScalarType::I64), n.to_string())),
                ([s], _) if !s.single && s.len.is_some() => {
                    let len_e = s.len.as_ref().expect("checked");
                    let lo = match &s.lo {
                        Some(lo) => {
                            // Bounds with side effects (an assignment) are no launch-time values.
                            let h = self.effect_free_expr(lo)?.ok_or_else(not_known)?;
                            self.cast(h, ScalarType::I64)
                        }
                        None => self.int_const(0, ScalarType::I64),
                    };
                    let len = self.effect_free_expr(len_e)?.ok_or_else(not_known)?;
                    let len = self.cast(len, ScalarType::I64);
                    Ok((lo, len, format!("({})", self.text(len_e.span))))
                }
                _ => Err(err(
                    r.span,
                    format!("cannot tell how many elements of `{name}` each iteration needs"),
                    format!("give the section: private({name}[0:n]) where n is the number of elements"),
                )),
            }
        })();
        self.reading_bounds = false;
        let (lo, len, len_text) = parts?;
        if !self.is_uniform(lo) || !self.is_uniform(len) {
            return Err(not_known());
        }
        let tag: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let c_expr = format!(
            "({{ static void *__yosegi_pv_{tag}; static long long __yosegi_pn_{tag}; \
             long long __yosegi_b = (long long)({host_iterations}) * (long long){len_text} * (long long)sizeof({name}[0]); \
             if (__yosegi_b < 1) __yosegi_b = 1; \
             if (__yosegi_b > __yosegi_pn_{tag}) {{ if (__yosegi_pv_{tag}) __yosegi_free(__yosegi_pv_{tag}); \
             __yosegi_pv_{tag} = __yosegi_malloc((size_t)__yosegi_b); __yosegi_pn_{tag} = __yosegi_b; }} __yosegi_pv_{tag}; }})"
        );
        let arg = self.add_arg(HostArg { c_expr: c_expr.clone(), kind: HostArgKind::Pointer, size_expr: None });
        self.params.push(Param {
            name: format!("{name}_private"),
            kind: ParamKind::Array { elem, dims: vec![None], restrict: true, read_only: false },
            arg,
        });
        let buffer = (self.params.len() - 1) as u32;
        self.param_keys.insert(c_expr, buffer);
        // base = iteration * len - lo
        let base = self.new_local(&format!("{name}_base"), ScalarType::I64, LocalKind::Var, r.span);
        let sp = r.span;
        let it = self.cast(iteration, ScalarType::I64);
        let start = self.binary(BinaryOp::Mul, it, len, ScalarType::I64, sp);
        let lo_again = self.copy_uniform(lo);
        let value = self.binary(BinaryOp::Sub, start, lo_again, ScalarType::I64, sp);
        out.push(Stmt::Assign { local: base, value });
        if first {
            let original = self.array_param(name, &info, r.span)?;
            let j = self.new_local(&format!("{name}_j"), ScalarType::I64, LocalKind::Var, sp);
            let lo1 = self.copy_uniform(lo);
            out.push(Stmt::Assign { local: j, value: lo1 });
            let (lo2, len2) = (self.copy_uniform(lo), self.copy_uniform(len));
            let end = self.binary(BinaryOp::Add, lo2, len2, ScalarType::I64, sp);
            let (lo3, len3) = (self.copy_uniform(lo), self.copy_uniform(len));
            let end2 = self.binary(BinaryOp::Add, lo3, len3, ScalarType::I64, sp);
            let jv = self.add(ExprKind::Local(j), ScalarType::I64, sp);
            let cond = self.binary(BinaryOp::Lt, jv, end2, ScalarType::Bool, sp);
            let (b1, j1) = (self.add(ExprKind::Local(base), ScalarType::I64, sp), self.add(ExprKind::Local(j), ScalarType::I64, sp));
            let at = self.binary(BinaryOp::Add, b1, j1, ScalarType::I64, sp);
            let j2 = self.add(ExprKind::Local(j), ScalarType::I64, sp);
            let load = self.add(ExprKind::Load { array: ArrayRef::Param(original), indices: vec![j2] }, elem.value_type(), sp);
            let j3 = self.add(ExprKind::Local(j), ScalarType::I64, sp);
            let one = self.int_const(1, ScalarType::I64);
            let next = self.binary(BinaryOp::Add, j3, one, ScalarType::I64, sp);
            let lo4 = self.copy_uniform(lo);
            out.push(Stmt::Loop {
                cond: Some(cond),
                test_first: true,
                body: vec![Stmt::Store { array: ArrayRef::Param(buffer), indices: vec![at], value: load, span: sp }],
                continuing: vec![Stmt::Assign { local: j, value: next }],
                range: Some(LoopRange { var: j, start: lo4, end, step: 1 }),
            });
        }
        self.private_arrays.insert(name.to_string(), PrivateCopies { buffer, base });
        Ok(())
    }

    /// A fresh copy of a uniform expression (params, constants and operators on them), so that
    /// no expression handle is shared between two places.
    pub(super) fn copy_uniform(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        let e = self.body.exprs[h].clone();
        let kind = match e.kind {
            ExprKind::Unary { op, arg } => ExprKind::Unary { op, arg: self.copy_uniform(arg) },
            ExprKind::Cast { arg } => ExprKind::Cast { arg: self.copy_uniform(arg) },
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary { op, lhs: self.copy_uniform(lhs), rhs: self.copy_uniform(rhs) },
            ExprKind::Select { cond, then, otherwise } => ExprKind::Select {
                cond: self.copy_uniform(cond),
                then: self.copy_uniform(then),
                otherwise: self.copy_uniform(otherwise),
            },
            ExprKind::Math { func, args } => ExprKind::Math { func, args: args.into_iter().map(|a| self.copy_uniform(a)).collect() },
            other => other,
        };
        self.add(kind, e.ty, e.span)
    }

    /// A host scalar named in the kernel: its param, or the local that stands for it.
    fn host_scalar(&mut self, name: &str, ty: ScalarType, span: Span, writing: bool) -> R<Handle<Expr>> {
        if self.reading_bounds && !writing {
            let p = self.scalar_param(name, ty);
            return Ok(self.add(ExprKind::Param(p), ty, span));
        }
        if let Some(&l) = self.host_locals.get(name) {
            return Ok(self.add(ExprKind::Local(l), self.body.locals[l].ty, span));
        }
        let local = match self.treatments.get(name).cloned() {
            Some(Treatment::Private) => Some(self.new_local(name, ty, LocalKind::Private, span)),
            Some(Treatment::FirstPrivate) => {
                let p = self.scalar_param(name, ty);
                Some(self.new_local(name, ty, LocalKind::FirstPrivate(p), span))
            }
            Some(Treatment::PrivateArray { .. }) => None,
            Some(Treatment::ArrayReduction(..)) => None,
            Some(Treatment::SameValue) => {
                return Err(err(span, format!("`{name}` is stored in place by the iterations and cannot be read in the loop"), "read it after the loop"));
            }
            Some(Treatment::Reduction(op, rspan)) => {
                if self.mode == Mode::Single {
                    Some(self.scalar_output(name, ty, span)?)
                } else {
                    let n = self.reductions.len() as u32;
                    let l = self.new_local(name, ty, LocalKind::Reduction(n), span);
                    let out = self.host_format(name, ty, span)?;
                    let arg = self.add_arg(HostArg { c_expr: format!("&({name})"), kind: HostArgKind::ScalarOut(out), size_expr: None });
                    self.reductions.push(Reduction { op, ty, local: l, target_arg: arg, span: rspan, part: None });
                    Some(l)
                }
            }
            None if self.written.contains(name) => match self.mode {
                Mode::Single | Mode::Function => Some(self.scalar_output(name, ty, span)?),
                Mode::Parallel if self.loop_vars.contains(name) => Some(self.new_local(name, ty, LocalKind::Private, span)),
                Mode::Parallel => {
                    if writing {
                        return Err(err(
                            span,
                            format!("`{name}` is assigned in a parallel loop but is shared by all iterations"),
                            format!("declare it inside the loop, or add private({name}) or reduction(op:{name})"),
                        ));
                    }
                    None
                }
            },
            None => None,
        };
        match local {
            Some(l) => {
                self.host_locals.insert(name.to_string(), l);
                Ok(self.add(ExprKind::Local(l), ty, span))
            }
            None => {
                let p = self.scalar_param(name, ty);
                Ok(self.add(ExprKind::Param(p), ty, span))
            }
        }
    }

    /// The element the iterations store a [`Treatment::SameValue`] scalar into: the host
    /// variable's own memory, seen as an array of one element.
    pub(super) fn in_place_scalar(&mut self, name: &str, ty: ScalarType, span: Span) -> R<Target> {
        let format = self.host_format(name, ty, span)?;
        let key = format!("&({name})");
        let p = match self.param_keys.get(&key) {
            Some(&p) => p,
            None => {
                let arg = self.add_arg(HostArg { c_expr: key.clone(), kind: HostArgKind::Pointer, size_expr: Some(format!("sizeof({name})")) });
                let one = self.int_const(1, ScalarType::I64);
                self.params.push(Param {
                    name: name.to_string(),
                    kind: ParamKind::Array { elem: format, dims: vec![Some(one)], restrict: true, read_only: false },
                    arg,
                });
                let p = (self.params.len() - 1) as u32;
                self.param_keys.insert(key, p);
                p
            }
        };
        let zero = self.int_const(0, ScalarType::I64);
        Ok(Target::Element { array: ArrayRef::Param(p), indices: vec![zero], ty })
    }

    fn scalar_output(&mut self, name: &str, ty: ScalarType, span: Span) -> R<Handle<Local>> {
        let p = self.scalar_param(name, ty);
        let l = self.new_local(name, ty, LocalKind::FirstPrivate(p), span);
        let out = self.host_format(name, ty, span)?;
        let arg = self.add_arg(HostArg { c_expr: format!("&({name})"), kind: HostArgKind::ScalarOut(out), size_expr: None });
        self.scalar_outputs.push((l, arg));
        Ok(l)
    }

    /// The memory format of the host scalar `name` whose value has type `ty` (`F80` for a
    /// `long double`), for the runtime to write it back.
    fn host_format(&self, name: &str, ty: ScalarType, span: Span) -> R<ScalarType> {
        let format = self.host_var(name).and_then(|v| v.ty.element_scalar()).unwrap_or(ty);
        if format == ScalarType::F80 {
            long_double_format(span)?;
        }
        Ok(format)
    }

    pub(super) fn host_var(&self, name: &str) -> Option<VarInfo> {
        self.sema.lookup_var(name).cloned()
    }
}

/// Kernels read and write the host's `long double` in the x87 extended format of x86-64
/// (`ScalarType::F80`); on another host its memory format is not one the runtime knows.
pub(super) fn long_double_format(span: Span) -> R<()> {
    if cfg!(target_arch = "x86_64") {
        return Ok(());
    }
    Err(err(
        span,
        "`long double` in memory a kernel reads or writes is supported on x86-64 hosts only",
        "use `double` (kernels compute `long double` as `double` anyway)",
    ))
}

/// Constant dimensions and element type of a local array type.
pub fn local_array_shape(ty: &CType) -> Option<(Vec<u32>, ScalarType)> {
    let mut dims = Vec::new();
    let mut cur = ty;
    while let CType::Array { elem, len } = cur {
        match len {
            ArrayLen::Const(n) => dims.push(u32::try_from(*n).ok()?),
            _ => return None,
        }
        cur = elem;
    }
    Some((dims, cur.scalar()?))
}
