//! The syntax tree of one preprocessed translation unit, as the parser builds it. Every node
//! carries a [`Span`] into the preprocessed text, so later stages can both report errors in the
//! user's file and copy host code out verbatim (the host back end splices text by span).
//!
//! OpenACC pragmas are part of the tree: a construct directive wraps the statement it applies
//! to ([`StmtKind::Acc`] with `body: Some`), a standalone directive (`update`, `enter data`,
//! `exit data`, `wait`) is a statement of its own (`body: None`).

use crate::diag::Span;

mod init_list;
pub use init_list::{InitItem, InitList, NumberLiteral, NumberRun};

#[derive(Clone, Debug)]
pub struct TranslationUnit {
    /// Index into `SourceSet::units`; equals every span's `tu`.
    pub tu: u32,
    pub items: Vec<ExternalDecl>,
    /// Text edits the host code needs beyond what the tree says (empty for C): a dialect the
    /// front end reads as C (`front::cuda`) is copied into the host code with these applied.
    pub host_rewrites: Vec<HostRewrite>,
    /// The `#pragma omp` lines of the user's host code (outside compute constructs, whose
    /// OpenMP the parser warns about and drops). The host back end copies them as they are;
    /// the driver says, once, what becomes of them without `-fopenmp` (`driver::openmp`).
    pub openmp_pragmas: Vec<Span>,
}

/// The host back end puts `text` in place of `span` of the preprocessed text (an empty span
/// inserts). Rewrites never overlap each other; they may lie inside a region's span only where
/// that region's own edit keeps the source text.
#[derive(Clone, Debug)]
pub struct HostRewrite {
    pub span: Span,
    pub text: String,
}

/// `replacement` padded with newlines so that it spans as many lines as `original`, the text
/// it replaces: the lines after an edit of the host code keep their numbers.
pub fn keep_lines(mut replacement: String, original: &str) -> String {
    let newlines = |s: &str| s.bytes().filter(|b| *b == b'\n').count();
    for _ in newlines(&replacement)..newlines(original) {
        replacement.push('\n');
    }
    replacement
}

#[derive(Clone, Debug)]
pub enum ExternalDecl {
    Function(FunctionDef),
    Declaration(Declaration),
    /// A file-scope `#pragma acc routine(name) seq` (or one not followed by a function).
    Directive(Directive),
}

#[derive(Clone, Debug)]
pub struct FunctionDef {
    pub specs: DeclSpecs,
    /// Its `derived` starts with `DerivedType::Function`.
    pub declarator: Declarator,
    pub body: Block,
    /// `#pragma acc routine seq` written just before the function.
    pub routine: Option<Directive>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Declaration {
    pub specs: DeclSpecs,
    pub declarators: Vec<InitDeclarator>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct InitDeclarator {
    pub declarator: Declarator,
    pub init: Option<Initializer>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageClass {
    Typedef,
    Extern,
    Static,
    Auto,
    Register,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Qualifiers {
    pub is_const: bool,
    pub is_volatile: bool,
    pub is_restrict: bool,
}

#[derive(Clone, Debug)]
pub struct DeclSpecs {
    pub storage: Option<StorageClass>,
    pub qualifiers: Qualifiers,
    pub is_inline: bool,
    pub ty: TypeSpec,
    pub span: Span,
    /// CUDA's `__shared__` (the MESI-CUDA dialect): an array local to a kernel's thread block.
    pub block_shared: bool,
}

/// The arithmetic types of C, after the keywords (`unsigned long int`...) have been combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BaseType {
    Void,
    Bool,
    Char,
    SChar,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    LongLong,
    ULongLong,
    Float,
    Double,
    LongDouble,
    /// `float _Complex` (also spelt `_Complex float`, `__complex__ float`).
    ComplexFloat,
    /// `double _Complex`, and `_Complex` alone (GNU C).
    ComplexDouble,
    ComplexLongDouble,
}

#[derive(Clone, Debug)]
pub enum TypeSpec {
    Base(BaseType),
    /// `struct S` / `union U`, with the member list when this occurrence defines it.
    Struct(StructSpec),
    Enum(EnumSpec),
    /// A name declared by `typedef` (user code or system header; the parser keeps the set).
    TypedefName(String),
}

#[derive(Clone, Debug)]
pub struct StructSpec {
    pub is_union: bool,
    pub tag: Option<String>,
    /// `None` for a reference (`struct S *p`), `Some` for a definition.
    pub fields: Option<Vec<Declaration>>,
    /// For a definition: why its layout may not be the natural one that the semantic model
    /// computes (a bit-field, an attribute, `_Alignas`, `#pragma pack`), which the tree does
    /// not otherwise keep.
    pub unnatural_layout: Option<&'static str>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct EnumSpec {
    pub tag: Option<String>,
    pub variants: Option<Vec<(String, Option<Expr>, Span)>>,
    pub span: Span,
}

/// A declarator: the declared name and the type derivations applied to the base type,
/// listed from the name outward. `int *a[10]` is `[Array(10), Pointer]` ("a is an array of
/// 10 pointers to int"); `int (*p)[10]` is `[Pointer, Array(10)]`.
#[derive(Clone, Debug)]
pub struct Declarator {
    /// `None` in abstract declarators (casts, `sizeof(type)`, unnamed parameters).
    pub name: Option<String>,
    pub name_span: Span,
    pub derived: Vec<DerivedType>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum DerivedType {
    Pointer(Qualifiers),
    /// `size: None` for `a[]`; a non-constant size is a VLA.
    Array { size: Option<Box<Expr>>, qualifiers: Qualifiers },
    /// `prototyped` is false for a parameter list without types: `()` (unspecified
    /// parameters; `(void)` is a prototype of none) and an old-style (K&R) definition's
    /// identifier list, whose `params` the parser builds from the declarations after the `)`
    /// (in the list's order, `int` for a name left undeclared), as a prototype would have them.
    /// Calls of a function without a prototype pass their arguments with the default
    /// promotions, which the definition's parameter types then receive.
    Function { params: Vec<ParamDecl>, variadic: bool, prototyped: bool },
}

#[derive(Clone, Debug)]
pub struct ParamDecl {
    pub specs: DeclSpecs,
    pub declarator: Declarator,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct TypeName {
    pub specs: DeclSpecs,
    /// Abstract declarator (`name: None`).
    pub declarator: Declarator,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Initializer {
    Expr(Expr),
    /// `{ .x = 1, [2] = 3, 4 }`
    List(InitList),
}

#[derive(Clone, Debug)]
pub enum Designator {
    Field(String),
    Index(Expr),
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Compound(Block),
    /// `;` is `Expr(None)`.
    Expr(Option<Expr>),
    Decl(Declaration),
    If { cond: Expr, then: Box<Stmt>, otherwise: Option<Box<Stmt>> },
    While { cond: Expr, body: Box<Stmt> },
    DoWhile { body: Box<Stmt>, cond: Expr },
    For { init: Option<ForInit>, cond: Option<Expr>, step: Option<Expr>, body: Box<Stmt> },
    Switch { cond: Expr, body: Box<Stmt> },
    Case { value: Expr, body: Box<Stmt> },
    Default { body: Box<Stmt> },
    Labeled { label: String, body: Box<Stmt> },
    Goto(String),
    Break,
    Continue,
    Return(Option<Expr>),
    /// An OpenACC directive. Constructs (`parallel`, `kernels`, `loop`, combined forms, `data`,
    /// `atomic`, `host_data`) wrap the next statement; standalone directives have `body: None`.
    Acc { directive: Directive, body: Option<Box<Stmt>> },
}

#[derive(Clone, Debug)]
pub enum ForInit {
    Decl(Declaration),
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Deref,
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
    /// GNU C's `__real__ z` and `__imag__ z`: a part of a complex value (of a real one, the
    /// value itself and zero).
    Real,
    Imag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
    Comma,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntSuffix {
    pub unsigned: bool,
    /// 0: none, 1: `l`, 2: `ll`.
    pub longs: u8,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Ident(String),
    /// `radix` is 10, 8 or 16 (C picks the type of an unsuffixed literal by it).
    IntLit { value: u64, suffix: IntSuffix, radix: u32 },
    /// `single`: an `f`/`F` suffix; `long_double`: `l`/`L`.
    FloatLit { value: f64, single: bool, long_double: bool },
    /// GNU C's imaginary constant (`1.0iF`, what `I` expands to): `value` times the imaginary
    /// unit, of type `float _Complex` (`single`), `double _Complex` or `long double _Complex`.
    ImagLit { value: f64, single: bool, long_double: bool },
    CharLit(i64),
    /// Adjacent literals already concatenated; escapes decoded.
    StringLit(String),
    Unary { op: UnaryOp, operand: Box<Expr> },
    Binary { op: BinaryOp, lhs: Box<Expr>, rhs: Box<Expr> },
    /// `op: None` is `=`; `Some(Add)` is `+=`, and so on.
    Assign { op: Option<BinaryOp>, lhs: Box<Expr>, rhs: Box<Expr> },
    Conditional { cond: Box<Expr>, then: Box<Expr>, otherwise: Box<Expr> },
    Cast { ty: Box<TypeName>, expr: Box<Expr> },
    SizeofType(Box<TypeName>),
    SizeofExpr(Box<Expr>),
    Call { callee: Box<Expr>, args: Vec<Expr> },
    Index { base: Box<Expr>, index: Box<Expr> },
    Member { base: Box<Expr>, field: String, arrow: bool },
    /// `(type){ ... }`
    CompoundLiteral { ty: Box<TypeName>, init: Box<Initializer> },
}

// ---------------------------------------------------------------------------------------------
// OpenACC directives

#[derive(Clone, Debug)]
pub struct Directive {
    pub kind: DirectiveKind,
    pub clauses: Vec<Clause>,
    /// The whole `#pragma acc ...` line.
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    Update,
    Read,
    Write,
    Capture,
}

#[derive(Clone, Debug)]
pub enum DirectiveKind {
    Parallel,
    Kernels,
    Serial,
    Loop,
    ParallelLoop,
    KernelsLoop,
    SerialLoop,
    Data,
    EnterData,
    ExitData,
    HostData,
    Update,
    /// `wait` or `wait(1, 2)`: the queue expressions are kept as clauses-free args.
    Wait(Vec<Expr>),
    /// `atomic` alone means `atomic update`.
    Atomic(AtomicKind),
    /// `routine` or `routine(name)`.
    Routine(Option<String>),
    Declare,
    Cache(Vec<DataRef>),
    /// `init`, `shutdown`, `set`: executable directives acting on the runtime itself.
    Init,
    Shutdown,
    Set,
    /// Not a directive the user writes: a MESI-CUDA kernel written per thread (it uses
    /// `__shared__` arrays or `__syncthreads()`), which runs its body as it stands on every
    /// thread of this launch (`front::cuda`).
    CudaKernel(Box<CudaLaunch>),
}

/// The launch of a [`DirectiveKind::CudaKernel`]: the block shape (constant: the kernel's
/// shared arrays and barriers are written for it) and the blocks per axis (host expressions).
#[derive(Clone, Debug)]
pub struct CudaLaunch {
    pub block: [u32; 3],
    pub grid: [Expr; 3],
}

impl DirectiveKind {
    /// A compute construct: `parallel`, `kernels`, `serial` and their combined `loop` forms
    /// (and a MESI-CUDA kernel written per thread).
    pub fn is_compute(&self) -> bool {
        matches!(
            self,
            DirectiveKind::CudaKernel(_)
                | DirectiveKind::Parallel
                | DirectiveKind::Kernels
                | DirectiveKind::Serial
                | DirectiveKind::ParallelLoop
                | DirectiveKind::KernelsLoop
                | DirectiveKind::SerialLoop
        )
    }
}

impl DirectiveKind {
    /// Standalone directives have no statement attached.
    pub fn is_standalone(&self) -> bool {
        matches!(
            self,
            DirectiveKind::EnterData
                | DirectiveKind::ExitData
                | DirectiveKind::Update
                | DirectiveKind::Wait(_)
                | DirectiveKind::Routine(_)
                | DirectiveKind::Declare
                | DirectiveKind::Cache(_)
                | DirectiveKind::Init
                | DirectiveKind::Shutdown
                | DirectiveKind::Set
        )
    }
}

/// Data clause kinds and reduction operators are vocabulary the IR and the runtime share:
/// they live in the IR.
pub use crate::ir::{DataClauseKind, ReductionOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultKind {
    None,
    Present,
}

/// `a`, `a[lo:len]`, `a[lo:len][0:m]`, `mt->m[0:n]`: a variable (any host lvalue
/// expression) and zero or more sections, outermost dimension first.
#[derive(Clone, Debug)]
pub struct DataRef {
    pub base: Expr,
    pub sections: Vec<Section>,
    pub span: Span,
}

/// `[lo:len]`; `[:len]` has `lo: None`, `[lo:]` has `len: None`; a plain subscript `[i]`
/// is `lo: Some(i)`, `len: None` with `single: true`.
#[derive(Clone, Debug)]
pub struct Section {
    pub lo: Option<Expr>,
    pub len: Option<Expr>,
    pub single: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Clause {
    pub kind: ClauseKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ClauseKind {
    /// `zero` is the `zero:` modifier of `create`/`copyout` (OpenACC 3.3: a device copy the
    /// clause allocates starts zeroed); `copyin(readonly: ...)` is accepted and dropped.
    Data { kind: DataClauseKind, refs: Vec<DataRef>, zero: bool },
    Private(Vec<DataRef>),
    FirstPrivate(Vec<DataRef>),
    Reduction { op: ReductionOp, vars: Vec<DataRef> },
    Collapse(u32),
    /// `gang`, `gang(n)`/`gang(num: n)`, `gang(dim: d)` (OpenACC 3.3 gang dimensions: the loop
    /// runs across gang dimension `d`, 1 to 3); `static:` is accepted as a hint and dropped.
    Gang { num: Option<Expr>, dim: Option<Expr> },
    Worker(Option<Expr>),
    Vector(Option<Expr>),
    /// `num_gangs(n)`, or one value per gang dimension (`num_gangs(n1, n2, n3)`, OpenACC 3.3).
    NumGangs(Vec<Expr>),
    NumWorkers(Expr),
    VectorLength(Expr),
    Independent,
    Seq,
    Auto,
    Async(Option<Expr>),
    Wait(Vec<Expr>),
    If(Expr),
    Default(DefaultKind),
    IfPresent,
    Finalize,
    /// `tile(8, 8)`: accepted and treated as a hint.
    Tile(Vec<Expr>),
    /// `device_type(nvidia, host)` / `device_type(*)` (`dtype` too) on `init`, `shutdown` and
    /// `set`, where it names the device type acted on. On other directives it only scopes the
    /// clauses after it and is resolved by the parser: it never reaches the tree there.
    DeviceType(Vec<String>),
    DeviceNum(Expr),
    DefaultAsync(Expr),
    /// `self` / `self(cond)` on a compute construct: run it on the host (when `cond` holds).
    SelfHost(Option<Expr>),
    /// `bind(name)` / `bind("name")` on `routine`: the device version of the function.
    Bind(String),
    NoHost,
}
