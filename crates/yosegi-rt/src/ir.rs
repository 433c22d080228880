//! The one IR. Two levels share one body representation ([`Body`]: an arena of expressions,
//! an arena of locals, and a statement tree):
//!
//! * a [`Kernel`] is a parallel iteration space ([`ParallelDim`]s) plus the body one iteration
//!   runs; it is what lowering produces from an OpenACC compute construct;
//! * a [`GridKernel`] is what a device runs: the same body written per thread, in terms of
//!   `ThreadIdx`/`BlockIdx`, with shared-memory arrays and barriers. The mapping pass
//!   (`opt::mapping`) turns the first into the second; later passes (staging, padding, fusion)
//!   rewrite grid kernels.
//!
//! The host side of the program is described by [`Region`]s: one per offloaded construct, with
//! the C expressions the host evaluates to feed it ([`HostArg`]). Everything a kernel reads from
//! the host (scalars, array base pointers, struct fields) is a [`Param`] bound to a host arg.

use std::fmt;
use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

use crate::diag::Span;

/// The IR's readable text form (`yosegi emit`, the golden tests, diagnostics that quote IR).
pub mod text;
/// Simplified expressions for the one-line feedback (`-Minfo`, `explain --brief`).
pub mod simplify;
/// Scalar values with C semantics: the arithmetic that constant folding, the simulator and the
/// reduction fold share.
pub mod value;

// ---------------------------------------------------------------------------------------------
// Vocabulary shared with the front end and the runtime

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DataClauseKind {
    Copy,
    CopyIn,
    CopyOut,
    Create,
    Present,
    /// `present_or_copy` / `pcopy`; the `present_or_*` forms are the plain ones since OpenACC 2.5,
    /// and are normalised to them.
    Delete,
    DevicePtr,
    /// `update host(...)` / `update self(...)`
    Host,
    /// `update device(...)`
    Device,
    /// `use_device(...)` on `host_data`
    UseDevice,
    /// `no_create(...)`: use the device copy when there is one, else the host's.
    NoCreate,
    /// `attach(p)` / `detach(p)`: a pointer whose target a device copy may hold.
    Attach,
    Detach,
    /// `declare device_resident(...)` / `declare link(...)`.
    DeviceResident,
    Link,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReductionOp {
    Add,
    Mul,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
}

impl DataClauseKind {
    /// The clause's keyword as written in a directive (`host` and `device` are `update`'s).
    pub fn keyword(self) -> &'static str {
        match self {
            DataClauseKind::Copy => "copy",
            DataClauseKind::CopyIn => "copyin",
            DataClauseKind::CopyOut => "copyout",
            DataClauseKind::Create => "create",
            DataClauseKind::Present => "present",
            DataClauseKind::Delete => "delete",
            DataClauseKind::DevicePtr => "deviceptr",
            DataClauseKind::Host => "host",
            DataClauseKind::Device => "device",
            DataClauseKind::UseDevice => "use_device",
            DataClauseKind::NoCreate => "no_create",
            DataClauseKind::Attach => "attach",
            DataClauseKind::Detach => "detach",
            DataClauseKind::DeviceResident => "device_resident",
            DataClauseKind::Link => "link",
        }
    }
}

impl ReductionOp {
    /// The operator as written in a `reduction(op:...)` clause.
    pub fn symbol(self) -> &'static str {
        match self {
            ReductionOp::Add => "+",
            ReductionOp::Mul => "*",
            ReductionOp::Max => "max",
            ReductionOp::Min => "min",
            ReductionOp::BitAnd => "&",
            ReductionOp::BitOr => "|",
            ReductionOp::BitXor => "^",
            ReductionOp::LogAnd => "&&",
            ReductionOp::LogOr => "||",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Arena and handles

/// Serialised as its index (the IR travels inside executables built by `yosegi cc`).
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    pub fn new(index: usize) -> Handle<T> {
        Handle { index: index as u32, marker: PhantomData }
    }
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    pub fn new() -> Arena<T> {
        Arena::default()
    }
    pub fn append(&mut self, value: T) -> Handle<T> {
        self.items.push(value);
        Handle::new(self.items.len() - 1)
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items.iter().enumerate().map(|(i, v)| (Handle::new(i), v))
    }
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.items.get(h.index())
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
}
impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.items[h.index()]
    }
}

// ---------------------------------------------------------------------------------------------
// Types

/// The scalar types a kernel computes with. C's `char`/`short` values are promoted to `I32`
/// in arithmetic, but loads and stores keep the element's own width.
///
/// `F80` is the host's `long double` on x86-64: the x87 80-bit extended format, in 16 bytes.
/// It is a *memory* format only (array elements, host variables a region writes back): kernels
/// compute `long double` values as `F64` (there is no wider arithmetic on a GPU), so a load of
/// an `F80` element yields an `F64` value and a store converts an `F64` value back
/// ([`ScalarType::value_type`]). No expression, local, scalar param, shared array or reduction
/// has type `F80`; the verifier checks it.
///
/// C's complex types have no scalar type of their own: lowering splits a complex value into
/// its real and imaginary parts (two values of the component type), a complex array element
/// into the two elements of a row of 2, and a complex reduction into two reductions marked as
/// a pair ([`ComplexPart`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    F80,
}

impl ScalarType {
    pub fn size_bytes(self) -> u32 {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
            ScalarType::F80 => 16,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64 | ScalarType::F80)
    }
    /// The type a value loaded from memory of this type computes in: `F64` for `F80`, the type
    /// itself otherwise.
    pub fn value_type(self) -> ScalarType {
        match self {
            ScalarType::F80 => ScalarType::F64,
            t => t,
        }
    }
    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64)
    }
    /// The C spelling, as the back ends print it.
    pub fn c_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "_Bool",
            ScalarType::I8 => "signed char",
            ScalarType::U8 => "unsigned char",
            ScalarType::I16 => "short",
            ScalarType::U16 => "unsigned short",
            ScalarType::I32 => "int",
            ScalarType::U32 => "unsigned int",
            ScalarType::I64 => "long long",
            ScalarType::U64 => "unsigned long long",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
            ScalarType::F80 => "long double",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bodies: expressions, locals, statements

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    /// The axis's position in `dim3`-shaped arrays (`launch.block`, `launch.grid`).
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }

    /// `x`, `y` or `z`: the axis as CUDA's `dim3` fields and our names spell it.
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    Neg,
    /// Logical not: yields `Bool`.
    Not,
    BitNot,
}

/// Binary operators. Both operands have the node's operand type (lowering inserts the casts of
/// C's usual arithmetic conversions); comparisons and `LogAnd`/`LogOr` yield `Bool`.
/// `LogAnd`/`LogOr` evaluate the right operand only where needed (C's short circuit), so a
/// guarded load such as `i > 0 && a[i-1] > 0` never reads out of bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    LogAnd,
    LogOr,
    /// `max`/`min` (used by reductions and by `fmax`-like calls on integers).
    Max,
    Min,
}

/// The binary operator that combines two partial results of reduction `op` (`LogAnd`/`LogOr`
/// combine truth values).
pub fn reduction_combiner(op: ReductionOp) -> BinaryOp {
    match op {
        ReductionOp::Add => BinaryOp::Add,
        ReductionOp::Mul => BinaryOp::Mul,
        ReductionOp::Max => BinaryOp::Max,
        ReductionOp::Min => BinaryOp::Min,
        ReductionOp::BitAnd => BinaryOp::BitAnd,
        ReductionOp::BitOr => BinaryOp::BitOr,
        ReductionOp::BitXor => BinaryOp::BitXor,
        ReductionOp::LogAnd => BinaryOp::LogAnd,
        ReductionOp::LogOr => BinaryOp::LogOr,
    }
}

impl BinaryOp {
    /// Whether the operation yields a truth value (`Bool`): comparisons, `&&`, `||`.
    pub fn yields_bool(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne | BinaryOp::LogAnd | BinaryOp::LogOr
        )
    }

    /// The C operator for this operation; `None` for `Max`/`Min`, which C spells as calls.
    pub fn c_operator(self) -> Option<&'static str> {
        Some(match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::LogAnd => "&&",
            BinaryOp::LogOr => "||",
            BinaryOp::Max | BinaryOp::Min => return None,
        })
    }
}

/// `math.h` functions a kernel may call; the `f` variants (`sqrtf`) are the same function at
/// type `F32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFn {
    Sqrt,
    Cbrt,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Pow,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Fabs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fmod,
    Fmin,
    Fmax,
    Hypot,
    Copysign,
    Erf,
    /// integer `abs`/`labs`/`llabs`
    Abs,
}

/// What a call of a math function costs on a GPU, as the performance model counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathCost {
    /// An instruction or two (`fabs`, `fmin`, `floor`, ...): an arithmetic operation.
    Instruction,
    /// A short polynomial or iteration (`sqrt`, `exp`, `log`, `sin`, ...).
    Function,
    /// `pow`: a logarithm and an exponential carried in extended precision, several times a
    /// function's cost (NPB MG's `norm2u3`, a `pow(x, 2.0)` a point, ran 3.7x its prediction
    /// as a function: bench/NOTES.md run 35).
    Pow,
}

impl MathFn {
    pub fn cost(self) -> MathCost {
        match self {
            MathFn::Fabs | MathFn::Abs | MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Trunc | MathFn::Fmin | MathFn::Fmax | MathFn::Copysign => MathCost::Instruction,
            MathFn::Pow => MathCost::Pow,
            _ => MathCost::Function,
        }
    }
}

/// Which array a load or store touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArrayRef {
    /// A kernel parameter of kind [`ParamKind::Array`] or [`ParamKind::RowTable`] (global
    /// memory).
    Param(u32),
    /// A local array (a private array such as `double tmp[3]` declared in the body).
    Local(Handle<Local>),
    /// A shared-memory array of the grid kernel (`GridKernel::shared`).
    Shared(u32),
    /// The partial results of reduction `n` (`GridKernel::reductions[n]`): one element per block,
    /// indexed by the linear block number, except in a launch of one block, where every thread
    /// writes its own value at its linear thread index. Written by the grid kernel, folded in
    /// index order after the host variable's value by the runtime (so that a reduction over one
    /// block's iterations gives the sequential answer: see `opt::mapping`).
    Partials(u32),
    /// An element of the given type at a device address the kernel computes (an integer the
    /// program turned into a pointer, `*((double *) p[i])`, such as an address `host_data
    /// use_device` gave the host): the one index is the byte address. Nothing tells which
    /// object it lies in, so a launch of a kernel with such accesses makes every device copy
    /// current before it and counts every one as written after it.
    Address(ScalarType),
}

/// Whether `body` reads or writes memory at computed addresses ([`ArrayRef::Address`]).
pub fn uses_addresses(body: &Body) -> bool {
    let loads = body.exprs.iter().any(|(_, e)| matches!(e.kind, ExprKind::Load { array: ArrayRef::Address(_), .. }));
    let mut stores = false;
    for_each_stmt(&body.block, &mut |stmt| {
        if let Stmt::Store { array: ArrayRef::Address(_), .. } | Stmt::Atomic { array: ArrayRef::Address(_), .. } = stmt {
            stores = true;
        }
    });
    loads || stores
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    /// Integer constant of the node's type (bit pattern sign-extended into i64).
    ConstInt(i64),
    ConstFloat(f64),
    /// A scalar parameter's value.
    Param(u32),
    Local(Handle<Local>),
    /// Element of an array; one index per dimension, outermost first (`a[i][j]` has two).
    Load { array: ArrayRef, indices: Vec<Handle<Expr>> },
    Unary { op: UnaryOp, arg: Handle<Expr> },
    Binary { op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr> },
    /// C's `c ? a : b`; only the chosen side is evaluated.
    Select { cond: Handle<Expr>, then: Handle<Expr>, otherwise: Handle<Expr> },
    /// Conversion to the node's type, with C's rules (float to int truncates).
    Cast { arg: Handle<Expr> },
    Math { func: MathFn, args: Vec<Handle<Expr>> },
    /// A call of a `routine seq` device function with a result.
    Call { func: Handle<Function>, args: Vec<Handle<Expr>> },
    // Grid-level only (the verifier refuses them in a `Kernel`):
    ThreadIdx(Axis),
    BlockIdx(Axis),
    BlockDim(Axis),
    GridDim(Axis),
}

impl ExprKind {
    /// The expressions this one applies its operation to.
    pub fn operands(&self) -> Vec<Handle<Expr>> {
        match self {
            ExprKind::Load { indices, .. } => indices.clone(),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => vec![*arg],
            ExprKind::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
            ExprKind::Select { cond, then, otherwise } => vec![*cond, *then, *otherwise],
            ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => args.clone(),
            _ => Vec::new(),
        }
    }

    /// The same operation applied to `operands` instead, given in the order of
    /// [`ExprKind::operands`] (for copying an expression into another body).
    pub fn with_operands(&self, operands: &[Handle<Expr>]) -> ExprKind {
        match self {
            ExprKind::Load { array, .. } => ExprKind::Load { array: *array, indices: operands.to_vec() },
            ExprKind::Unary { op, .. } => ExprKind::Unary { op: *op, arg: operands[0] },
            ExprKind::Cast { .. } => ExprKind::Cast { arg: operands[0] },
            ExprKind::Binary { op, .. } => ExprKind::Binary { op: *op, lhs: operands[0], rhs: operands[1] },
            ExprKind::Select { .. } => ExprKind::Select { cond: operands[0], then: operands[1], otherwise: operands[2] },
            ExprKind::Math { func, .. } => ExprKind::Math { func: *func, args: operands.to_vec() },
            ExprKind::Call { func, .. } => ExprKind::Call { func: *func, args: operands.to_vec() },
            other => other.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: ScalarType,
    /// Where in the user's source it came from (`Span::default()` for generated code).
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LocalKind {
    /// A variable declared in the body.
    Var,
    /// The index of a parallel dimension or of a sequential loop.
    LoopIndex,
    /// `private(x)`: uninitialised per iteration.
    Private,
    /// `firstprivate(x)`: starts as the host value of param `n`.
    FirstPrivate(u32),
    /// The per-thread accumulator of `Kernel::reductions[n]` (starts at the operator's identity).
    Reduction(u32),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Local {
    pub name: String,
    pub ty: ScalarType,
    /// `Some(dims)` for a local array (each dimension's constant length).
    pub array_dims: Option<Vec<u32>>,
    pub kind: LocalKind,
    pub span: Span,
}

/// The update an atomic statement makes: `x = x op v` (`x = v op x` for the `*Rev` forms), with
/// C's conversions: both sides are converted to `compute_type(elem, type of v)`, combined there,
/// and the result converted back to the element type (`x = v` for `Write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AtomicOp {
    /// `x = v` (atomic write)
    Write,
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    /// `x = x << v`
    Shl,
    /// `x = x >> v`
    Shr,
    /// `x = v - x`
    SubRev,
    /// `x = v / x`
    DivRev,
    /// `x = v << x`
    ShlRev,
    /// `x = v >> x`
    ShrRev,
    /// `x = x && v` (0 or 1 in the element type)
    LogAnd,
    /// `x = x || v`
    LogOr,
}

impl AtomicOp {
    /// The binary operator that combines the two sides (`None` for `Write`).
    pub fn binary(self) -> Option<BinaryOp> {
        Some(match self {
            AtomicOp::Write => return None,
            AtomicOp::Add => BinaryOp::Add,
            AtomicOp::Sub | AtomicOp::SubRev => BinaryOp::Sub,
            AtomicOp::Mul => BinaryOp::Mul,
            AtomicOp::Div | AtomicOp::DivRev => BinaryOp::Div,
            AtomicOp::Max => BinaryOp::Max,
            AtomicOp::Min => BinaryOp::Min,
            AtomicOp::BitAnd => BinaryOp::BitAnd,
            AtomicOp::BitOr => BinaryOp::BitOr,
            AtomicOp::BitXor => BinaryOp::BitXor,
            AtomicOp::Shl | AtomicOp::ShlRev => BinaryOp::Shl,
            AtomicOp::Shr | AtomicOp::ShrRev => BinaryOp::Shr,
            AtomicOp::LogAnd => BinaryOp::LogAnd,
            AtomicOp::LogOr => BinaryOp::LogOr,
        })
    }

    /// Whether the operand is the left side (`x = v op x`).
    pub fn reversed(self) -> bool {
        matches!(self, AtomicOp::SubRev | AtomicOp::DivRev | AtomicOp::ShlRev | AtomicOp::ShrRev)
    }

    /// The type the update computes in, for an element of type `elem` and an operand of type
    /// `operand` (C's usual arithmetic conversions; a shift computes in its promoted left side).
    pub fn compute_type(self, elem: ScalarType, operand: ScalarType) -> ScalarType {
        match self {
            AtomicOp::Write | AtomicOp::LogAnd | AtomicOp::LogOr => elem,
            AtomicOp::Shl | AtomicOp::Shr => promote(elem),
            AtomicOp::ShlRev | AtomicOp::ShrRev => promote(operand),
            _ => common_type(elem, operand),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    Assign { local: Handle<Local>, value: Handle<Expr> },
    Store { array: ArrayRef, indices: Vec<Handle<Expr>>, value: Handle<Expr>, span: Span },
    /// `#pragma acc atomic update|write`: `array[indices] op= value` indivisibly.
    /// `capture` stores the old value (before the update) into the local.
    Atomic {
        op: AtomicOp,
        array: ArrayRef,
        indices: Vec<Handle<Expr>>,
        value: Handle<Expr>,
        capture: Option<Handle<Local>>,
        span: Span,
    },
    If { cond: Handle<Expr>, then: Block, otherwise: Block },
    /// A sequential loop. `for (init; cond; step) body` lowers to the init statements followed by
    /// `Loop { cond: Some(cond), test_first: true, body, continuing: step }`; `do body while (c)`
    /// has `test_first: false`. `continue` jumps to `continuing`. `range` is filled in by lowering
    /// when the loop is a counted loop over an affine range (the analysis uses it).
    Loop { cond: Option<Handle<Expr>>, test_first: bool, body: Block, continuing: Block, range: Option<LoopRange> },
    Break,
    Continue,
    /// Only in device functions.
    Return(Option<Handle<Expr>>),
    /// An expression evaluated for its effect (a call of a void device function).
    Eval(Handle<Expr>),
    /// `__syncthreads()`: grid level only.
    Barrier,
}

impl Stmt {
    /// The root of every expression the statement, and the statements nested in it, evaluate.
    pub fn root_exprs(&self) -> Vec<Handle<Expr>> {
        let mut out = Vec::new();
        for_each_stmt(std::slice::from_ref(self), &mut |s| match s {
            Stmt::Assign { value, .. } => out.push(*value),
            Stmt::Store { indices, value, .. } | Stmt::Atomic { indices, value, .. } => {
                out.extend(indices.iter().copied());
                out.push(*value);
            }
            Stmt::If { cond, .. } => out.push(*cond),
            Stmt::Loop { cond, range, .. } => {
                out.extend(*cond);
                out.extend(range.iter().flat_map(|r| [r.start, r.end]));
            }
            Stmt::Eval(e) | Stmt::Return(Some(e)) => out.push(*e),
            Stmt::Return(None) | Stmt::Break | Stmt::Continue | Stmt::Barrier => {}
        });
        out
    }
}

/// A counted sequential loop: `var` takes `start, start+step, ...` while below `end`
/// (`step > 0`) or above it (`step < 0`); `end` is exclusive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopRange {
    pub var: Handle<Local>,
    pub start: Handle<Expr>,
    pub end: Handle<Expr>,
    pub step: i64,
}

pub type Block = Vec<Stmt>;

/// Expressions, locals and statements of one kernel, grid kernel or device function.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Body {
    pub exprs: Arena<Expr>,
    pub locals: Arena<Local>,
    pub block: Block,
}

impl PartialEq for Arena<Expr> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}
impl PartialEq for Arena<Local> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl Body {
    /// Every local `expr` reads, with repetition (array locals indexed by it included).
    pub fn locals_read(&self, expr: Handle<Expr>, out: &mut Vec<Handle<Local>>) {
        if expr.index() >= self.exprs.len() {
            return;
        }
        let kind = &self.exprs[expr].kind;
        match kind {
            ExprKind::Local(l) | ExprKind::Load { array: ArrayRef::Local(l), .. } => out.push(*l),
            _ => {}
        }
        for operand in kind.operands() {
            self.locals_read(operand, out);
        }
    }

    pub fn add_expr(&mut self, kind: ExprKind, ty: ScalarType, span: Span) -> Handle<Expr> {
        self.exprs.append(Expr { kind, ty, span })
    }

    /// `lhs op rhs` for generated code whose operands already have the operation's type: a
    /// comparison or `&&`/`||` yields `Bool`, anything else the left operand's type.
    pub fn add_binary(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        let ty = if op.yields_bool() { ScalarType::Bool } else { self.exprs[lhs].ty };
        self.add_expr(ExprKind::Binary { op, lhs, rhs }, ty, Span::default())
    }

    /// `(ty) arg`, or `arg` itself when it already has type `ty`.
    pub fn add_cast(&mut self, arg: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        if self.exprs[arg].ty == ty { arg } else { self.add_expr(ExprKind::Cast { arg }, ty, Span::default()) }
    }
}

// ---------------------------------------------------------------------------------------------
// Kernels

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ParamKind {
    Scalar(ScalarType),
    /// A base pointer into host-visible memory. `dims` has one entry per dimension the kernel
    /// indexes, outermost first: `double a[N][M]` has `[Some(N), Some(M)]`, `double *p` has
    /// `[None]`, `double (*a)[m]` has `[None, Some(m)]`. Every dimension but the first must be
    /// known (a constant or an expression of scalar params, in the owning body's arena).
    Array { elem: ScalarType, dims: Vec<Option<Handle<Expr>>>, restrict: bool, read_only: bool },
    /// A pointer to row pointers (`double **a`, or an array of pointers `double *a[N]`):
    /// `a[i][j]` is element `j` of the row `a[i]` points to, and every access has exactly
    /// these two indices. Rows are separate host objects of any length (they may even be the
    /// same row twice). The runtime binds the param to the device copy of the pointer table,
    /// after writing there the device address of every row the launch touches (the rows are
    /// "attached"), so the kernel loads `a[i]` from device memory and indexes the row there.
    RowTable { elem: ScalarType, read_only: bool },
}

impl ParamKind {
    /// Whether the param is memory the kernel indexes (an array or a row table).
    pub fn is_indexed(&self) -> bool {
        !matches!(self, ParamKind::Scalar(_))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// The host expression's text, for explain and for generated names (`n`, `mt->mrows`).
    pub name: String,
    pub kind: ParamKind,
    /// Index into the owning region's `args`.
    pub arg: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoopLevel {
    Gang,
    Worker,
    Vector,
    /// No level given: the mapping pass chooses.
    Auto,
}

/// One dimension of a parallel iteration space: `var` takes `start + k*step` for
/// `k in 0..trip_count`. `trip_count` is an expression of params (evaluated at launch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParallelDim {
    pub var: Handle<Local>,
    pub start: Handle<Expr>,
    pub trip_count: Handle<Expr>,
    pub step: i64,
    pub level: LoopLevel,
    /// `vector_length`/`vector(n)` or `num_gangs` when given as constants.
    pub size_hint: Option<u32>,
    /// `gang(dim: d)` on the loop (OpenACC 3.3 gang dimensions, 1 to 3), for explain: the
    /// mapping pass lays dims onto grid axes by nesting, which for loops nested as OpenACC
    /// requires (dims decreasing inward) puts dimension `d` on axis `d - 1`.
    pub gang_dim: Option<u8>,
    pub span: Span,
}

/// Which part of a C complex variable a reduction accumulates. A reduction on a complex
/// variable is two [`Reduction`]s at consecutive indices, the real part's first, each with the
/// address of its part as its target. `+` combines each part on its own; `*` combines the two
/// together (a complex product), so the mapping pass and the runtime treat such a pair as one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ComplexPart {
    Real,
    Imag,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reduction {
    pub op: ReductionOp,
    pub ty: ScalarType,
    /// The accumulator local (kind `LocalKind::Reduction(n)`).
    pub local: Handle<Local>,
    /// Index into the region's args of the host variable's address (`HostArgKind::ScalarOut`).
    pub target_arg: u32,
    pub span: Span,
    /// `Some` for the parts of a reduction on a complex variable.
    pub part: Option<ComplexPart>,
}

/// Why a kernel of a `kernels` region runs sequentially (explain shows it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequentialReason {
    pub message: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// `<function>_l<line>`, unique in the module.
    pub name: String,
    pub span: Span,
    pub params: Vec<Param>,
    /// Outermost first; empty for a kernel that runs its body once (one thread).
    pub space: Vec<ParallelDim>,
    pub body: Body,
    pub reductions: Vec<Reduction>,
    /// Scalars the kernel assigns that the host reads afterwards (only sequential kernels of
    /// `kernels` regions): (local, index of the host arg holding the variable's address).
    pub scalar_outputs: Vec<(Handle<Local>, u32)>,
    pub sequential_reason: Option<SequentialReason>,
    /// Host scalars the loop assigns without a clause that lowering made private to each
    /// iteration (each iteration assigns them before reading them; nothing reads them after).
    pub auto_private: Vec<String>,
    /// What lowering decided for host scalars the loop uses without a clause beyond making
    /// them private, one line each, for explain: reductions it recognised, flags every
    /// iteration sets to one value, loop variables whose final value the host computes.
    #[serde(default)]
    pub implicit: Vec<String>,
    /// Loops of the nest that lowering runs sequentially inside each thread instead of mapping
    /// them onto threads, and why (explain shows them).
    pub inner_sequential: Vec<SequentialReason>,
    /// The values of the construct's `num_gangs` clause as written, one per gang dimension
    /// (empty without one), for explain: the grid is sized by the trip counts, not by them.
    pub num_gangs: Vec<String>,
    /// Per parallel dim, in order, how a launch runs only a block of it (`opt::partition`), so
    /// that the runtime can split the kernel over several devices along any of them; empty for
    /// kernels it never splits.
    pub partitions: Vec<KernelPartition>,
    /// Set for a kernel written per thread (no parallel dims): its body already reads
    /// `ThreadIdx`/`BlockIdx`, uses shared arrays and has barriers, and runs with this launch.
    #[serde(default)]
    pub explicit_grid: Option<ExplicitGrid>,
}

/// The launch of a kernel the program wrote per thread, with block-local shared memory and
/// barriers (a MESI-CUDA kernel that uses `__shared__` or `__syncthreads()`): the mapping pass
/// keeps its body as it is and gives its grid kernel this shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplicitGrid {
    pub block: [u32; 3],
    /// Blocks per axis: expressions of params in the kernel body's arena (`I64`).
    pub grid: [Handle<Expr>; 3],
    pub shared: Vec<SharedArray>,
}

/// A kernel whose dim `dim` runs, at each launch, only iterations `first..first + count` of its
/// whole trip `0..trip` (`opt::partition` rewrote the dim's start and trip count in terms of
/// two params the runtime sets per device). A launch on one device runs `first = 0`,
/// `count = trip`: the kernel the source wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelPartition {
    /// Index into `Kernel::space` of the distributed dim.
    pub dim: u32,
    /// The region args (`HostArgKind::Int`) holding `first` and `count`: the host passes 0 for
    /// both, and the runtime replaces them before the launch.
    pub first_arg: u32,
    pub count_arg: u32,
    /// The dim's start and whole trip count as the source gives them (expressions of the
    /// other params, in the kernel body's arena).
    pub start: Handle<Expr>,
    pub trip: Handle<Expr>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedArray {
    pub name: String,
    pub elem: ScalarType,
    /// Constant dimensions, outermost first (already padded).
    pub dims: Vec<u32>,
}

impl SharedArray {
    pub fn bytes(&self) -> u64 {
        array_bytes(&self.dims, self.elem)
    }
}

/// Bytes of an array of `elem` with constant extents `dims`.
pub fn array_bytes(dims: &[u32], elem: ScalarType) -> u64 {
    dims.iter().fold(elem.size_bytes() as u64, |bytes, &d| bytes.saturating_mul(d as u64))
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridReduction {
    pub op: ReductionOp,
    pub ty: ScalarType,
    pub target_arg: u32,
    /// As in [`Reduction::part`].
    pub part: Option<ComplexPart>,
}

/// Launch shape. `block` is fixed when the grid kernel is made; `grid` are expressions of
/// params in the grid kernel's body arena, evaluated at launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchShape {
    pub block: [u32; 3],
    pub grid: [Handle<Expr>; 3],
}

/// How a parallel dim of the source kernel was laid onto one grid axis: the thread at global
/// position `g = blockIdx.axis * blockDim.axis + threadIdx.axis` runs iteration
/// `var = start + g * step`, for `g < trip`. The mapping pass records one per dim that owns its
/// axis alone (dims folded together into `Z` have none); the staging analysis reads them.
/// `start` and `trip` are uniform expressions (params and constants) in the grid body's arena.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisBinding {
    pub var: Handle<Local>,
    pub axis: Axis,
    pub start: Handle<Expr>,
    pub step: i64,
    pub trip: Handle<Expr>,
}

/// What sets a grid kernel apart from the other variants of its source kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VariantKind {
    /// The mapping pass's plain form: every array access goes to global memory.
    Global,
    /// Some reused array groups are staged in shared-memory tiles.
    Staged,
    /// A chain of kernels of one region made into one grid kernel (`opt::fusion`): its
    /// `source` is the chain's first kernel, and [`Module::fusions`] says which kernels it
    /// replaces. It is never among [`Module::variants_of`] any kernel.
    Fused,
}

/// A grid kernel's place among the variants of its source kernel (the runtime chooses which one
/// to launch; explain shows all of them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantInfo {
    pub kind: VariantKind,
    /// The cost model's estimate of this variant's time relative to the `Global` variant (which
    /// has 1.0); below 1 predicts a speed-up.
    pub estimated_ratio: f64,
    /// What the analysis found and decided for this variant, one line each (groups, footprints,
    /// reuse, what was staged and why, bank-conflict degree before and after padding).
    pub notes: Vec<String>,
    /// The array params whose reads go through shared-memory tiles. Staging assumes the kernel
    /// does not write them through another param: the runtime launches this variant only when
    /// none of them shares memory with an array the kernel writes.
    pub staged_params: Vec<u32>,
}

impl VariantInfo {
    pub fn global() -> VariantInfo {
        VariantInfo { kind: VariantKind::Global, estimated_ratio: 1.0, notes: Vec::new(), staged_params: Vec::new() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridKernel {
    pub name: String,
    pub span: Span,
    pub source: Handle<Kernel>,
    pub params: Vec<Param>,
    pub body: Body,
    pub shared: Vec<SharedArray>,
    pub launch: LaunchShape,
    pub reductions: Vec<GridReduction>,
    /// As in `Kernel::scalar_outputs`; only single-thread grid kernels have them.
    pub scalar_outputs: Vec<(Handle<Local>, u32)>,
    /// The parallel dims that own a grid axis alone (see [`AxisBinding`]).
    pub axes: Vec<AxisBinding>,
    pub variant: VariantInfo,
}

impl GridKernel {
    /// Bytes of shared memory the grid kernel declares.
    pub fn shared_memory_bytes(&self) -> u64 {
        self.shared.iter().map(SharedArray::bytes).sum()
    }

    /// The array params the kernel stores to or updates atomically. Device functions cannot
    /// name params, so the kernel's own body is all there is to look at.
    pub fn written_array_params(&self) -> std::collections::BTreeSet<u32> {
        let mut out = std::collections::BTreeSet::new();
        for_each_stmt(&self.body.block, &mut |stmt| {
            if let Stmt::Store { array: ArrayRef::Param(p), .. } | Stmt::Atomic { array: ArrayRef::Param(p), .. } = stmt {
                out.insert(*p);
            }
        });
        out
    }
}

/// Calls `f` on every statement of `block` and of the blocks nested in it (an `If`'s branches,
/// a `Loop`'s body and continuing block), each statement before the ones nested in it.
pub fn for_each_stmt(block: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for stmt in block {
        f(stmt);
        match stmt {
            Stmt::If { then, otherwise, .. } => {
                for_each_stmt(then, f);
                for_each_stmt(otherwise, f);
            }
            Stmt::Loop { body, continuing, .. } => {
                for_each_stmt(body, f);
                for_each_stmt(continuing, f);
            }
            _ => {}
        }
    }
}

/// [`for_each_stmt`] with mutable statements.
pub fn for_each_stmt_mut(block: &mut [Stmt], f: &mut impl FnMut(&mut Stmt)) {
    for stmt in block {
        f(stmt);
        match stmt {
            Stmt::If { then, otherwise, .. } => {
                for_each_stmt_mut(then, f);
                for_each_stmt_mut(otherwise, f);
            }
            Stmt::Loop { body, continuing, .. } => {
                for_each_stmt_mut(body, f);
                for_each_stmt_mut(continuing, f);
            }
            _ => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub params: Vec<Handle<Local>>,
    pub result: Option<ScalarType>,
    pub body: Body,
    pub span: Span,
}

/// The value of a param at launch (the runtime builds these from the region's host args).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    /// A host address (array params).
    Pointer(u64),
}

// ---------------------------------------------------------------------------------------------
// Regions: the host's view

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostArgKind {
    /// Evaluated as `long long`.
    Int,
    /// Evaluated as `double` (a `float` host value is exactly representable).
    Float,
    /// A pointer (array base). `size_expr` is the C expression for its size in bytes when the
    /// host knows it statically (`sizeof(a)` for an array object).
    Pointer,
    /// The address of a host scalar that the region writes back (reduction targets, scalar
    /// outputs): evaluated as `&x`.
    ScalarOut(ScalarType),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostArg {
    /// C expression text, valid at the region's place in the host code.
    pub c_expr: String,
    pub kind: HostArgKind,
    /// For `Pointer`: a C expression for the object's size in bytes, when statically known.
    pub size_expr: Option<String>,
}

/// A data clause after lowering: the section is a range of elements of the array whose base
/// pointer is arg `base`, from element arg `lo` (or 0) for arg `len` elements (or the whole
/// object when `len` is `None`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSection {
    pub kind: DataClauseKind,
    pub base: u32,
    pub lo: Option<u32>,
    pub len: Option<u32>,
    pub elem_size: u32,
    /// The clause's variable and sections as the user wrote them (`a[0:n][0:m]`).
    pub name: String,
    pub span: Span,
    /// `create(zero: ...)` / `copyout(zero: ...)`: a device copy this clause allocates starts
    /// zeroed (OpenACC 3.3).
    pub zero: bool,
    /// A two-dimensional section of a pointer to pointers (`copyin(a[0:n][0:m])` with
    /// `double **a`): `base`/`lo`/`len` select row pointers of the table (`elem_size` is a
    /// pointer's), and the clause applies to this section of each row they point to, while the
    /// table itself is only made present, holding the rows' device addresses (deep copy, as
    /// OpenACC 3.3 section 2.7.2 says). `None` for a plain section.
    pub rows: Option<RowSection>,
    /// The clause names an automatic local array that its function's host code never names
    /// (front end: `locals_the_host_never_names`): when its device copy is let go, the bytes
    /// only the device holds are dropped, not copied back, since nothing could read them.
    pub dead_on_host: bool,
}

/// The part of a two-dimensional data clause on a pointer to pointers that selects elements of
/// every row: from element arg `lo` (or 0) for arg `len` elements (or the whole row object, as
/// the runtime tracks it, when `len` is `None`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowSection {
    pub lo: Option<u32>,
    pub len: Option<u32>,
    pub elem_size: u32,
}

/// What an `init`, `shutdown` or `set` directive does to the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RuntimeOp {
    Init,
    Shutdown,
    Set,
}

/// An `init`, `shutdown` or `set` directive: the device types it names (empty: the current
/// one), and the args holding its `device_num` and `default_async` values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuntimeDirective {
    pub op: RuntimeOp,
    pub device_types: Vec<String>,
    pub device_num: Option<u32>,
    pub default_async: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RegionKind {
    /// A `parallel`/`kernels`/`serial` construct: its kernels run in order; `data` holds its
    /// data clauses (entered before the first kernel, exited after the last).
    Compute { kernels: Vec<Handle<Kernel>>, data: Vec<DataSection> },
    /// A structured `data` construct: the host emits enter before the body, exit after.
    Data { data: Vec<DataSection> },
    EnterData { data: Vec<DataSection> },
    /// `finalize`: the dynamic reference counts drop to zero instead of by one.
    ExitData { data: Vec<DataSection>, finalize: bool },
    /// `host` sections are made valid on the host, `device` sections on the device.
    Update { data: Vec<DataSection> },
    Wait,
    /// `init`, `shutdown`, `set`.
    Runtime(RuntimeDirective),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub id: u32,
    /// The directive and the statement it covers, in the preprocessed text: the host back end
    /// replaces this span (for `Data`, wraps the body instead).
    pub span: Span,
    /// For `Data`: the span of the body statement kept in the host code.
    pub body_span: Option<Span>,
    pub kind: RegionKind,
    pub args: Vec<HostArg>,
    /// The `if(...)` clause: arg index of an `Int` that, when zero, runs the region's original
    /// statement on the host instead.
    pub if_arg: Option<u32>,
    /// The enclosing function's name.
    pub function: String,
    /// Pointer args naming an array (an automatic array, or a pointer the host only sets to
    /// fresh blocks and frees) whose elements the function's host code never reads: at most it
    /// assigns them. Nothing on the host can observe what kernels leave in such an array; the
    /// fusion pass leaves out stores to it that no other kernel reads.
    pub unread_on_host: Vec<u32>,
    /// C statements the host runs after the region (a compute region's loop variables that the
    /// kernels keep private and the host reads afterwards get their final value here:
    /// `for (i = 0; i < n; i++);`).
    #[serde(default)]
    pub host_after: Vec<String>,
    /// Pointer args naming a host scalar the kernels store in place (`Treatment::SameValue`
    /// in lowering): the host reads and assigns it by name, which no coherence hook covers, so
    /// when the region ends its host copy is made valid and the only current one.
    #[serde(default)]
    pub settle_after: Vec<u32>,
}

/// The whole compiled program, all translation units together.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Module {
    pub kernels: Arena<Kernel>,
    pub grid_kernels: Arena<GridKernel>,
    pub functions: Arena<Function>,
    pub regions: Vec<Region>,
    /// Chains of consecutive kernels of a compute region that one fused grid kernel may run
    /// instead (`opt::fusion`), in region order.
    pub fusions: Vec<Fusion>,
    /// Pairs of consecutive kernels the fusion pass considered and did not fuse, and why (for
    /// explain).
    pub unfused: Vec<FusionRefusal>,
    /// Host `for` loops whose body is one compute region (time-step loops), which the host
    /// runs through the runtime's `region_steps`.
    #[serde(default)]
    pub step_loops: Vec<StepLoop>,
    /// Grid kernels that run several steps of a step loop's region in one launch
    /// (`opt::fusion::steps`), in region order, fewest steps first.
    #[serde(default)]
    pub step_fusions: Vec<StepFusion>,
    /// Step loops the pass did not fuse, and why (for explain).
    #[serde(default)]
    pub steps_unfused: Vec<(u32, String)>,
}

/// A host loop `for (v = a; v < e; v++)` (or `<=`, `++v`, `v += 1`) whose body is exactly one
/// compute region whose args do not name `v`: the host passes the runtime the iterations left
/// and skips as many as it ran (`v += region_steps(...) - 1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepLoop {
    /// Index into [`Module::regions`].
    pub region: u32,
    /// The loop variable (a C identifier of integer type).
    pub counter: String,
    /// A C expression for the iterations left, valid in the loop's body.
    pub remaining: String,
    /// The body ends by swapping two pointers the region names (`tmp = a; a = b; b = tmp;`):
    /// their region args. The runtime then runs one step or an even number (after which the
    /// pointers are back where they were: the host skips the swap).
    #[serde(default)]
    pub swap: Option<(u32, u32)>,
}

/// `steps` consecutive runs of a compute region's kernels as one grid kernel: the chain of
/// fusion with redundant iterations over the region's kernels repeated `steps` times (each
/// step's arrays are versions of the region's arrays; only the last step stores).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepFusion {
    /// Index into [`Module::regions`].
    pub region: u32,
    pub steps: u32,
    pub grid: Handle<GridKernel>,
    /// `(output, input)` params of `grid` for each array the steps read before they write it:
    /// the launch reads the array's device copy through `input` and writes the new values
    /// through `output` into a second buffer of the same layout (a block may not overwrite what
    /// another block's redundant iterations still read), and the runtime alternates the two.
    pub renamed: Vec<(u32, u32)>,
    /// `--fusion on`.
    pub forced: bool,
    /// The pass's estimate of the time of one step fused relative to one unfused step.
    pub estimated_ratio: f64,
    pub notes: Vec<String>,
}

/// Consecutive kernels of one compute region and the grid kernel that runs them all in one
/// launch, with redundant iterations at each block's edges (`opt::fusion`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fusion {
    /// Index into [`Module::regions`].
    pub region: u32,
    /// The kernels it replaces, in the region's order (consecutive there).
    pub members: Vec<Handle<Kernel>>,
    /// The fused grid kernel (variant kind [`VariantKind::Fused`]).
    pub grid: Handle<GridKernel>,
    /// `--fusion on`: the runtime runs the fused kernel whenever it is usable, instead of
    /// choosing by estimate or measurement.
    pub forced: bool,
    /// The pass's estimate of the fused kernel's time relative to the members' launches (1.0);
    /// below 1 predicts a gain.
    pub estimated_ratio: f64,
    /// A second fused grid kernel that leaves out the global stores of intermediate arrays
    /// neither the host nor any kernel outside the chain reads; the runtime runs it instead of
    /// `grid`. `None` when there is no such array.
    pub without_stores: Option<Handle<GridKernel>>,
    /// What the pass found, one line each, for explain: the dependence graph with its
    /// distances, each kernel's redundant iterations, the exchange arrays.
    pub notes: Vec<String>,
}

/// Why the fusion pass did not put kernel `next` in one launch with the kernel before it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FusionRefusal {
    pub region: u32,
    pub previous: Handle<Kernel>,
    pub next: Handle<Kernel>,
    pub reason: String,
}

impl Module {
    /// Whether a kernel with `body` may access memory at computed addresses: in its own body
    /// or in a device function (any of the module's: they are few, and a device function
    /// reached only through another one is still counted).
    pub fn reaches_addresses(&self, body: &Body) -> bool {
        uses_addresses(body) || self.functions.iter().any(|(_, f)| uses_addresses(&f.body))
    }

    /// The plain grid kernel made from `kernel` by the mapping pass (the first of its variants).
    pub fn grid_of(&self, kernel: Handle<Kernel>) -> Option<Handle<GridKernel>> {
        self.variants_of(kernel).first().copied()
    }

    /// Every grid kernel made from `kernel`, plain one first, in the order the passes added them.
    pub fn variants_of(&self, kernel: Handle<Kernel>) -> Vec<Handle<GridKernel>> {
        self.grid_kernels
            .iter()
            .filter(|(_, g)| g.source == kernel && g.variant.kind != VariantKind::Fused)
            .map(|(h, _)| h)
            .collect()
    }
}

/// C's integer promotions: everything narrower than `int` (and `_Bool`) computes as `int`.
pub fn promote(t: ScalarType) -> ScalarType {
    use ScalarType::*;
    match t {
        Bool | I8 | U8 | I16 | U16 => I32,
        other => other,
    }
}

fn int_rank(t: ScalarType) -> u8 {
    use ScalarType::*;
    match t {
        Bool => 0,
        I8 | U8 => 1,
        I16 | U16 => 2,
        I32 | U32 => 3,
        I64 | U64 => 4,
        F32 | F64 | F80 => 5,
    }
}

fn to_unsigned(t: ScalarType) -> ScalarType {
    use ScalarType::*;
    match t {
        I8 => U8,
        I16 => U16,
        I32 => U32,
        I64 => U64,
        other => other,
    }
}

/// C's usual arithmetic conversions: the type both operands of a binary operator take.
pub fn common_type(a: ScalarType, b: ScalarType) -> ScalarType {
    use ScalarType::*;
    if a == F64 || b == F64 {
        return F64;
    }
    if a == F32 || b == F32 {
        return F32;
    }
    let (a, b) = (promote(a), promote(b));
    if a == b {
        return a;
    }
    let (hi, lo) = if int_rank(a) >= int_rank(b) { (a, b) } else { (b, a) };
    if int_rank(hi) == int_rank(lo) {
        // Same rank, one signed and one unsigned: unsigned wins.
        return to_unsigned(hi);
    }
    if !hi.is_signed() {
        return hi;
    }
    // A signed type of greater rank represents every value of the narrower unsigned one on LP64.
    hi
}
