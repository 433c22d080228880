//! The builder of one kernel (or `routine seq` function) body: resolves names against kernel
//! locals first and the host scope second (host values become params bound to region args),
//! types expressions with C's conversions, and lowers statements to the IR.

use std::collections::{HashMap, HashSet};

use crate::diag::{Diagnostic, Span};
use crate::front::ast::{self, BinaryOp as AB, DirectiveKind, ExprKind as AE, ReductionOp, StmtKind, UnaryOp as AU};
use crate::front::sema::{self, ArrayLen, CType, Sema, Symbol, VarInfo};
use crate::front::source::SourceSet;
use crate::ir::{
    ArrayRef, BinaryOp, Block, Body, Expr, ExprKind, Handle, HostArg, HostArgKind, Local, LocalKind, LoopRange,
    MathFn, Param, ParamKind, Reduction, ScalarType, Stmt, UnaryOp,
};

use super::loops::{self, Cmp};

/// A `routine seq` function callers may call: its index in `Module::functions`.
#[derive(Clone, Debug)]
pub struct RoutineInfo {
    pub index: usize,
}

/// What the program around a kernel offers: sources, the host scope at the construct, the
/// device functions, the functions the program defines.
pub struct Context<'a> {
    pub sources: &'a SourceSet,
    pub routines: &'a HashMap<String, RoutineInfo>,
    /// `routine seq` functions with array parameters, inlined at each call.
    pub inline_routines: &'a HashMap<String, &'a ast::FunctionDef>,
    pub defined_functions: &'a HashSet<String>,
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
    Switch,
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
    scopes: Vec<HashMap<String, Handle<Local>>>,
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
    /// Array parameters of inlined functions: the caller's arrays they stand for.
    aliases: HashMap<String, (ArrayRef, usize, ScalarType)>,
    /// Lowering the element an atomic or a reduction update writes (reduction arrays allowed).
    pub(super) reduction_update_target: bool,
}

/// A call being inlined: where `return` puts the value and the flag that ends the body.
struct InlineFrame {
    result: Option<(Handle<Local>, ScalarType)>,
    done: Handle<Local>,
}

/// How deep inlined calls may nest (recursion is refused past it).
const MAX_INLINE_DEPTH: usize = 8;

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

/// `math.h` names: the function, its arity, and the type it computes in.
/// Functions of the OpenACC API a kernel evaluates itself (on the host they stay library calls).
pub fn is_device_builtin(name: &str) -> bool {
    name == "acc_on_device"
}

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
            errors: Vec::new(),
            default_none: DefaultNone::default(),
            reported: HashSet::new(),
            iteration_continue: false,
            function_result: None,
            reading_bounds: false,
            pending: Vec::new(),
            inline_frames: Vec::new(),
            aliases: HashMap::new(),
            reduction_update_target: false,
        }
    }

    pub(super) fn text(&self, span: Span) -> String {
        self.cx.sources.text(span).split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The text of a host expression as a dedup key (whitespace removed).
    pub(super) fn sources(&self) -> &'a SourceSet {
        self.cx.sources
    }

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
            s.insert(name.to_string(), local);
        }
    }

    pub(super) fn kernel_local(&self, name: &str) -> Option<Handle<Local>> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
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
        if let Some(&p) = self.param_keys.get(key) {
            return Ok(p);
        }
        let (first, rest) = match &info.ty {
            CType::Pointer { to, .. } => (None, &**to),
            CType::Array { elem, len } => (Some(len.clone()), &**elem),
            _ => return Err(err(span, format!("`{key}` is not an array or a pointer"), "index only arrays and pointers")),
        };
        let mut lens = Vec::new();
        let mut cur = rest;
        loop {
            match cur {
                CType::Array { elem, len } => {
                    lens.push(len.clone());
                    cur = elem;
                }
                CType::Scalar(_) => break,
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
        let Some(elem) = cur.scalar() else { return Err(err(span, format!("`{key}` has no element type"), "index arrays of numbers")) };
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
        self.param_keys.insert(key.to_string(), p);
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
            Some(Treatment::Reduction(op, rspan)) => {
                if self.mode == Mode::Single {
                    Some(self.scalar_output(name, ty, span))
                } else {
                    let n = self.reductions.len() as u32;
                    let l = self.new_local(name, ty, LocalKind::Reduction(n), span);
                    let arg = self.add_arg(HostArg { c_expr: format!("&({name})"), kind: HostArgKind::ScalarOut(ty), size_expr: None });
                    self.reductions.push(Reduction { op, ty, local: l, target_arg: arg, span: rspan });
                    Some(l)
                }
            }
            None if self.written.contains(name) => match self.mode {
                Mode::Single | Mode::Function => Some(self.scalar_output(name, ty, span)),
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

    fn scalar_output(&mut self, name: &str, ty: ScalarType, span: Span) -> Handle<Local> {
        let p = self.scalar_param(name, ty);
        let l = self.new_local(name, ty, LocalKind::FirstPrivate(p), span);
        let arg = self.add_arg(HostArg { c_expr: format!("&({name})"), kind: HostArgKind::ScalarOut(ty), size_expr: None });
        self.scalar_outputs.push((l, arg));
        l
    }

    pub(super) fn host_var(&self, name: &str) -> Option<VarInfo> {
        self.sema.lookup_var(name).cloned()
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    pub fn expr(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        let span = e.span;
        match &e.kind {
            AE::Ident(name) => {
                if let Some(l) = self.kernel_local(name) {
                    let local = &self.body.locals[l];
                    if local.array_dims.is_some() {
                        return Err(err(span, format!("the array `{name}` is used as a value"), "index the array"));
                    }
                    return Ok(self.add(ExprKind::Local(l), local.ty, span));
                }
                match self.sema.lookup(name).cloned() {
                    Some(Symbol::EnumConst(v)) => Ok(self.add(ExprKind::ConstInt(v), ScalarType::I32, span)),
                    Some(Symbol::Var(info)) => {
                        self.check_default_none(name, span);
                        match info.ty.scalar() {
                            Some(ty) => self.host_scalar(name, ty, span, false),
                            None if info.ty.is_pointer_like() => Err(err(
                                span,
                                format!("`{name}` is used as a pointer value in a kernel"),
                                "index the array directly (a[i]); pointer arithmetic and pointer copies are not supported in kernels",
                            )),
                            None => Err(err(
                                span,
                                format!("`{name}` is a struct value; kernels only read struct fields"),
                                format!("use its numeric fields (`{name}.field`) in the kernel"),
                            )),
                        }
                    }
                    Some(Symbol::Function(_)) => Err(err(span, format!("function `{name}` used as a value"), "call it")),
                    Some(Symbol::Typedef(_)) | None => Err(err(span, format!("undeclared name `{name}`"), "declare it before the construct")),
                }
            }
            AE::IntLit { value, suffix, radix } => {
                let ty = sema::int_literal_type(*value, *suffix, *radix);
                Ok(self.add(ExprKind::ConstInt(*value as i64), ty, span))
            }
            AE::FloatLit { value, single, long_double } => {
                if *long_double {
                    self.warn_once(span, "`long double` constants are computed as `double`");
                }
                let ty = if *single { ScalarType::F32 } else { ScalarType::F64 };
                Ok(self.add(ExprKind::ConstFloat(*value), ty, span))
            }
            AE::CharLit(c) => Ok(self.add(ExprKind::ConstInt(*c), ScalarType::I32, span)),
            AE::StringLit(_) => Err(err(span, "string literals cannot be used in kernels", "compute with numbers in kernels; print on the host")),
            AE::Unary { op, operand } => self.unary(*op, operand, span),
            AE::Binary { op, lhs, rhs } => self.binary_expr(*op, lhs, rhs, span),
            AE::Assign { .. } => Err(err(
                span,
                "assignment inside an expression is not supported in kernels",
                "write the assignment as a statement of its own",
            )),
            AE::Conditional { cond, then, otherwise } => {
                let c = self.expr(cond)?;
                let c = self.truth(c);
                let a = self.expr(then)?;
                let b = self.expr(otherwise)?;
                let ty = sema::common_type(self.ty(a), self.ty(b));
                let (a, b) = (self.cast(a, ty), self.cast(b, ty));
                Ok(self.add(ExprKind::Select { cond: c, then: a, otherwise: b }, ty, span))
            }
            AE::Cast { ty, expr } => {
                let target = self.sema.declared_type(&ty.specs, &ty.declarator)?;
                let inner = self.expr(expr)?;
                match target {
                    CType::Scalar(t) => Ok(self.cast(inner, t)),
                    CType::Void => Ok(inner),
                    _ => Err(err(span, "casts to pointer or struct types are not supported in kernels", "cast only between number types in kernels")),
                }
            }
            AE::SizeofType(tn) => {
                let t = self.sema.declared_type(&tn.specs, &tn.declarator)?;
                let size = self.sema.size_align(&t).map(|(s, _)| s);
                match size {
                    Some(s) => Ok(self.add(ExprKind::ConstInt(s as i64), ScalarType::U64, span)),
                    None => Err(err(span, "this type has no size known at compile time", "use sizeof on a complete type")),
                }
            }
            AE::SizeofExpr(inner) => {
                let size = match &inner.kind {
                    AE::Ident(n) if self.kernel_local(n).is_none() => self.host_var(n).and_then(|v| self.sema.size_align(&v.ty)).map(|(s, _)| s),
                    _ => None,
                };
                let size = match size {
                    Some(s) => s,
                    None => {
                        let h = self.expr(inner)?;
                        self.ty(h).size_bytes() as u64
                    }
                };
                Ok(self.add(ExprKind::ConstInt(size as i64), ScalarType::U64, span))
            }
            AE::Call { callee, args } => self.call(callee, args, span),
            AE::Index { .. } => {
                let host_only = self.reading_bounds && self.mentions_only_host_names(e);
                let (array, indices, ty) = self.element(e)?;
                if host_only {
                    // A loop bound read from a host array element: the host evaluates it at launch.
                    let p = self.scalar_param(&self.key(span), ty);
                    return Ok(self.add(ExprKind::Param(p), ty, span));
                }
                Ok(self.add(ExprKind::Load { array, indices }, ty, span))
            }
            AE::Member { .. } => {
                let (key, ty) = self.member_chain(e)?;
                match ty.scalar() {
                    Some(t) => {
                        let p = self.scalar_param(&key, t);
                        Ok(self.add(ExprKind::Param(p), t, span))
                    }
                    None => Err(err(span, format!("`{key}` is not a number"), "use numeric fields, or index pointer fields")),
                }
            }
            AE::CompoundLiteral { .. } => Err(err(span, "compound literals are not supported in kernels", "declare a local variable instead")),
        }
    }

    /// Every name in `e` is a host variable (none is a kernel local or a loop index).
    fn mentions_only_host_names(&self, e: &ast::Expr) -> bool {
        let mut names = Vec::new();
        crate::front::lower::walk::expr_tree(e, &mut |x| {
            if let AE::Ident(n) = &x.kind {
                names.push(n.clone());
            }
        });
        names.iter().all(|n| self.kernel_local(n).is_none() && !self.host_locals.contains_key(n.as_str()) && !self.aliases.contains_key(n.as_str()))
    }

    fn warn_once(&mut self, span: Span, msg: &str) {
        if self.reported.insert(format!("w:{msg}")) {
            self.errors.push(Diagnostic::warning(span, msg).with_help("use `double`"));
        }
    }

    fn unary(&mut self, op: AU, operand: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        match op {
            AU::Neg | AU::BitNot | AU::Plus => {
                let a = self.expr(operand)?;
                let ty = sema::promote(self.ty(a));
                if op == AU::BitNot && ty.is_float() {
                    return Err(err(span, "`~` needs an integer operand", "apply `~` to integers only"));
                }
                let a = self.cast(a, ty);
                if op == AU::Plus {
                    return Ok(a);
                }
                let op = if op == AU::Neg { UnaryOp::Neg } else { UnaryOp::BitNot };
                Ok(self.add(ExprKind::Unary { op, arg: a }, ty, span))
            }
            AU::Not => {
                let a = self.expr(operand)?;
                let a = self.truth(a);
                Ok(self.add(ExprKind::Unary { op: UnaryOp::Not, arg: a }, ScalarType::Bool, span))
            }
            AU::Deref => {
                let (array, indices, ty) = self.deref(operand, span)?;
                Ok(self.add(ExprKind::Load { array, indices }, ty, span))
            }
            AU::AddrOf => Err(err(span, "taking an address (`&`) is not supported in kernels", "index arrays directly and pass values, not addresses")),
            AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec => Err(err(
                span,
                "increment inside an expression is not supported in kernels",
                "write the increment as a statement of its own",
            )),
        }
    }

    /// `*(p + i)`, `*(i + p)`, `*p`: the element of a one-dimensional array param.
    fn deref(&mut self, operand: &ast::Expr, span: Span) -> R<(ArrayRef, Vec<Handle<Expr>>, ScalarType)> {
        // `p + a + b` (in any order): one term is the pointer, the others sum to the index.
        let mut terms = Vec::new();
        flatten_sum(operand, &mut terms);
        if let Some(t) = terms.iter().find(|t| matches!(t.kind, AE::Unary { op: AU::AddrOf, .. })) {
            return self.unary(AU::AddrOf, t, t.span).map(|_| (ArrayRef::Param(0), Vec::new(), ScalarType::I32));
        }
        let mut pointer = None;
        for (k, t) in terms.iter().enumerate() {
            if self.is_host_pointer(t) {
                if pointer.is_some() {
                    return Err(err(span, "adding two pointers is not valid", "index one array"));
                }
                pointer = Some(k);
            }
        }
        let Some(pk) = pointer else {
            return Err(err(operand.span, "only pointers into arrays can be dereferenced in kernels", "index the array directly: p[i]"));
        };
        let base = terms.remove(pk);
        let (array, ndims, elem) = self.array_base(base)?;
        if ndims != 1 {
            return Err(err(span, "dereferencing a multi-dimensional array is not supported", "index every dimension: a[i][j]"));
        }
        let mut idx: Option<Handle<Expr>> = None;
        for t in terms {
            let h = self.index_expr(t)?;
            idx = Some(match idx {
                None => h,
                Some(prev) => self.arith(AB::Add, prev, h, t.span)?,
            });
        }
        let idx = match idx {
            Some(i) => i,
            None => self.int_const(0, ScalarType::I32),
        };
        Ok((array, vec![idx], elem))
    }

    fn is_host_pointer(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            AE::Ident(n) => {
                self.kernel_local(n).is_none() && (self.aliases.contains_key(n.as_str()) || self.host_var(n).is_some_and(|v| v.ty.is_pointer_like()))
            }
            AE::Member { .. } => self.member_type(e).is_ok_and(|t| t.is_pointer_like()),
            _ => false,
        }
    }

    fn index_expr(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        let h = self.expr(e)?;
        if self.ty(h).is_float() {
            return Err(err(e.span, "array index is not an integer", "cast the index to an integer type"));
        }
        let ty = sema::promote(self.ty(h));
        Ok(self.cast(h, ty))
    }

    /// The array a subscript chain starts from: (array, its number of dimensions, element type).
    fn array_base(&mut self, base: &ast::Expr) -> R<(ArrayRef, usize, ScalarType)> {
        match &base.kind {
            AE::Ident(name) => {
                if let Some(&alias) = self.aliases.get(name.as_str()) {
                    if self.kernel_local(name).is_none() {
                        return Ok(alias);
                    }
                }
                if let Some(l) = self.kernel_local(name) {
                    let local = &self.body.locals[l];
                    return match &local.array_dims {
                        Some(d) => Ok((ArrayRef::Local(l), d.len(), local.ty)),
                        None => Err(err(base.span, format!("`{name}` is not an array"), "index arrays and pointers only")),
                    };
                }
                if let Some(&l) = self.host_locals.get(name.as_str()) {
                    let local = &self.body.locals[l];
                    if let Some(d) = &local.array_dims {
                        return Ok((ArrayRef::Local(l), d.len(), local.ty));
                    }
                }
                let Some(info) = self.host_var(name) else {
                    return Err(err(base.span, format!("undeclared name `{name}`"), "declare it before the construct"));
                };
                self.check_default_none(name, base.span);
                if matches!(self.treatments.get(name.as_str()), Some(Treatment::Private)) {
                    if let Some((dims, elem)) = local_array_shape(&info.ty) {
                        let ndims = dims.len();
                        let l = self.body.locals.append(Local { name: name.clone(), ty: elem, array_dims: Some(dims), kind: LocalKind::Private, span: base.span });
                        self.host_locals.insert(name.clone(), l);
                        return Ok((ArrayRef::Local(l), ndims, elem));
                    }
                }
                if !info.ty.is_pointer_like() {
                    return Err(err(base.span, format!("`{name}` is not an array or a pointer"), "index arrays and pointers only"));
                }
                if self.written.contains(name.as_str()) {
                    return Err(err(
                        base.span,
                        format!("the pointer `{name}` is assigned inside the construct"),
                        "assign pointers on the host, outside the compute construct",
                    ));
                }
                let p = self.array_param(name, &info, base.span)?;
                self.param_shape(p)
            }
            AE::Member { .. } => {
                let (key, ty) = self.member_chain(base)?;
                let info = VarInfo { ty, is_const: false, restrict: false, storage: sema::Storage::Global, span: base.span };
                let p = self.array_param(&key, &info, base.span)?;
                self.param_shape(p)
            }
            _ => Err(err(
                base.span,
                "only named arrays, pointers and struct fields can be indexed in kernels",
                "index the array directly: a[i]",
            )),
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
            CType::Pointer { to, .. } => (to.scalar(), None),
            CType::Array { elem, len } => (elem.scalar(), match len { ArrayLen::Const(n) => Some(*n as i64), _ => None }),
            _ => (None, None),
        };
        let Some(elem) = elem else { return Err(one_dim("privatise a section of a one-dimensional array or pointer, such as c[0:n]")) };
        self.reading_bounds = true;
        let parts = (|| -> R<(Handle<Expr>, Handle<Expr>, String)> {
            match (r.sections.as_slice(), whole_len) {
                ([], Some(n)) => Ok((self.int_const(0, ScalarType::I64), self.int_const(n, ScalarType::I64), n.to_string())),
                ([s], _) if !s.single && s.len.is_some() => {
                    let len_e = s.len.as_ref().expect("checked");
                    let lo = match &s.lo {
                        Some(lo) => {
                            let h = self.expr(lo)?;
                            self.cast(h, ScalarType::I64)
                        }
                        None => self.int_const(0, ScalarType::I64),
                    };
                    let len = self.expr(len_e)?;
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
            return Err(err(r.span, format!("the section of `{name}` is not known when the loop starts"), "give a section of host values"));
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
            let load = self.add(ExprKind::Load { array: ArrayRef::Param(original), indices: vec![j2] }, elem, sp);
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
    fn copy_uniform(&mut self, h: Handle<Expr>) -> Handle<Expr> {
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

    fn param_shape(&self, p: u32) -> R<(ArrayRef, usize, ScalarType)> {
        match &self.params[p as usize].kind {
            ParamKind::Array { elem, dims, .. } => Ok((ArrayRef::Param(p), dims.len(), *elem)),
            ParamKind::Scalar(_) => Err(Diagnostic::global_error("internal: scalar param used as an array")),
        }
    }

    /// `a[i][j]`: the array and one index per dimension.
    fn element(&mut self, e: &ast::Expr) -> R<(ArrayRef, Vec<Handle<Expr>>, ScalarType)> {
        let mut index_exprs = Vec::new();
        let mut cur = e;
        while let AE::Index { base, index } = &cur.kind {
            index_exprs.push(&**index);
            cur = base;
        }
        index_exprs.reverse();
        // The update's own element only: its subscripts may not read the array.
        if !std::mem::take(&mut self.reduction_update_target) {
            self.check_array_reduction_use(cur, e.span)?;
        }
        if let AE::Ident(name) = &cur.kind {
            if let (Some(&copies), None) = (self.private_arrays.get(name.as_str()), self.kernel_local(name)) {
                let [ix] = index_exprs.as_slice() else {
                    return Err(err(e.span, format!("the private array `{name}` has one dimension"), format!("index `{name}` with one subscript")));
                };
                let ix = self.index_expr(ix)?;
                let ix = self.cast(ix, ScalarType::I64);
                let base = self.add(ExprKind::Local(copies.base), ScalarType::I64, e.span);
                let at = self.binary(BinaryOp::Add, base, ix, ScalarType::I64, e.span);
                let (_, _, elem) = self.param_shape(copies.buffer)?;
                return Ok((ArrayRef::Param(copies.buffer), vec![at], elem));
            }
        }
        let (array, ndims, elem) = if let AE::Unary { op: AU::Deref, operand } = &cur.kind {
            // `(*p)[i]` is rare; refuse it with the general message.
            return Err(err(operand.span, "indexing a dereferenced pointer is not supported", "index the array directly"));
        } else {
            self.array_base(cur)?
        };
        if index_exprs.len() != ndims {
            return Err(err(
                e.span,
                format!("`{}` indexes {} of the array's {} dimensions", self.text(e.span), index_exprs.len(), ndims),
                "index every dimension of the array (rows of arrays cannot be used as values in kernels)",
            ));
        }
        let mut indices = Vec::new();
        for ix in index_exprs {
            indices.push(self.index_expr(ix)?);
        }
        Ok((array, indices, elem))
    }

    /// `mt->mrows`, `s.n`, `mt->m`: its text (the param key) and its type.
    fn member_chain(&mut self, e: &ast::Expr) -> R<(String, CType)> {
        let ty = self.member_type(e)?;
        let key = self.key(e.span);
        let root = member_root(e);
        if let Some(r) = root {
            self.check_default_none(r, e.span);
        }
        Ok((key, ty))
    }

    fn member_type(&mut self, e: &ast::Expr) -> R<CType> {
        match &e.kind {
            AE::Ident(name) => {
                if self.kernel_local(name).is_some() {
                    return Err(err(e.span, "struct-typed locals are not supported in kernels", "use separate scalar locals"));
                }
                match self.host_var(name) {
                    Some(v) => Ok(v.ty),
                    None => Err(err(e.span, format!("undeclared name `{name}`"), "declare it before the construct")),
                }
            }
            AE::Member { base, field, arrow } => {
                let base_ty = self.member_type(base)?;
                let index = match (base_ty, arrow) {
                    (CType::Pointer { to, .. }, true) => match *to {
                        CType::Struct(i) => Some(i),
                        _ => None,
                    },
                    (CType::Struct(i), false) => Some(i),
                    _ => None,
                };
                let Some(i) = index else {
                    return Err(err(e.span, format!("`{}` is not a struct member access", self.text(e.span)), "use `.` on structs and `->` on struct pointers"));
                };
                match self.sema.field(i, field) {
                    Some(t) => Ok(t.clone()),
                    None => Err(err(e.span, format!("no field `{field}` in this struct"), "check the field name")),
                }
            }
            _ => Err(err(
                e.span,
                "only struct fields of host variables can be used in kernels",
                "copy the value to a local variable on the host before the construct",
            )),
        }
    }

    fn binary_expr(&mut self, op: AB, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        if op == AB::Comma {
            return Err(err(span, "the comma operator is not supported in kernel expressions", "write separate statements"));
        }
        if matches!(op, AB::LogAnd | AB::LogOr) {
            let a = self.expr(lhs)?;
            let a = self.truth(a);
            let b = self.expr(rhs)?;
            let b = self.truth(b);
            let op = if op == AB::LogAnd { BinaryOp::LogAnd } else { BinaryOp::LogOr };
            return Ok(self.binary(op, a, b, ScalarType::Bool, span));
        }
        if self.is_host_pointer(lhs) || self.is_host_pointer(rhs) {
            return Err(err(span, "pointer arithmetic is not supported in kernels", "index the array directly: p[i + k]"));
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        self.arith(op, a, b, span)
    }

    /// A C binary operator on lowered operands, with the usual arithmetic conversions.
    fn arith(&mut self, op: AB, a: Handle<Expr>, b: Handle<Expr>, span: Span) -> R<Handle<Expr>> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        let irop = match op {
            AB::Add => BinaryOp::Add,
            AB::Sub => BinaryOp::Sub,
            AB::Mul => BinaryOp::Mul,
            AB::Div => BinaryOp::Div,
            AB::Rem => BinaryOp::Rem,
            AB::Shl => BinaryOp::Shl,
            AB::Shr => BinaryOp::Shr,
            AB::Lt => BinaryOp::Lt,
            AB::Gt => BinaryOp::Gt,
            AB::Le => BinaryOp::Le,
            AB::Ge => BinaryOp::Ge,
            AB::Eq => BinaryOp::Eq,
            AB::Ne => BinaryOp::Ne,
            AB::BitAnd => BinaryOp::BitAnd,
            AB::BitOr => BinaryOp::BitOr,
            AB::BitXor => BinaryOp::BitXor,
            AB::LogAnd => BinaryOp::LogAnd,
            AB::LogOr => BinaryOp::LogOr,
            AB::Comma => return Err(err(span, "the comma operator is not supported in kernel expressions", "write separate statements")),
        };
        if matches!(irop, BinaryOp::Shl | BinaryOp::Shr) {
            let ty = sema::promote(ta);
            if ty.is_float() || tb.is_float() {
                return Err(err(span, "shifts need integer operands", "shift integers only"));
            }
            let a = self.cast(a, ty);
            let b = self.cast(b, ty);
            return Ok(self.binary(irop, a, b, ty, span));
        }
        let ty = sema::common_type(ta, tb);
        if matches!(irop, BinaryOp::Rem | BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor) && ty.is_float() {
            return Err(err(span, "this operator needs integer operands", "use fmod for floating-point remainders"));
        }
        let a = self.cast(a, ty);
        let b = self.cast(b, ty);
        let result = if matches!(irop, BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne) {
            ScalarType::Bool
        } else {
            ty
        };
        Ok(self.binary(irop, a, b, result, span))
    }

    fn call(&mut self, callee: &ast::Expr, args: &[ast::Expr], span: Span) -> R<Handle<Expr>> {
        let AE::Ident(name) = &callee.kind else {
            return Err(err(span, "calls through function pointers are not supported in kernels", "call the function by name"));
        };
        if is_device_builtin(name) {
            if args.len() != 1 {
                return Err(err(span, format!("`{name}` takes 1 argument"), "write acc_on_device(acc_device_nvidia)"));
            }
            return self.acc_on_device(&args[0], span);
        }
        if let Some((func, arity, ty)) = math_function(name) {
            if args.len() != arity {
                return Err(err(span, format!("`{name}` takes {arity} argument(s)"), "check the call"));
            }
            let mut lowered = Vec::new();
            for a in args {
                let h = self.expr(a)?;
                lowered.push(self.cast(h, ty));
            }
            return Ok(self.add(ExprKind::Math { func, args: lowered }, ty, span));
        }
        if let Some(def) = self.cx.inline_routines.get(name.as_str()).copied() {
            return self.inline_call(name, def, args, span);
        }
        if let Some(info) = self.cx.routines.get(name.as_str()).cloned() {
            let (params, result) = match self.sema.lookup(name) {
                Some(Symbol::Function(CType::Function { params, ret, .. })) => (params.clone(), (**ret).clone()),
                _ => return Err(err(span, format!("`{name}` is not declared before this call"), "declare the function before the construct")),
            };
            if params.len() != args.len() {
                return Err(err(span, format!("`{name}` takes {} argument(s)", params.len()), "check the call"));
            }
            let mut lowered = Vec::new();
            for (a, p) in args.iter().zip(&params) {
                let h = self.expr(a)?;
                let Some(pt) = p.scalar() else {
                    return Err(err(a.span, "only numbers can be passed to device functions", "pass scalar values"));
                };
                lowered.push(self.cast(h, pt));
            }
            // A void call is typed I32 here; `Stmt::Eval` discards the value.
            let ty = result.scalar().unwrap_or(ScalarType::I32);
            return Ok(self.add(ExprKind::Call { func: Handle::new(info.index), args: lowered }, ty, span));
        }
        if self.cx.defined_functions.contains(name.as_str()) {
            return Err(err(
                span,
                format!("`{name}` is called in a kernel but has no `#pragma acc routine seq`"),
                format!("add `#pragma acc routine seq` before the function `{name}`"),
            ));
        }
        Err(err(span, format!("the library function `{name}` cannot be called in a kernel"), "call it on the host, outside the compute construct"))
    }

    /// `acc_on_device(dev)` in a kernel: whether `dev` names the device the kernel runs on,
    /// `acc_device_default` (1), `acc_device_not_host` (3) or `acc_device_nvidia` (4): bit `dev`
    /// of 0b11010, with `dev` evaluated once (negative and large values give 0).
    fn acc_on_device(&mut self, arg: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        let t = ScalarType::U64;
        let dev = self.expr(arg)?;
        let dev = self.cast(dev, t);
        let limit = self.int_const(63, t);
        let shift = self.binary(BinaryOp::Min, dev, limit, t, span);
        let mask = self.int_const(0b11010, t);
        let bits = self.binary(BinaryOp::Shr, mask, shift, t, span);
        let one = self.int_const(1, t);
        let bit = self.binary(BinaryOp::BitAnd, bits, one, t, span);
        Ok(self.cast(bit, ScalarType::I32))
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    fn record(&mut self, r: R<()>) {
        if let Err(d) = r {
            self.errors.push(d)
        }
    }

    pub fn stmts(&mut self, stmts: &[&ast::Stmt], out: &mut Block) {
        for s in stmts {
            self.stmt(s, out);
        }
    }

    pub fn stmt(&mut self, s: &ast::Stmt, out: &mut Block) {
        let saved = std::mem::take(&mut self.pending);
        let mut lowered = Vec::new();
        let r = self.stmt_inner(s, &mut lowered);
        self.record(r);
        out.append(&mut self.pending);
        out.append(&mut lowered);
        self.pending = saved;
    }

    /// A loop condition or step: it is evaluated on every trip, so it cannot need statements
    /// run before it (an inlined call).
    fn loop_expr(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        let before = self.pending.len();
        let h = self.expr(e)?;
        if self.pending.len() != before {
            self.pending.truncate(before);
            return Err(err(
                e.span,
                "a call of a device function with array parameters cannot be part of a loop condition",
                "call the function in the loop body, store the result in a variable and test that",
            ));
        }
        Ok(h)
    }

    /// After a loop inside an inlined function: a `return` in the loop left it with `break`;
    /// leave the enclosing loops too.
    fn after_loop(&mut self, out: &mut Block) {
        if let Some(frame) = self.inline_frames.last() {
            let done = frame.done;
            let flag = self.add(ExprKind::Local(done), ScalarType::Bool, Span::default());
            out.push(Stmt::If { cond: flag, then: vec![Stmt::Break], otherwise: Vec::new() });
        }
    }

    fn inline_call(&mut self, name: &str, def: &ast::FunctionDef, args: &[ast::Expr], span: Span) -> R<Handle<Expr>> {
        if self.inline_frames.len() >= MAX_INLINE_DEPTH {
            return Err(err(span, format!("calls of `{name}` nest too deeply (recursion?)"), "device functions cannot be recursive"));
        }
        let Some(ast::DerivedType::Function { params, .. }) = def.declarator.derived.first() else {
            return Err(err(span, format!("`{name}` is not a function"), "call a function"));
        };
        let params: Vec<&ast::ParamDecl> = params.iter().filter(|p| p.declarator.name.is_some() || !p.declarator.derived.is_empty() || !matches!(p.specs.ty, ast::TypeSpec::Base(ast::BaseType::Void))).collect();
        if params.len() != args.len() {
            return Err(err(span, format!("`{name}` takes {} argument(s)", params.len()), "check the call"));
        }
        let ret = self.sema.resolve_specs(&def.specs)?;
        let ret = self.sema.apply_declarator(ret, &ast::Declarator { name: None, name_span: span, derived: def.declarator.derived[1..].to_vec(), span })?;
        let result = match ret {
            CType::Void => None,
            CType::Scalar(t) => Some(t),
            _ => return Err(err(span, format!("`{name}` must return a number or nothing"), "return a scalar value")),
        };
        // Arguments are evaluated in the caller's scope.
        let mut scalars = Vec::new();
        let mut arrays = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let pname = p.declarator.name.clone().unwrap_or_default();
            let pty = sema::adjust_param(self.sema.declared_type(&p.specs, &p.declarator)?);
            match pty {
                CType::Scalar(t) => {
                    let v = self.expr(a)?;
                    let v = self.cast(v, t);
                    scalars.push((pname, t, v));
                }
                CType::Pointer { to, .. } => {
                    let mut want_dims = 1;
                    let mut cur = &*to;
                    while let CType::Array { elem, .. } = cur {
                        want_dims += 1;
                        cur = elem;
                    }
                    let (array, ndims, elem) = self.array_base(a)?;
                    if ndims != want_dims || cur.scalar() != Some(elem) {
                        return Err(err(
                            a.span,
                            format!("the array passed as `{pname}` does not have the parameter's shape and element type"),
                            "pass an array of the same element type and number of dimensions",
                        ));
                    }
                    arrays.push((pname, (array, ndims, elem)));
                }
                _ => return Err(err(a.span, format!("parameter `{pname}` of `{name}` has a type kernels do not support"), "pass numbers and arrays")),
            }
        }
        let result_local = result.map(|t| (self.new_local(&format!("{name}_result"), t, LocalKind::Var, span), t));
        let done = self.new_local(&format!("{name}_done"), ScalarType::Bool, LocalKind::Var, span);
        let saved_aliases = std::mem::replace(&mut self.aliases, arrays.into_iter().collect());
        let saved_breaks = std::mem::take(&mut self.breaks);
        let saved_pending = std::mem::take(&mut self.pending);
        self.inline_frames.push(InlineFrame { result: result_local, done });
        self.push_scope();
        let mut block = Vec::new();
        for (pname, t, v) in scalars {
            let l = self.new_local(&pname, t, LocalKind::Var, span);
            block.push(Stmt::Assign { local: l, value: v });
            self.bind(&pname, l);
        }
        self.breaks.push(BreakTarget::Loop);
        for st in &def.body.stmts {
            self.stmt(st, &mut block);
        }
        self.pop_scope();
        self.inline_frames.pop();
        self.breaks = saved_breaks;
        self.aliases = saved_aliases;
        self.pending = saved_pending;
        let no = self.add(ExprKind::ConstInt(0), ScalarType::Bool, Span::default());
        self.pending.push(Stmt::Assign { local: done, value: no });
        let never = self.add(ExprKind::ConstInt(0), ScalarType::Bool, Span::default());
        self.pending.push(Stmt::Loop { cond: Some(never), test_first: false, body: block, continuing: Vec::new(), range: None });
        Ok(match result_local {
            Some((l, t)) => self.add(ExprKind::Local(l), t, span),
            None => self.int_const(0, ScalarType::I32),
        })
    }

    /// Lowers the body of one parallel iteration (a `continue` ends the iteration).
    pub fn iteration_body(&mut self, s: &ast::Stmt) -> Block {
        self.breaks.push(BreakTarget::Iteration);
        let mut block = Vec::new();
        self.stmt(s, &mut block);
        self.breaks.pop();
        if self.iteration_continue {
            let never = self.add(ExprKind::ConstInt(0), ScalarType::Bool, Span::default());
            block = vec![Stmt::Loop { cond: Some(never), test_first: false, body: block, continuing: Vec::new(), range: None }];
        }
        block
    }

    fn stmt_inner(&mut self, s: &ast::Stmt, out: &mut Block) -> R<()> {
        let span = s.span;
        match &s.kind {
            StmtKind::Compound(b) => {
                self.push_scope();
                for st in &b.stmts {
                    self.stmt(st, out);
                }
                self.pop_scope();
                Ok(())
            }
            StmtKind::Expr(None) => Ok(()),
            StmtKind::Expr(Some(e)) => self.expr_stmt(e, out),
            StmtKind::Decl(d) => self.decl(d, out),
            StmtKind::If { cond, then, otherwise } => {
                let c = self.expr(cond)?;
                let c = self.truth(c);
                let mut tb = Vec::new();
                self.scoped_stmt(then, &mut tb);
                let mut eb = Vec::new();
                if let Some(o) = otherwise {
                    self.scoped_stmt(o, &mut eb);
                }
                out.push(Stmt::If { cond: c, then: tb, otherwise: eb });
                Ok(())
            }
            StmtKind::While { cond, body } => {
                let c = self.loop_expr(cond)?;
                let c = self.truth(c);
                let b = self.loop_body(body);
                out.push(Stmt::Loop { cond: Some(c), test_first: true, body: b, continuing: Vec::new(), range: None });
                self.after_loop(out);
                Ok(())
            }
            StmtKind::DoWhile { body, cond } => {
                let b = self.loop_body(body);
                let c = self.loop_expr(cond)?;
                let c = self.truth(c);
                out.push(Stmt::Loop { cond: Some(c), test_first: false, body: b, continuing: Vec::new(), range: None });
                self.after_loop(out);
                Ok(())
            }
            StmtKind::For { .. } => self.for_loop(s, out),
            StmtKind::Switch { cond, body } => self.switch(cond, body, span, out),
            StmtKind::Case { .. } | StmtKind::Default { .. } => {
                Err(err(span, "`case` label outside a switch", "put case labels directly in the switch body"))
            }
            StmtKind::Labeled { .. } | StmtKind::Goto(_) => Err(err(
                span,
                "`goto` and labels are not supported in kernels",
                "restructure the code with loops, if/else, break and continue",
            )),
            StmtKind::Break => match self.breaks.last() {
                Some(BreakTarget::Loop) => {
                    out.push(Stmt::Break);
                    Ok(())
                }
                Some(BreakTarget::Switch) => Err(err(
                    span,
                    "`break` inside a switch case is only supported as the case's last statement",
                    "end each case with break and use if/else inside the case",
                )),
                Some(BreakTarget::Iteration) | None => Err(err(
                    span,
                    "`break` would leave the parallel loop",
                    "parallel loops run every iteration; compute a flag and test it in the loop body instead",
                )),
            },
            StmtKind::Continue => {
                let in_loop = self.breaks.iter().rev().find(|b| **b != BreakTarget::Switch).copied();
                match in_loop {
                    Some(BreakTarget::Loop) => {
                        out.push(Stmt::Continue);
                        Ok(())
                    }
                    Some(BreakTarget::Iteration) => {
                        self.iteration_continue = true;
                        out.push(Stmt::Continue);
                        Ok(())
                    }
                    _ => Err(err(span, "`continue` outside a loop", "use continue inside loops only")),
                }
            }
            StmtKind::Return(value) => {
                if let Some(frame) = self.inline_frames.last() {
                    let (result, done) = (frame.result, frame.done);
                    match (value, result) {
                        (Some(e), Some((l, t))) => {
                            let h = self.expr(e)?;
                            let v = self.cast(h, t);
                            out.push(Stmt::Assign { local: l, value: v });
                        }
                        (None, None) => {}
                        (Some(_), None) => return Err(err(span, "a void function returns a value", "remove the value")),
                        (None, Some(_)) => return Err(err(span, "the function must return a value", "return a value")),
                    }
                    let yes = self.add(ExprKind::ConstInt(1), ScalarType::Bool, Span::default());
                    out.push(Stmt::Assign { local: done, value: yes });
                    out.push(Stmt::Break);
                    return Ok(());
                }
                if self.mode != Mode::Function {
                    return Err(err(span, "`return` would leave the parallel loop", "use if/else to skip the rest of the iteration"));
                }
                let v = match (value, self.function_result) {
                    (Some(e), Some(t)) => {
                        let h = self.expr(e)?;
                        Some(self.cast(h, t))
                    }
                    (None, None) => None,
                    (Some(_), None) => return Err(err(span, "a void function returns a value", "remove the value")),
                    (None, Some(_)) => return Err(err(span, "the function must return a value", "return a value")),
                };
                out.push(Stmt::Return(v));
                Ok(())
            }
            StmtKind::Acc { directive, body } => match (&directive.kind, body) {
                (DirectiveKind::Loop, Some(b)) => {
                    self.validate_inner_loop_clauses(directive);
                    self.stmt_inner(b, out)
                }
                (DirectiveKind::Atomic(kind), Some(b)) => self.atomic(*kind, b, out),
                _ => Err(err(
                    directive.span,
                    "this OpenACC directive is not supported inside a compute construct",
                    "move it outside the compute construct",
                )),
            },
        }
    }

    /// Inner loops run sequentially per thread; their reduction/private clauses need no work
    /// when the variables are locals of the iteration.
    fn validate_inner_loop_clauses(&mut self, directive: &ast::Directive) {
        for c in &directive.clauses {
            if let ast::ClauseKind::Reduction { vars, .. } = &c.kind {
                for v in vars {
                    if !v.sections.is_empty() {
                        self.errors.push(err(v.span, "reduction on an array section", "reduce into a scalar variable"));
                    }
                }
            }
        }
    }

    fn scoped_stmt(&mut self, s: &ast::Stmt, out: &mut Block) {
        self.push_scope();
        self.stmt(s, out);
        self.pop_scope();
    }

    fn loop_body(&mut self, s: &ast::Stmt) -> Block {
        self.breaks.push(BreakTarget::Loop);
        let mut b = Vec::new();
        self.scoped_stmt(s, &mut b);
        self.breaks.pop();
        b
    }

    fn for_loop(&mut self, s: &ast::Stmt, out: &mut Block) -> R<()> {
        let StmtKind::For { init, cond, step, body } = &s.kind else { return Ok(()) };
        self.push_scope();
        let r = (|| -> R<()> {
            match init {
                Some(ast::ForInit::Decl(d)) => self.decl(d, out)?,
                Some(ast::ForInit::Expr(e)) => self.expr_stmt(e, out)?,
                None => {}
            }
            let range = match loops::counted_loop(&self.sema, s) {
                Ok(c) => self.loop_range(&c)?,
                Err(_) => None,
            };
            let c = match cond {
                Some(c) => {
                    let h = self.loop_expr(c)?;
                    Some(self.truth(h))
                }
                None => None,
            };
            let mut continuing = Vec::new();
            if let Some(st) = step {
                let before = self.pending.len();
                self.expr_stmt(st, &mut continuing)?;
                if self.pending.len() != before {
                    self.pending.truncate(before);
                    return Err(err(st.span, "a call of a device function with array parameters cannot be part of a loop step", "update the loop variable with plain arithmetic"));
                }
            }
            let b = self.loop_body(body);
            out.push(Stmt::Loop { cond: c, test_first: true, body: b, continuing, range });
            self.after_loop(out);
            Ok(())
        })();
        self.pop_scope();
        r
    }

    fn loop_range(&mut self, c: &loops::CountedLoop) -> R<Option<LoopRange>> {
        let var = match self.lvalue_local(&c.var) {
            Some(l) => l,
            None => return Ok(None),
        };
        let vty = self.body.locals[var].ty;
        let start = self.expr(c.lo)?;
        let start = self.cast(start, vty);
        let bound = self.expr(c.bound)?;
        let bound = self.cast(bound, vty);
        let end = match c.cmp {
            Cmp::Lt | Cmp::Gt => bound,
            Cmp::Le | Cmp::Ge => {
                let one = self.int_const(1, vty);
                let op = if c.cmp == Cmp::Le { BinaryOp::Add } else { BinaryOp::Sub };
                self.binary(op, bound, one, vty, Span::default())
            }
        };
        Ok(Some(LoopRange { var, start, end, step: c.step }))
    }

    /// The local a plain name assigns to, if it is one (kernel local or host scalar stand-in).
    fn lvalue_local(&mut self, name: &str) -> Option<Handle<Local>> {
        if let Some(l) = self.kernel_local(name) {
            return Some(l);
        }
        self.host_locals.get(name).copied()
    }

    fn switch(&mut self, cond: &ast::Expr, body: &ast::Stmt, span: Span, out: &mut Block) -> R<()> {
        let c = self.expr(cond)?;
        let cty = sema::promote(self.ty(c));
        if cty.is_float() {
            return Err(err(cond.span, "switch on a floating-point value", "switch on an integer"));
        }
        let c = self.cast(c, cty);
        let StmtKind::Compound(block) = &body.kind else {
            return Err(err(span, "this switch form is not supported in kernels", "write the switch with a braced body of cases"));
        };
        // Groups: the labels (None = default) and the statements up to the next label.
        let mut groups: Vec<(Vec<Option<&ast::Expr>>, Vec<&ast::Stmt>)> = Vec::new();
        for st in &block.stmts {
            let mut labels = Vec::new();
            let mut cur = st;
            loop {
                match &cur.kind {
                    StmtKind::Case { value, body } => {
                        labels.push(Some(value));
                        cur = body;
                    }
                    StmtKind::Default { body } => {
                        labels.push(None);
                        cur = body;
                    }
                    _ => break,
                }
            }
            if labels.is_empty() {
                match groups.last_mut() {
                    Some(g) => g.1.push(cur),
                    None => return Err(err(st.span, "statement before the first case label", "start the switch body with a case")),
                }
            } else {
                groups.push((labels, vec![cur]));
            }
        }
        let last = groups.len();
        let mut arms: Vec<(Option<Handle<Expr>>, Block)> = Vec::new();
        for (gi, (labels, stmts)) in groups.iter().enumerate() {
            let ends_with_break = matches!(stmts.last().map(|s| &s.kind), Some(StmtKind::Break));
            let empty = stmts.iter().all(|s| matches!(s.kind, StmtKind::Expr(None)));
            if !ends_with_break && gi + 1 != last && !empty {
                return Err(err(
                    stmts.last().map(|s| s.span).unwrap_or(span),
                    "a switch case falls through to the next one",
                    "end every case with break (falling through is not supported in kernels)",
                ));
            }
            let body_stmts: Vec<&ast::Stmt> = if ends_with_break { stmts[..stmts.len() - 1].to_vec() } else { stmts.clone() };
            let mut test: Option<Handle<Expr>> = None;
            let mut is_default = false;
            for l in labels {
                match l {
                    None => is_default = true,
                    Some(v) => {
                        let val = self.sema.const_eval(v).ok_or_else(|| err(v.span, "case label is not a constant", "use integer constants as case labels"))?;
                        let k = self.int_const(val, cty);
                        let eq = self.binary(BinaryOp::Eq, c, k, ScalarType::Bool, v.span);
                        test = Some(match test {
                            Some(t) => self.binary(BinaryOp::LogOr, t, eq, ScalarType::Bool, v.span),
                            None => eq,
                        });
                    }
                }
            }
            self.breaks.push(BreakTarget::Switch);
            self.push_scope();
            let mut b = Vec::new();
            for st in body_stmts {
                self.stmt(st, &mut b);
            }
            self.pop_scope();
            self.breaks.pop();
            arms.push((if is_default { None } else { test }, b));
        }
        // Build the chain from the last arm backwards; the default arm is the final else.
        let default_block = arms.iter().find(|(t, _)| t.is_none()).map(|(_, b)| b.clone()).unwrap_or_default();
        let mut chain = default_block;
        for (test, b) in arms.into_iter().rev() {
            if let Some(t) = test {
                chain = vec![Stmt::If { cond: t, then: b, otherwise: chain }];
            }
        }
        out.extend(chain);
        Ok(())
    }

    fn decl(&mut self, d: &ast::Declaration, out: &mut Block) -> R<()> {
        if d.specs.storage == Some(ast::StorageClass::Typedef) {
            return self.sema.declare(d, sema::Storage::Local);
        }
        let base = self.sema.resolve_specs(&d.specs)?;
        for id in &d.declarators {
            let Some(name) = &id.declarator.name else { continue };
            let ty = self.sema.apply_declarator(base.clone(), &id.declarator)?;
            let span = id.declarator.name_span;
            match &ty {
                CType::Scalar(t) => {
                    let l = self.new_local(name, *t, LocalKind::Var, span);
                    if let Some(init) = &id.init {
                        let ast::Initializer::Expr(e) = init else {
                            return Err(err(span, "brace initializer for a scalar", "initialise scalars with an expression"));
                        };
                        let v = self.expr(e)?;
                        let v = self.cast(v, *t);
                        out.push(Stmt::Assign { local: l, value: v });
                    }
                    self.bind(name, l);
                }
                CType::Array { .. } => {
                    let (dims, elem) = local_array_shape(&ty).ok_or_else(|| {
                        err(span, format!("the local array `{name}` needs constant dimensions and number elements"), "give the array constant sizes, e.g. double t[3]")
                    })?;
                    let l = self.body.locals.append(Local { name: name.clone(), ty: elem, array_dims: Some(dims.clone()), kind: LocalKind::Var, span });
                    self.bind(name, l);
                    if let Some(init) = &id.init {
                        self.local_array_init(l, &dims, elem, init, out)?;
                    }
                }
                CType::Pointer { .. } => {
                    return Err(err(
                        span,
                        format!("pointer-typed local `{name}` in a kernel is not supported"),
                        "index the array directly instead of through a pointer alias",
                    ));
                }
                _ => {
                    return Err(err(span, format!("the local `{name}` has a type kernels do not support"), "use number-typed locals and arrays in kernels"));
                }
            }
        }
        Ok(())
    }

    fn local_array_init(&mut self, l: Handle<Local>, dims: &[u32], elem: ScalarType, init: &ast::Initializer, out: &mut Block) -> R<()> {
        let ast::Initializer::List(items, span) = init else {
            return Err(err(Span::default(), "an array needs a brace initializer", "write {a, b, c}"));
        };
        if dims.len() != 1 || items.iter().any(|(d, i)| !d.is_empty() || !matches!(i, ast::Initializer::Expr(_))) {
            return Err(err(*span, "only flat initializers of one-dimensional local arrays are supported", "assign the elements in a loop"));
        }
        for k in 0..dims[0] as usize {
            let value = match items.get(k) {
                Some((_, ast::Initializer::Expr(e))) => {
                    let v = self.expr(e)?;
                    self.cast(v, elem)
                }
                _ => self.zero_of(elem),
            };
            let idx = self.int_const(k as i64, ScalarType::I32);
            out.push(Stmt::Store { array: ArrayRef::Local(l), indices: vec![idx], value, span: *span });
        }
        Ok(())
    }

    pub(super) fn target(&mut self, lhs: &ast::Expr) -> R<Target> {
        match &lhs.kind {
            AE::Ident(name) => {
                if let Some(l) = self.kernel_local(name) {
                    if self.body.locals[l].array_dims.is_some() {
                        return Err(err(lhs.span, format!("cannot assign the whole array `{name}`"), "assign its elements"));
                    }
                    return Ok(Target::Local(l));
                }
                let Some(info) = self.host_var(name) else {
                    return Err(err(lhs.span, format!("undeclared name `{name}`"), "declare it before the construct"));
                };
                self.check_default_none(name, lhs.span);
                let Some(ty) = info.ty.scalar() else {
                    return Err(err(lhs.span, format!("cannot assign `{name}` in a kernel"), "assign numbers and array elements only"));
                };
                let h = self.host_scalar(name, ty, lhs.span, true)?;
                match self.body.exprs[h].kind {
                    ExprKind::Local(l) => Ok(Target::Local(l)),
                    _ => Err(err(lhs.span, format!("`{name}` cannot be assigned here"), "declare it inside the construct")),
                }
            }
            AE::Index { .. } => {
                let (array, indices, ty) = self.element(lhs)?;
                Ok(Target::Element { array, indices, ty })
            }
            AE::Unary { op: AU::Deref, operand } => {
                let (array, indices, ty) = self.deref(operand, lhs.span)?;
                Ok(Target::Element { array, indices, ty })
            }
            AE::Member { .. } => Err(err(lhs.span, "assigning struct fields in a kernel is not supported", "assign the field on the host")),
            _ => Err(err(lhs.span, "this expression cannot be assigned", "assign variables and array elements")),
        }
    }

    pub(super) fn target_type(&self, t: &Target) -> ScalarType {
        match t {
            Target::Local(l) => self.body.locals[*l].ty,
            Target::Element { ty, .. } => *ty,
        }
    }

    pub(super) fn read_target(&mut self, t: &Target, span: Span) -> Handle<Expr> {
        match t {
            Target::Local(l) => self.add(ExprKind::Local(*l), self.body.locals[*l].ty, span),
            Target::Element { array, indices, ty } => self.add(ExprKind::Load { array: *array, indices: indices.clone() }, *ty, span),
        }
    }

    pub(super) fn store(&mut self, t: Target, value: Handle<Expr>, span: Span, out: &mut Block) {
        let ty = self.target_type(&t);
        let value = self.cast(value, ty);
        match t {
            Target::Local(local) => out.push(Stmt::Assign { local, value }),
            Target::Element { array, indices, .. } => out.push(Stmt::Store { array, indices, value, span }),
        }
    }

    pub fn expr_stmt(&mut self, e: &ast::Expr, out: &mut Block) -> R<()> {
        let span = e.span;
        if let Some(done) = self.array_reduction_update(e, out) {
            return done;
        }
        match &e.kind {
            AE::Assign { op, lhs, rhs } => {
                // `a = b = e`: assign `b` first, then `a` from what `b` now holds.
                let chained = match &rhs.kind {
                    AE::Assign { lhs: inner, .. } if op.is_none() => {
                        self.expr_stmt(rhs, out)?;
                        let inner_target = self.target(inner)?;
                        Some(self.read_target(&inner_target, inner.span))
                    }
                    _ => None,
                };
                let t = self.target(lhs)?;
                let value = match op {
                    None => match chained {
                        Some(v) => v,
                        None => self.expr(rhs)?,
                    },
                    Some(op) => {
                        let cur = self.read_target(&t, lhs.span);
                        let r = self.expr(rhs)?;
                        self.arith(*op, cur, r, span)?
                    }
                };
                self.store(t, value, span, out);
                Ok(())
            }
            AE::Unary { op: op @ (AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec), operand } => {
                let t = self.target(operand)?;
                let cur = self.read_target(&t, operand.span);
                let one = self.int_const(1, ScalarType::I32);
                let op = if matches!(op, AU::PreInc | AU::PostInc) { AB::Add } else { AB::Sub };
                let v = self.arith(op, cur, one, span)?;
                self.store(t, v, span, out);
                Ok(())
            }
            AE::Binary { op: AB::Comma, lhs, rhs } => {
                self.expr_stmt(lhs, out)?;
                self.expr_stmt(rhs, out)
            }
            AE::Call { .. } => {
                let h = self.expr(e)?;
                if matches!(self.body.exprs[h].kind, ExprKind::Call { .. }) {
                    out.push(Stmt::Eval(h));
                }
                Ok(())
            }
            AE::Cast { expr, .. } => self.expr_stmt(expr, out),
            _ => self.expr(e).map(|_| ()),
        }
    }
}

/// The terms of a chain of `+` (parentheses and nesting looked through).
fn flatten_sum<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match &e.kind {
        AE::Binary { op: AB::Add, lhs, rhs } => {
            flatten_sum(lhs, out);
            flatten_sum(rhs, out);
        }
        _ => out.push(e),
    }
}

fn member_root(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        AE::Ident(n) => Some(n),
        AE::Member { base, .. } => member_root(base),
        _ => None,
    }
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
