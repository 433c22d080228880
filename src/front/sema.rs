//! The semantic model lowering works against: C types, scopes of ordinary identifiers
//! (variables, typedefs, enum constants, functions), struct/union tags, the system typedefs
//! whose declarations the parser skipped, integer constant evaluation, and C's arithmetic
//! conversions mapped onto [`ScalarType`].
//!
//! `long double` is [`ScalarType::F80`] in memory (the x87 format on x86-64) and `F64` as a value:
//! [`CType::scalar`] gives the type a value computes in, [`CType::element_scalar`] the format an
//! array element has. C's complex types are [`CType::Complex`] of their component type.

/// C's promotions and usual arithmetic conversions live with the IR's types; the front end
/// applies them where it types expressions.
pub use crate::ir::{common_type, promote};
use std::collections::HashMap;

use crate::diag::{Diagnostic, Span};
use crate::front::ast::{
    self, BaseType, BinaryOp, DeclSpecs, Declarator, DerivedType, Expr, ExprKind, IntSuffix, Qualifiers, StorageClass,
    TypeSpec, UnaryOp,
};
use crate::ir::ScalarType;

/// A C type as lowering needs it.
#[derive(Clone, Debug)]
pub enum CType {
    Void,
    Scalar(ScalarType),
    /// `float _Complex` (`F32`), `double _Complex` (`F64`), `long double _Complex` (`F80`): the
    /// type of each of the real and imaginary parts, which lie side by side in memory.
    Complex(ScalarType),
    /// `quals` are the pointer's own qualifiers (`double *restrict p`).
    Pointer { to: Box<CType>, quals: Qualifiers },
    Array { elem: Box<CType>, len: ArrayLen },
    /// Index into [`Sema::structs`].
    Struct(usize),
    /// `prototyped: false`: declared without parameter types (`()`, or an old-style
    /// definition, whose `params` are still its parameters' types).
    Function { ret: Box<CType>, params: Vec<CType>, variadic: bool, prototyped: bool },
    /// A type we only pass around by pointer (`FILE`, `va_list`).
    Opaque(String),
}

#[derive(Clone, Debug)]
pub enum ArrayLen {
    Const(u64),
    /// A variable-length dimension: the size expression as written.
    Var(Box<Expr>),
    Unknown,
}

impl CType {
    /// The type a value of this type computes in, for a real arithmetic type (`F64` for
    /// `long double`).
    pub fn scalar(&self) -> Option<ScalarType> {
        match self {
            CType::Scalar(s) => Some(s.value_type()),
            _ => None,
        }
    }
    /// The memory format of a real arithmetic type (`F80` for `long double`), as an array of it
    /// holds its elements.
    pub fn element_scalar(&self) -> Option<ScalarType> {
        match self {
            CType::Scalar(s) => Some(*s),
            _ => None,
        }
    }
    /// For a complex type, the type each part computes in.
    pub fn complex(&self) -> Option<ScalarType> {
        match self {
            CType::Complex(s) => Some(s.value_type()),
            _ => None,
        }
    }
    /// A real or complex arithmetic type.
    pub fn is_arithmetic(&self) -> bool {
        matches!(self, CType::Scalar(_) | CType::Complex(_))
    }
    pub fn is_pointer_like(&self) -> bool {
        matches!(self, CType::Pointer { .. } | CType::Array { .. })
    }
}

#[derive(Clone, Debug)]
pub struct StructDef {
    pub tag: Option<String>,
    pub is_union: bool,
    /// `None` while incomplete (only referenced so far).
    pub fields: Option<Vec<(String, CType)>>,
    /// Why the layout may differ from the natural one [`Sema::size_align`] computes (a
    /// bit-field, an attribute, `#pragma pack`, a `long double` member): then it has none.
    pub unnatural_layout: Option<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    Global,
    Param,
    Local,
}

#[derive(Clone, Debug)]
pub struct VarInfo {
    pub ty: CType,
    /// `const` written in the declaration specifiers (for a pointer: the pointee is const).
    pub is_const: bool,
    /// The outermost pointer is `restrict`.
    pub restrict: bool,
    pub storage: Storage,
    pub span: Span,
    /// For a parameter declared as an array (`double a[n][m]`, adjusted to `double (*a)[m]`):
    /// the declared outer length, which data clauses without sections take as the extent, as
    /// PGI/NVIDIA compilers do.
    pub declared_len: Option<ArrayLen>,
}

#[derive(Clone, Debug)]
pub enum Symbol {
    Var(VarInfo),
    Typedef(CType),
    EnumConst(i64),
    Function(CType),
}

#[derive(Clone, Debug, Default)]
struct Scope {
    symbols: HashMap<String, Symbol>,
    tags: HashMap<String, usize>,
}

/// Scopes and type definitions of one translation unit, as the walk over it proceeds.
#[derive(Clone, Debug)]
pub struct Sema {
    scopes: Vec<Scope>,
    pub structs: Vec<StructDef>,
    /// Warnings met while resolving types (`long double` narrowed), drained by the caller.
    pub warnings: Vec<Diagnostic>,
}

impl Default for Sema {
    fn default() -> Self {
        Sema::new()
    }
}

/// The typedefs of the C library headers lowering understands, LP64 (x86-64/aarch64 Linux).
pub fn system_typedef(name: &str) -> Option<CType> {
    use ScalarType::*;
    let s = match name {
        "size_t" | "uintptr_t" | "uintmax_t" | "uint64_t" | "uint_fast64_t" | "uint_least64_t" | "uint_fast16_t"
        | "uint_fast32_t" | "u_int64_t" => U64,
        "ssize_t" | "ptrdiff_t" | "intptr_t" | "intmax_t" | "int64_t" | "int_fast64_t" | "int_least64_t"
        | "int_fast16_t" | "int_fast32_t" | "time_t" | "clock_t" | "off_t" | "suseconds_t" => I64,
        "int8_t" | "int_fast8_t" | "int_least8_t" => I8,
        "uint8_t" | "uint_fast8_t" | "uint_least8_t" | "u_int8_t" => U8,
        "int16_t" | "int_least16_t" => I16,
        "uint16_t" | "uint_least16_t" | "u_int16_t" => U16,
        "int32_t" | "int_least32_t" | "wchar_t" | "pid_t" => I32,
        "uint32_t" | "uint_least32_t" | "u_int32_t" => U32,
        "bool" => Bool,
        "FILE" | "va_list" | "__builtin_va_list" | "__gnuc_va_list" | "pthread_t" | "DIR" | "fpos_t" => {
            return Some(CType::Opaque(name.to_string()));
        }
        _ => return None,
    };
    Some(CType::Scalar(s))
}

/// The type of a C base type: `void`, a scalar, or a complex type.
pub fn base_type(base: BaseType) -> CType {
    match base {
        BaseType::Void => CType::Void,
        BaseType::ComplexFloat => CType::Complex(ScalarType::F32),
        BaseType::ComplexDouble => CType::Complex(ScalarType::F64),
        BaseType::ComplexLongDouble => CType::Complex(ScalarType::F80),
        b => base_scalar(b).map(CType::Scalar).unwrap_or(CType::Void),
    }
}

/// The scalar type of a C real arithmetic base type (`F80` for `long double`, which kernels
/// compute as `double`: the caller warns); `None` for `void` and the complex types.
pub fn base_scalar(base: BaseType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match base {
        BaseType::Void | BaseType::ComplexFloat | BaseType::ComplexDouble | BaseType::ComplexLongDouble => return None,
        BaseType::Bool => Bool,
        BaseType::Char | BaseType::SChar => I8,
        BaseType::UChar => U8,
        BaseType::Short => I16,
        BaseType::UShort => U16,
        BaseType::Int => I32,
        BaseType::UInt => U32,
        BaseType::Long | BaseType::LongLong => I64,
        BaseType::ULong | BaseType::ULongLong => U64,
        BaseType::Float => F32,
        BaseType::Double => F64,
        BaseType::LongDouble => F80,
    })
}

/// The type C gives an integer literal (C11 6.4.4.1): decimal unsuffixed literals stay signed,
/// octal and hexadecimal ones may become unsigned.
pub fn int_literal_type(value: u64, suffix: IntSuffix, radix: u32) -> ScalarType {
    use ScalarType::*;
    let decimal = radix == 10;
    let candidates: &[ScalarType] = match (suffix.unsigned, suffix.longs, decimal) {
        (false, 0, true) => &[I32, I64],
        (false, 0, false) => &[I32, U32, I64, U64],
        (false, _, true) => &[I64],
        (false, _, false) => &[I64, U64],
        (true, 0, _) => &[U32, U64],
        (true, _, _) => &[U64],
    };
    for &t in candidates {
        let fits = match t {
            I32 => value <= i32::MAX as u64,
            U32 => value <= u32::MAX as u64,
            I64 => value <= i64::MAX as u64,
            _ => true,
        };
        if fits {
            return t;
        }
    }
    U64
}

/// Wraps a value to the bit width and signedness of `t` (constant folding of casts).
pub fn wrap_int(v: i64, t: ScalarType) -> i64 {
    use ScalarType::*;
    match t {
        Bool => (v != 0) as i64,
        I8 => v as i8 as i64,
        U8 => v as u8 as i64,
        I16 => v as i16 as i64,
        U16 => v as u16 as i64,
        I32 => v as i32 as i64,
        U32 => v as u32 as i64,
        _ => v,
    }
}

impl Sema {
    pub fn new() -> Sema {
        Sema { scopes: vec![Scope::default()], structs: Vec::new(), warnings: Vec::new() }
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(Scope::default());
    }
    pub fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    pub fn lookup(&self, name: &str) -> Option<&Symbol> {
        self.scopes.iter().rev().find_map(|s| s.symbols.get(name))
    }

    pub fn lookup_var(&self, name: &str) -> Option<&VarInfo> {
        match self.lookup(name) {
            Some(Symbol::Var(v)) => Some(v),
            _ => None,
        }
    }

    pub fn insert(&mut self, name: &str, symbol: Symbol) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.symbols.insert(name.to_string(), symbol);
        }
    }

    fn lookup_tag(&self, tag: &str) -> Option<usize> {
        self.scopes.iter().rev().find_map(|s| s.tags.get(tag).copied())
    }

    pub fn field(&self, struct_index: usize, name: &str) -> Option<&CType> {
        let def = self.structs.get(struct_index)?;
        def.fields.as_ref()?.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    /// The type of the declaration specifiers alone (also defines structs and enum constants
    /// they introduce).
    pub fn resolve_specs(&mut self, specs: &DeclSpecs) -> Result<CType, Diagnostic> {
        match &specs.ty {
            TypeSpec::Base(b) => {
                if matches!(b, BaseType::LongDouble | BaseType::ComplexLongDouble) {
                    self.warnings.push(
                        Diagnostic::warning(specs.span, "`long double` is computed as `double`")
                            .with_help("use `double` to make the precision explicit"),
                    );
                }
                Ok(base_type(*b))
            }
            // A typedef of a system header we do not model (`pthread_mutex_t`): host code may use
            // it freely; a kernel that touches it is refused where it does.
            TypeSpec::TypedefName(name) => match self.lookup(name) {
                Some(Symbol::Typedef(t)) => Ok(t.clone()),
                _ => Ok(system_typedef(name).unwrap_or_else(|| CType::Opaque(name.clone()))),
            },
            TypeSpec::Enum(e) => {
                if let Some(variants) = &e.variants {
                    // `None` after a value we cannot compute (it uses something we do not model):
                    // such constants stay undeclared for kernels rather than take a wrong value.
                    let mut next = Some(0i64);
                    for (name, value, _) in variants {
                        if let Some(v) = value {
                            next = self.const_eval(v);
                        }
                        if let Some(n) = next {
                            self.insert(name, Symbol::EnumConst(n));
                        }
                        // Past the largest value, the next constant has none we can compute.
                        next = next.and_then(|n| n.checked_add(1));
                    }
                }
                Ok(CType::Scalar(ScalarType::I32))
            }
            TypeSpec::Struct(s) => self.resolve_struct(s),
        }
    }

    fn resolve_struct(&mut self, s: &ast::StructSpec) -> Result<CType, Diagnostic> {
        let index = match (&s.tag, &s.fields) {
            (Some(tag), None) => match self.lookup_tag(tag) {
                Some(i) => i,
                None => self.new_struct(Some(tag.clone()), s.is_union),
            },
            (Some(tag), Some(_)) => {
                // A definition: reuse an incomplete forward declaration of this scope's tag.
                let existing = self.scopes.last().and_then(|sc| sc.tags.get(tag).copied());
                match existing {
                    Some(i) if self.structs[i].fields.is_none() => i,
                    _ => self.new_struct(Some(tag.clone()), s.is_union),
                }
            }
            (None, _) => self.new_struct(None, s.is_union),
        };
        if let Some(decls) = &s.fields {
            let mut fields = Vec::new();
            let mut unnatural = s.unnatural_layout;
            for decl in decls {
                if matches!(decl.specs.ty, TypeSpec::Base(BaseType::LongDouble)) {
                    // Computed as `double`, but 16 bytes in memory.
                    unnatural = unnatural.or(Some("a `long double` member"));
                }
                let base = self.resolve_specs(&decl.specs)?;
                for d in &decl.declarators {
                    let ty = self.apply_declarator(base.clone(), &d.declarator)?;
                    if let Some(name) = &d.declarator.name {
                        fields.push((name.clone(), ty));
                    }
                }
            }
            self.structs[index].fields = Some(fields);
            self.structs[index].unnatural_layout = unnatural;
        }
        Ok(CType::Struct(index))
    }

    fn new_struct(&mut self, tag: Option<String>, is_union: bool) -> usize {
        self.structs.push(StructDef { tag: tag.clone(), is_union, fields: None, unnatural_layout: None });
        let index = self.structs.len() - 1;
        if let (Some(tag), Some(scope)) = (tag, self.scopes.last_mut()) {
            scope.tags.insert(tag, index);
        }
        index
    }

    /// Applies a declarator's derivations (listed from the name outward) to a base type.
    pub fn apply_declarator(&mut self, base: CType, declarator: &Declarator) -> Result<CType, Diagnostic> {
        let mut ty = base;
        for derived in declarator.derived.iter().rev() {
            ty = match derived {
                DerivedType::Pointer(quals) => CType::Pointer { to: Box::new(ty), quals: *quals },
                DerivedType::Array { size, .. } => {
                    let len = match size {
                        None => ArrayLen::Unknown,
                        Some(e) => match self.const_eval(e) {
                            Some(v) if v >= 0 => ArrayLen::Const(v as u64),
                            Some(_) => {
                                return Err(Diagnostic::error(e.span, "array size is negative")
                                    .with_help("give the array a positive size"));
                            }
                            None => ArrayLen::Var(e.clone()),
                        },
                    };
                    CType::Array { elem: Box::new(ty), len }
                }
                DerivedType::Function { params, variadic, prototyped } => {
                    let mut param_types = Vec::new();
                    for p in params {
                        let base = self.resolve_specs(&p.specs)?;
                        let t = self.apply_declarator(base, &p.declarator)?;
                        if !matches!(t, CType::Void) {
                            param_types.push(adjust_param(t));
                        }
                    }
                    CType::Function { ret: Box::new(ty), params: param_types, variadic: *variadic, prototyped: *prototyped }
                }
            };
        }
        Ok(ty)
    }

    /// The full type of a declared name, with `restrict` of its outermost pointer.
    pub fn declared_type(&mut self, specs: &DeclSpecs, declarator: &Declarator) -> Result<CType, Diagnostic> {
        let base = self.resolve_specs(specs)?;
        self.apply_declarator(base, declarator)
    }

    /// Enters a declaration into the current scope (typedefs, variables, functions).
    pub fn declare(&mut self, decl: &ast::Declaration, storage: Storage) -> Result<(), Diagnostic> {
        let base = self.resolve_specs(&decl.specs)?;
        for d in &decl.declarators {
            let Some(name) = &d.declarator.name else { continue };
            let mut ty = self.apply_declarator(base.clone(), &d.declarator)?;
            // `int a[] = {1, 2, 3}`: the length comes from the initializer.
            if let (CType::Array { elem, len: ArrayLen::Unknown }, Some(ast::Initializer::List(list))) = (&ty, &d.init) {
                ty = CType::Array { elem: elem.clone(), len: ArrayLen::Const(list.len() as u64) };
            }
            let symbol = if decl.specs.storage == Some(StorageClass::Typedef) {
                Symbol::Typedef(ty)
            } else if matches!(ty, CType::Function { .. }) {
                Symbol::Function(ty)
            } else {
                Symbol::Var(self.var_info(ty, &decl.specs, &d.declarator, storage))
            };
            self.insert(name, symbol);
        }
        Ok(())
    }

    pub fn var_info(&self, ty: CType, specs: &DeclSpecs, declarator: &Declarator, storage: Storage) -> VarInfo {
        let restrict = match &ty {
            CType::Pointer { quals, .. } => quals.is_restrict,
            _ => false,
        };
        VarInfo { ty, is_const: specs.qualifiers.is_const, restrict, storage, span: declarator.name_span, declared_len: None }
    }

    /// Declares a function's parameters in the current scope (array parameters adjusted to
    /// pointers, as C does).
    pub fn declare_params(&mut self, declarator: &Declarator) -> Result<(), Diagnostic> {
        let Some(DerivedType::Function { params, .. }) = declarator.derived.first() else { return Ok(()) };
        for p in params {
            let Some(name) = &p.declarator.name else { continue };
            let base = self.resolve_specs(&p.specs)?;
            let declared = self.apply_declarator(base, &p.declarator)?;
            let declared_len = match &declared {
                CType::Array { len: len @ (ArrayLen::Const(_) | ArrayLen::Var(_)), .. } => Some(len.clone()),
                _ => None,
            };
            let ty = adjust_param(declared);
            let mut info = self.var_info(ty, &p.specs, &p.declarator, Storage::Param);
            info.declared_len = declared_len;
            if let Some(DerivedType::Array { qualifiers, .. }) = p.declarator.derived.first() {
                info.restrict |= qualifiers.is_restrict;
            }
            self.insert(name, Symbol::Var(info));
        }
        Ok(())
    }

    /// Size and alignment in bytes (LP64), when the type has a static size.
    pub fn size_align(&self, ty: &CType) -> Option<(u64, u64)> {
        match ty {
            CType::Scalar(s) => Some((s.size_bytes() as u64, s.size_bytes() as u64)),
            CType::Complex(s) => Some((2 * s.size_bytes() as u64, s.size_bytes() as u64)),
            CType::Pointer { .. } => Some((8, 8)),
            CType::Array { elem, len: ArrayLen::Const(n) } => {
                let (s, a) = self.size_align(elem)?;
                Some((s.checked_mul(*n)?, a))
            }
            CType::Struct(i) => {
                let (size, align, _) = self.struct_layout(*i, None)?;
                Some((size, align))
            }
            _ => None,
        }
    }

    /// Bytes a value of `ty` takes: [`Sema::size_align`]'s size where it has one, else the
    /// members' sizes summed (no padding), saturating at `u64::MAX` where the size overflows.
    /// For size limits, which must hold for types too large to lay out.
    pub fn bytes_saturating(&self, ty: &CType) -> u64 {
        if let Some((size, _)) = self.size_align(ty) {
            return size;
        }
        match ty {
            CType::Array { elem, len: ArrayLen::Const(n) } => self.bytes_saturating(elem).saturating_mul(*n),
            CType::Struct(i) => match self.structs.get(*i).and_then(|d| d.fields.as_ref()) {
                Some(fields) => fields.iter().fold(0u64, |sum, (_, f)| sum.saturating_add(self.bytes_saturating(f))),
                None => 0,
            },
            _ => 0,
        }
    }

    /// Size, alignment and, for `field`, its byte offset, of struct `index` laid out as the
    /// LP64 ABI lays out a struct without attributes; `None` when the layout is not known.
    fn struct_layout(&self, index: usize, field: Option<&str>) -> Option<(u64, u64, Option<u64>)> {
        let def = self.structs.get(index)?;
        if def.unnatural_layout.is_some() {
            return None;
        }
        let fields = def.fields.as_ref()?;
        let (mut size, mut align, mut offset) = (0u64, 1u64, None);
        for (name, f) in fields {
            let (fs, fa) = self.size_align(f)?;
            align = align.max(fa);
            let at = if def.is_union { 0 } else { size.div_ceil(fa).checked_mul(fa)? };
            if field == Some(name.as_str()) && offset.is_none() {
                offset = Some(at);
            }
            size = if def.is_union { size.max(fs) } else { at.checked_add(fs)? };
        }
        Some((size.div_ceil(align).checked_mul(align)?, align, offset))
    }

    /// The byte offset of `field` in struct `index`, when its layout is known.
    pub fn field_offset(&self, index: usize, field: &str) -> Option<u64> {
        self.struct_layout(index, Some(field))?.2
    }

    /// Why struct `index` (or a struct inside it) has no layout [`Sema::size_align`] can
    /// compute, in words.
    pub fn layout_problem(&self, index: usize) -> String {
        let Some(def) = self.structs.get(index) else { return "it is not defined".into() };
        if let Some(why) = def.unnatural_layout {
            return format!("it has {why}");
        }
        let Some(fields) = &def.fields else { return "it is not defined".into() };
        for (name, f) in fields {
            if self.size_align(f).is_none() {
                let mut inner = f;
                while let CType::Array { elem, .. } = inner {
                    inner = elem;
                }
                return match inner {
                    CType::Struct(i) => format!("its member `{name}` is a struct whose layout is not known: {}", self.layout_problem(*i)),
                    _ => format!("the size of its member `{name}` is not known"),
                };
            }
        }
        "its layout is not known".into()
    }

    /// Evaluates an integer constant expression (literals, enum constants, `sizeof`, casts to
    /// integer types, arithmetic).
    pub fn const_eval(&self, e: &Expr) -> Option<i64> {
        match &e.kind {
            ExprKind::IntLit { value, .. } => Some(*value as i64),
            ExprKind::CharLit(c) => Some(*c),
            ExprKind::Ident(name) => match self.lookup(name) {
                Some(Symbol::EnumConst(v)) => Some(*v),
                _ => None,
            },
            ExprKind::Unary { op, operand } => {
                let v = self.const_eval(operand)?;
                match op {
                    UnaryOp::Neg => Some(v.wrapping_neg()),
                    UnaryOp::Plus => Some(v),
                    UnaryOp::Not => Some((v == 0) as i64),
                    UnaryOp::BitNot => Some(!v),
                    _ => None,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.const_eval(lhs)?, self.const_eval(rhs)?);
                Some(match op {
                    BinaryOp::Add => a.wrapping_add(b),
                    BinaryOp::Sub => a.wrapping_sub(b),
                    BinaryOp::Mul => a.wrapping_mul(b),
                    BinaryOp::Div => a.checked_div(b)?,
                    BinaryOp::Rem => a.checked_rem(b)?,
                    BinaryOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
                    BinaryOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
                    BinaryOp::Lt => (a < b) as i64,
                    BinaryOp::Gt => (a > b) as i64,
                    BinaryOp::Le => (a <= b) as i64,
                    BinaryOp::Ge => (a >= b) as i64,
                    BinaryOp::Eq => (a == b) as i64,
                    BinaryOp::Ne => (a != b) as i64,
                    BinaryOp::BitAnd => a & b,
                    BinaryOp::BitOr => a | b,
                    BinaryOp::BitXor => a ^ b,
                    BinaryOp::LogAnd => (a != 0 && b != 0) as i64,
                    BinaryOp::LogOr => (a != 0 || b != 0) as i64,
                    BinaryOp::Comma => b,
                })
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                if self.const_eval(cond)? != 0 { self.const_eval(then) } else { self.const_eval(otherwise) }
            }
            ExprKind::Cast { ty, expr } => {
                let v = self.const_eval(expr)?;
                match ty.specs.ty {
                    TypeSpec::Base(b) if ty.declarator.derived.is_empty() => {
                        let s = base_scalar(b)?;
                        if s.is_float() { None } else { Some(wrap_int(v, s)) }
                    }
                    _ => Some(v),
                }
            }
            ExprKind::SizeofType(tn) => {
                let mut scratch = self.clone();
                let ty = scratch.declared_type(&tn.specs, &tn.declarator).ok()?;
                scratch.size_align(&ty).map(|(s, _)| s as i64)
            }
            _ => None,
        }
    }
}

/// C adjusts a parameter of array type to a pointer to its element (`double a[n][m]` is
/// `double (*a)[m]`).
pub fn adjust_param(ty: CType) -> CType {
    match ty {
        CType::Array { elem, .. } => CType::Pointer { to: elem, quals: Qualifiers::default() },
        CType::Function { .. } => CType::Pointer { to: Box::new(ty), quals: Qualifiers::default() },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn usual_arithmetic_conversions() {
        assert_eq!(common_type(I32, F64), F64);
        assert_eq!(common_type(F32, I64), F32);
        assert_eq!(common_type(I8, I16), I32);
        assert_eq!(common_type(I32, U32), U32);
        assert_eq!(common_type(I64, U32), I64);
        assert_eq!(common_type(U64, I32), U64);
        assert_eq!(common_type(I64, U64), U64);
        assert_eq!(common_type(Bool, Bool), I32);
        assert_eq!(promote(U16), I32);
    }

    #[test]
    fn literal_types_follow_c_rules() {
        let none = IntSuffix::default();
        assert_eq!(int_literal_type(5, none, 10), I32);
        assert_eq!(int_literal_type(3_000_000_000, none, 10), I64);
        assert_eq!(int_literal_type(0xFFFF_FFFF, none, 16), U32);
        assert_eq!(int_literal_type(1, IntSuffix { unsigned: true, longs: 0 }, 10), U32);
        assert_eq!(int_literal_type(1, IntSuffix { unsigned: false, longs: 2 }, 10), I64);
    }

    #[test]
    fn system_typedefs_map_to_lp64() {
        assert!(matches!(system_typedef("size_t"), Some(CType::Scalar(U64))));
        assert!(matches!(system_typedef("int32_t"), Some(CType::Scalar(I32))));
        assert!(matches!(system_typedef("bool"), Some(CType::Scalar(Bool))));
        assert!(matches!(system_typedef("FILE"), Some(CType::Opaque(_))));
        assert!(system_typedef("my_type").is_none());
    }

    #[test]
    fn wrap_int_truncates_like_c() {
        assert_eq!(wrap_int(300, U8), 44);
        assert_eq!(wrap_int(-1, U32), 0xFFFF_FFFF);
        assert_eq!(wrap_int(5, Bool), 1);
    }
}
