//! Coherence hooks: what memory a host statement may read or write (the array and pointer
//! bases it touches, found by walking it with the C types in scope) and the `host_access`
//! calls that cover them before the statement runs.

use super::*;

pub(super) const READ: u8 = 1;
pub(super) const WRITE: u8 = 2;

/// The memory a library function touches through its pointer arguments.
pub(super) enum LibraryEffect {
    /// Argument `n` is written, the others read.
    WritesArg(usize),
    /// Arguments from `n` on are written (scanf's targets), the others read.
    WritesFrom(usize),
    /// Argument `n` is read and written.
    ReadsWritesArg(usize),
    ReadsAll,
    /// Allocation functions and the OpenACC API: the runtime sees these itself.
    None,
    /// A function we know nothing about: every pointer argument may be read and written.
    Unknown,
}

/// Whether `e` is computed from variables alone (no load from memory, no side effect), so a
/// hook may evaluate it ahead of the statement; the variables it names go to `idents`.
fn plain_operand(e: &ast::Expr, idents: &mut Vec<String>) -> bool {
    let mut plain = true;
    visit_expr(e, &mut |e| match &e.kind {
        ExprKind::Ident(n) => idents.push(n.clone()),
        ExprKind::Index { .. }
        | ExprKind::Member { .. }
        | ExprKind::Unary { op: UnaryOp::Deref | UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec, .. }
        | ExprKind::Assign { .. }
        | ExprKind::Call { .. }
        | ExprKind::CompoundLiteral { .. } => plain = false,
        _ => {}
    });
    plain
}

pub(super) fn library_effect(name: &str) -> LibraryEffect {
    match name {
        "memcpy" | "memmove" | "memset" | "strcpy" | "strncpy" | "strcat" | "strncat" | "sprintf" | "snprintf"
        | "vsprintf" | "vsnprintf" | "fgets" | "gets" | "fread" => LibraryEffect::WritesArg(0),
        "scanf" => LibraryEffect::WritesFrom(1),
        "fscanf" | "sscanf" => LibraryEffect::WritesFrom(2),
        "qsort" => LibraryEffect::ReadsWritesArg(0),
        "printf" | "fprintf" | "puts" | "fputs" | "fwrite" | "strlen" | "strcmp" | "strncmp" | "strchr" | "strrchr"
        | "strstr" | "memcmp" | "atoi" | "atol" | "atoll" | "atof" | "strtol" | "strtoul" | "strtoll" | "strtoull"
        | "strtod" | "strtof" | "perror" | "fopen" | "bsearch" | "putchar" | "fputc" | "putc" | "__assert_fail"
        | "__builtin_expect" => LibraryEffect::ReadsAll,
        "malloc" | "calloc" | "realloc" | "free" | "posix_memalign" | "aligned_alloc" | "exit" | "abort" | "fclose" | "fflush" | "srand" | "rand"
        | "time" | "clock" | "__yosegi_malloc" | "__yosegi_calloc" | "__yosegi_realloc" | "__yosegi_free"
        | "__yosegi_posix_memalign" | "__yosegi_aligned_alloc" => {
            LibraryEffect::None
        }
        n if n.starts_with("acc_") => LibraryEffect::None,
        _ => LibraryEffect::Unknown,
    }
}

#[derive(Clone, Debug)]
pub(super) struct Access {
    pub(super) text: String,
    pub(super) mode: u8,
    /// Identifiers the base expression reads (for the loop-invariance test).
    pub(super) idents: Vec<String>,
    /// The base expression has side effects or calls: it cannot be evaluated again in a hook.
    pub(super) impure: bool,
    /// Evaluating the base reads memory (`mt->m`, `grid[i]`), and the statement reads it only
    /// under a condition (`p && p->v[0]`): the hook could fault where the program does not.
    pub(super) guarded_load: bool,
    /// Every access of the base in the statement is this one element of a named array
    /// (`data[k]`): the hook covers its bytes only, so a host store of one element leaves the
    /// rest of the device's copy current. `None`: the whole object.
    pub(super) element: Option<Element>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Element {
    /// The element's lvalue, as written.
    pub(super) text: String,
    /// Identifiers its subscripts read.
    pub(super) idents: Vec<String>,
    /// Evaluating it before the statement could differ from the statement's own evaluation or
    /// fault: a subscript with side effects or loads, or the access under a condition.
    pub(super) unsafe_to_hoist: bool,
    /// `a[v + c]` in a counted loop over `v` (see [`LoopBounds`]): the hook covers the elements
    /// the loop can touch, not one.
    pub(super) range: Option<ElementRange>,
}

/// The widest spread `cmax - cmin` of an [`ElementRange`]: 2^32 elements.
const MAX_OFFSET_SPREAD: i64 = 1 << 32;

/// The elements `array[lo + cmin .. hi + cmax)` of a loop's accesses `array[v + c]`,
/// `cmin <= c <= cmax`, with `v` running over `lo..hi`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ElementRange {
    pub(super) array: String,
    pub(super) var: String,
    pub(super) lo: String,
    pub(super) hi: String,
    pub(super) cmin: i64,
    pub(super) cmax: i64,
}

impl Element {
    /// Two accesses of one array in a statement: the same element, or ranges of one loop.
    fn merged(&self, other: &Element) -> Option<Element> {
        if self == other {
            return Some(self.clone());
        }
        let (a, b) = (self.range.as_ref()?, other.range.as_ref()?);
        if (&a.array, &a.var, &a.lo, &a.hi) != (&b.array, &b.var, &b.lo, &b.hi) {
            return None;
        }
        let (cmin, cmax) = (a.cmin.min(b.cmin), a.cmax.max(b.cmax));
        // Offsets further apart than this (or whose spread overflows) describe no array a host
        // loop walks: the hook then covers the whole object, and its C never adds a wrapped
        // spread to the iteration count.
        if cmax.checked_sub(cmin).is_none_or(|spread| spread > MAX_OFFSET_SPREAD) {
            return None;
        }
        let range = ElementRange { cmin, cmax, ..a.clone() };
        Some(Element { unsafe_to_hoist: self.unsafe_to_hoist || other.unsafe_to_hoist, range: Some(range), ..self.clone() })
    }
}

/// A counted host loop `for (v = lo; v < hi; v++)` (`<=`, `++v`, `v += k` with a positive
/// constant `k`) whose body never assigns `v` or takes its address, with bounds that read no
/// memory and call nothing: `v` runs within `lo..hi` (as host C, `long long`).
#[derive(Clone, Debug)]
pub(super) struct LoopBounds {
    var: String,
    lo: String,
    hi: String,
    idents: Vec<String>,
}

impl LoopBounds {
    pub(super) fn of(
        sources: &SourceSet,
        init: &Option<ForInit>,
        cond: &Option<ast::Expr>,
        step: &Option<ast::Expr>,
        body: &ast::Stmt,
    ) -> Option<LoopBounds> {
        let ident = |e: &ast::Expr| match &e.kind {
            ExprKind::Ident(n) => Some(n.clone()),
            _ => None,
        };
        let (var, lo) = match init.as_ref()? {
            ForInit::Decl(d) => match d.declarators.as_slice() {
                [one] => match (&one.declarator.name, &one.init, one.declarator.derived.is_empty()) {
                    (Some(n), Some(Initializer::Expr(e)), true) => (n.clone(), e),
                    _ => return None,
                },
                _ => return None,
            },
            ForInit::Expr(e) => match &e.kind {
                ExprKind::Assign { op: None, lhs, rhs } => (ident(lhs)?, rhs.as_ref()),
                _ => return None,
            },
        };
        let ExprKind::Binary { op, lhs, rhs: hi } = &cond.as_ref()?.kind else { return None };
        if ident(lhs)? != var || !matches!(op, ast::BinaryOp::Lt | ast::BinaryOp::Le) {
            return None;
        }
        let positive = |e: &ast::Expr| matches!(e.kind, ExprKind::IntLit { value, .. } if value > 0);
        let is_var = |e: &ast::Expr| ident(e).as_deref() == Some(var.as_str());
        let steps_up = match &step.as_ref()?.kind {
            ExprKind::Unary { op: UnaryOp::PostInc | UnaryOp::PreInc, operand } => is_var(operand),
            ExprKind::Assign { op: Some(ast::BinaryOp::Add), lhs, rhs } => is_var(lhs) && positive(rhs),
            ExprKind::Assign { op: None, lhs, rhs } => {
                is_var(lhs) && matches!(&rhs.kind, ExprKind::Binary { op: ast::BinaryOp::Add, lhs: l, rhs: r } if is_var(l) && positive(r))
            }
            _ => false,
        };
        if !steps_up {
            return None;
        }
        let mut idents = Vec::new();
        let mut plain = true;
        for bound in [lo, hi.as_ref()] {
            plain &= plain_operand(bound, &mut idents);
        }
        if !plain || idents.contains(&var) {
            return None;
        }
        let mut changed = false;
        visit_stmt_exprs(body, &mut |e| {
            let address_taken = matches!(&e.kind, ExprKind::Unary { op: UnaryOp::AddrOf, operand } if is_var(operand));
            changed |= address_taken || crate::front::lower::walk::assigned_name(e) == Some(var.as_str());
        });
        if changed {
            return None;
        }
        let text = |e: &ast::Expr| sources.text(e.span).trim().to_string();
        let hi = if matches!(op, ast::BinaryOp::Le) {
            format!("((long long)({}) + 1)", text(hi))
        } else {
            format!("((long long)({}))", text(hi))
        };
        Some(LoopBounds { lo: format!("((long long)({}))", text(lo)), hi, var, idents })
    }
}

/// `v`, `v + c`, `c + v` or `v - c`: the variable and the constant.
fn var_offset(e: &ast::Expr) -> Option<(String, i64)> {
    let constant = |e: &ast::Expr| match e.kind {
        ExprKind::IntLit { value, .. } => i64::try_from(value).ok(),
        _ => None,
    };
    match &e.kind {
        ExprKind::Ident(n) => Some((n.clone(), 0)),
        ExprKind::Binary { op: ast::BinaryOp::Add, lhs, rhs } => match (&lhs.kind, &rhs.kind) {
            (ExprKind::Ident(n), _) => Some((n.clone(), constant(rhs)?)),
            (_, ExprKind::Ident(n)) => Some((n.clone(), constant(lhs)?)),
            _ => None,
        },
        ExprKind::Binary { op: ast::BinaryOp::Sub, lhs, rhs } => match &lhs.kind {
            ExprKind::Ident(n) => Some((n.clone(), -constant(rhs)?)),
            _ => None,
        },
        _ => None,
    }
}

/// Collects the accesses of one host statement, walking it with its own declarations in scope.
pub(super) struct Collector<'a> {
    pub(super) sources: &'a SourceSet,
    pub(super) tables: &'a mut TypeTables,
    pub(super) scopes: &'a mut Scopes,
    pub(super) info: &'a ProgramInfo<'a>,
    pub(super) accesses: Vec<Access>,
    /// Variables declared or assigned inside the statement.
    pub(super) assigned: HashSet<String>,
    pub(super) declared: HashSet<String>,
    /// Inside `&&`/`||` right operands, `?:` arms, `if` branches and `switch` bodies.
    pub(super) conditional_depth: u32,
    /// Variables whose address the statement takes (a callee or pointer may change them).
    pub(super) address_taken: HashSet<String>,
    /// The statement calls a function that may change any variable (a user function, or one
    /// we know nothing about).
    pub(super) calls_unknown: bool,
    /// The counted loops around the expression being walked, innermost last.
    pub(super) loops: Vec<LoopBounds>,
    /// The statement stores through a pointer, which may be the address of a variable an
    /// element's subscript or a loop's bound reads.
    pub(super) writes_through_pointer: bool,
}

impl<'a> Collector<'a> {
    pub(super) fn conditionally(&mut self, f: impl FnOnce(&mut Self)) {
        self.conditional_depth += 1;
        f(self);
        self.conditional_depth -= 1;
    }

    pub(super) fn record(&mut self, base: &ast::Expr, mode: u8) {
        self.record_access(base, None, mode);
    }

    /// `element` (of the array `base`) accessed with `mode`.
    fn record_element(&mut self, base: &ast::Expr, element: &ast::Expr, mode: u8) {
        let mut idents = Vec::new();
        // Under a condition the subscripts may be out of bounds where the statement does not
        // use them; a load in a subscript would read memory before its own hook made it
        // current; side effects would run twice.
        let mut unsafe_to_hoist = self.conditional_depth > 0;
        let mut cur = element;
        while let ExprKind::Index { base: array, index } = &cur.kind {
            unsafe_to_hoist |= !plain_operand(index, &mut idents);
            cur = array;
        }
        let text = self.sources.text(element.span).trim().to_string();
        // `a[v + c]` in a counted loop over `v`: the loop's elements, whatever the condition.
        if let ExprKind::Index { base: array, index } = &element.kind
            && array.span == base.span
            && let Some((var, c)) = var_offset(index)
            && let Some(bounds) = self.loops.iter().rev().find(|b| b.var == var)
        {
            let range = ElementRange {
                array: self.sources.text(base.span).trim().to_string(),
                var,
                lo: bounds.lo.clone(),
                hi: bounds.hi.clone(),
                cmin: c,
                cmax: c,
            };
            let element = Element { text, idents: bounds.idents.clone(), unsafe_to_hoist: false, range: Some(range) };
            self.record_access(base, Some(element), mode);
            return;
        }
        self.record_access(base, Some(Element { text, idents, unsafe_to_hoist, range: None }), mode);
    }

    fn record_access(&mut self, base: &ast::Expr, element: Option<Element>, mode: u8) {
        let text = self.sources.text(base.span).trim().to_string();
        let conditional = self.conditional_depth > 0;
        if let Some(existing) = self.accesses.iter_mut().find(|a| a.text == text) {
            existing.mode |= mode;
            existing.guarded_load &= conditional;
            existing.element = match (&existing.element, &element) {
                (Some(a), Some(b)) => a.merged(b),
                _ => None,
            };
            return;
        }
        let mut idents = Vec::new();
        let mut impure = false;
        let mut loads = false;
        visit_expr(base, &mut |e| match &e.kind {
            ExprKind::Ident(n) => idents.push(n.clone()),
            ExprKind::Index { .. } | ExprKind::Member { arrow: true, .. } | ExprKind::Unary { op: UnaryOp::Deref, .. } => {
                loads = true
            }
            ExprKind::Assign { .. } | ExprKind::Call { .. } | ExprKind::CompoundLiteral { .. } => impure = true,
            ExprKind::Unary { op: UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec, .. } => {
                impure = true
            }
            _ => {}
        });
        self.accesses.push(Access { text, mode, idents, impure, guarded_load: loads && conditional, element });
    }

    fn note_pointer_write(&mut self, mode: u8) {
        if mode & WRITE != 0 {
            self.writes_through_pointer = true;
        }
    }

    /// The accesses, each element access kept only where evaluating its address before the
    /// statement gives the element the statement touches.
    pub(super) fn finish(mut self) -> (Vec<Access>, HashSet<String>, HashSet<String>) {
        for a in &mut self.accesses {
            let Some(e) = &a.element else { continue };
            let changed = |n: &String| self.assigned.contains(n) || self.declared.contains(n) || self.address_taken.contains(n);
            if e.unsafe_to_hoist || self.calls_unknown || self.writes_through_pointer || e.idents.iter().any(changed) {
                a.element = None;
            }
        }
        (self.accesses, self.assigned, self.declared)
    }

    /// `e` is one element of an array variable (`a[i]`, `m[i][j]`, not a row of it): the
    /// array's name.
    fn element_of_named_array<'e>(&mut self, e: &'e ast::Expr) -> Option<&'e ast::Expr> {
        if matches!(self.type_of(e), CType::Array(_)) {
            return None;
        }
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Index { base, .. } => {
                    if !matches!(self.type_of(base), CType::Array(_)) {
                        return None;
                    }
                    cur = base;
                }
                ExprKind::Ident(_) => return Some(cur),
                // An array member of a struct variable (`p.x[i]`).
                ExprKind::Member { arrow: false, .. } if matches!(self.type_of(cur), CType::Array(_)) => return Some(cur),
                _ => return None,
            }
        }
    }

    pub(super) fn type_of(&mut self, e: &ast::Expr) -> CType {
        match &e.kind {
            ExprKind::Ident(n) => self.scopes.lookup(n),
            ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } | ExprKind::ImagLit { .. } | ExprKind::CharLit(_) => CType::Scalar,
            ExprKind::StringLit(_) => CType::Pointer(Box::new(CType::Opaque)),
            ExprKind::SizeofType(_) | ExprKind::SizeofExpr(_) => CType::Scalar,
            ExprKind::Index { base, index } => {
                let b = self.type_of(base);
                match b {
                    CType::Pointer(_) | CType::Array(_) => b.element(),
                    _ => self.type_of(index).element(),
                }
            }
            ExprKind::Unary { op, operand } => match op {
                UnaryOp::Deref => self.type_of(operand).element(),
                UnaryOp::AddrOf => CType::Pointer(Box::new(self.type_of(operand))),
                UnaryOp::Not => CType::Scalar,
                _ => self.type_of(operand),
            },
            ExprKind::Member { base, field, arrow } => {
                let b = self.type_of(base);
                let s = if *arrow { b.element() } else { b };
                self.tables.field(&s, field)
            }
            ExprKind::Binary { op, lhs, rhs } => match op {
                ast::BinaryOp::Add | ast::BinaryOp::Sub => {
                    let l = self.type_of(lhs);
                    let r = self.type_of(rhs);
                    match (&l, &r) {
                        (CType::Pointer(_) | CType::Array(_), CType::Pointer(_) | CType::Array(_)) => CType::Scalar,
                        (CType::Pointer(t) | CType::Array(t), _) => CType::Pointer(t.clone()),
                        (_, CType::Pointer(t) | CType::Array(t)) => CType::Pointer(t.clone()),
                        _ => l,
                    }
                }
                ast::BinaryOp::Comma => self.type_of(rhs),
                _ => CType::Scalar,
            },
            ExprKind::Assign { lhs, .. } => self.type_of(lhs),
            ExprKind::Conditional { then, .. } => self.type_of(then),
            ExprKind::Cast { ty, .. } | ExprKind::CompoundLiteral { ty, .. } => {
                let base = self.tables.base_type(&ty.specs);
                apply_derived(base, &ty.declarator)
            }
            ExprKind::Call { callee, .. } => match self.type_of(callee) {
                CType::Function(r) => *r,
                CType::Pointer(f) => match *f {
                    CType::Function(r) => *r,
                    _ => CType::Unknown,
                },
                _ => CType::Unknown,
            },
        }
    }

    /// An lvalue accessed with `mode`.
    pub(super) fn access_lvalue(&mut self, e: &ast::Expr, mode: u8) {
        match &e.kind {
            ExprKind::Ident(n) => {
                if matches!(self.scopes.lookup(n), CType::Array(_)) {
                    self.record(e, mode);
                }
            }
            ExprKind::Index { base, index } => {
                if let Some(array) = self.element_of_named_array(e) {
                    self.record_element(array, e, mode);
                    let mut cur = e;
                    while let ExprKind::Index { base, index } = &cur.kind {
                        self.rvalue(index);
                        cur = base;
                    }
                    return;
                }
                let (base, index) = match self.type_of(base) {
                    CType::Pointer(_) | CType::Array(_) => (base, index),
                    // `i[a]`
                    _ => (index, base),
                };
                self.rvalue(index);
                match self.type_of(base) {
                    CType::Array(_) => self.access_lvalue(base, mode),
                    t if t.is_trackable_pointer() => {
                        self.note_pointer_write(mode);
                        self.record(base, mode);
                        self.rvalue(base);
                    }
                    _ => {
                        self.note_pointer_write(mode);
                        self.rvalue(base)
                    }
                }
            }
            ExprKind::Unary { op: UnaryOp::Deref, operand } => {
                self.note_pointer_write(mode);
                if self.type_of(operand).is_trackable_pointer() {
                    self.pointer_target(operand, mode);
                }
                self.rvalue(operand);
            }
            ExprKind::Member { base, arrow: true, .. } => {
                self.note_pointer_write(mode);
                if self.type_of(base).is_trackable_pointer() {
                    self.pointer_target(base, mode);
                }
                self.rvalue(base);
            }
            ExprKind::Member { base, arrow: false, .. } => {
                // An array member of a struct variable (`p.x`, `s.grid[i][j]`): the runtime
                // tracks it as an object of its own when kernels use it (the struct is not
                // registered whole), so the hook names the member's own address.
                if matches!(self.type_of(e), CType::Array(_)) {
                    self.record(e, mode);
                }
                self.access_lvalue(base, mode)
            }
            // `__real__ a[i] = x` writes (part of) `a[i]`.
            ExprKind::Unary { op: UnaryOp::Real | UnaryOp::Imag, operand } => self.access_lvalue(operand, mode),
            _ => self.rvalue(e),
        }
    }

    /// The object a pointer-valued expression points into, accessed with `mode`: `p`, `a + k`,
    /// `&a[i]`, `(double *)p`.
    pub(super) fn pointer_target(&mut self, e: &ast::Expr, mode: u8) {
        match &e.kind {
            ExprKind::Cast { expr, .. } => self.pointer_target(expr, mode),
            ExprKind::Binary { op: ast::BinaryOp::Add | ast::BinaryOp::Sub, lhs, rhs } => {
                if self.type_of(lhs).is_trackable_pointer() {
                    self.pointer_target(lhs, mode)
                } else if self.type_of(rhs).is_trackable_pointer() {
                    self.pointer_target(rhs, mode)
                }
            }
            ExprKind::Unary { op: UnaryOp::AddrOf, operand } => self.address_target(operand, mode),
            _ => match self.type_of(e) {
                CType::Array(_) => self.address_target(e, mode),
                t if t.is_trackable_pointer() => self.record(e, mode),
                _ => {}
            },
        }
    }

    /// The object containing lvalue `e` (whose address is taken), accessed with `mode`.
    pub(super) fn address_target(&mut self, e: &ast::Expr, mode: u8) {
        match &e.kind {
            ExprKind::Ident(_) => {
                if matches!(self.type_of(e), CType::Array(_)) {
                    self.record(e, mode)
                }
            }
            ExprKind::Index { base, .. } => match self.type_of(base) {
                CType::Array(_) => self.address_target(base, mode),
                t if t.is_trackable_pointer() => self.record(base, mode),
                _ => {}
            },
            ExprKind::Unary { op: UnaryOp::Deref, operand } => self.pointer_target(operand, mode),
            ExprKind::Member { base, arrow: true, .. } => self.pointer_target(base, mode),
            ExprKind::Member { base, arrow: false, .. } => {
                if matches!(self.type_of(e), CType::Array(_)) {
                    self.record(e, mode);
                }
                self.address_target(base, mode)
            }
            _ => {}
        }
    }

    /// Address computation only: visits what evaluating `&e` reads.
    pub(super) fn address_of(&mut self, e: &ast::Expr) {
        match &e.kind {
            ExprKind::Index { base, index } => {
                self.rvalue(index);
                if matches!(self.type_of(base), CType::Array(_)) {
                    self.address_of(base)
                } else {
                    self.rvalue(base)
                }
            }
            ExprKind::Member { base, arrow: true, .. } | ExprKind::Unary { op: UnaryOp::Deref, operand: base } => {
                self.rvalue(base)
            }
            ExprKind::Member { base, arrow: false, .. } => self.address_of(base),
            ExprKind::Ident(_) => {}
            _ => self.rvalue(e),
        }
    }

    pub(super) fn note_assigned(&mut self, lhs: &ast::Expr) {
        if let ExprKind::Ident(n) = &lhs.kind {
            self.assigned.insert(n.clone());
        }
    }

    pub(super) fn rvalue(&mut self, e: &ast::Expr) {
        match &e.kind {
            ExprKind::Index { .. } | ExprKind::Member { .. } | ExprKind::Unary { op: UnaryOp::Deref, .. } => {
                self.access_lvalue(e, READ)
            }
            ExprKind::Assign { op, lhs, rhs } => {
                self.note_assigned(lhs);
                self.access_lvalue(lhs, if op.is_some() { READ | WRITE } else { WRITE });
                self.rvalue(rhs);
            }
            ExprKind::Unary { op: UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec, operand } => {
                self.note_assigned(operand);
                self.access_lvalue(operand, READ | WRITE);
            }
            ExprKind::Unary { op: UnaryOp::AddrOf, operand } => {
                if let ExprKind::Ident(n) = &operand.kind {
                    self.address_taken.insert(n.clone());
                }
                self.address_of(operand)
            }
            ExprKind::Unary { operand, .. } => self.rvalue(operand),
            ExprKind::Binary { op: ast::BinaryOp::LogAnd | ast::BinaryOp::LogOr, lhs, rhs } => {
                self.rvalue(lhs);
                self.conditionally(|c| c.rvalue(rhs));
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.rvalue(lhs);
                self.rvalue(rhs);
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                self.rvalue(cond);
                self.conditionally(|c| {
                    c.rvalue(then);
                    c.rvalue(otherwise);
                });
            }
            ExprKind::Cast { expr, .. } => self.rvalue(expr),
            ExprKind::CompoundLiteral { init, .. } => self.initializer(init),
            ExprKind::Call { callee, args } => self.call(callee, args),
            ExprKind::Ident(_)
            | ExprKind::IntLit { .. }
            | ExprKind::FloatLit { .. }
            | ExprKind::ImagLit { .. }
            | ExprKind::CharLit(_)
            | ExprKind::StringLit(_)
            | ExprKind::SizeofType(_)
            | ExprKind::SizeofExpr(_) => {}
        }
    }

    pub(super) fn call(&mut self, callee: &ast::Expr, args: &[ast::Expr]) {
        let effect = match &callee.kind {
            // A user function's body has its own hooks (a name another file defines `static` is
            // not one here).
            ExprKind::Ident(n) if self.info.definitions.resolve(n, callee.span.tu).is_some() => {
                // Its hooks are its own, but it may change any variable a hook here reads.
                self.calls_unknown = true;
                LibraryEffect::None
            }
            ExprKind::Ident(n) => library_effect(n),
            _ => {
                self.rvalue(callee);
                LibraryEffect::Unknown
            }
        };
        if matches!(effect, LibraryEffect::Unknown) {
            self.calls_unknown = true;
        }
        for (i, arg) in args.iter().enumerate() {
            // A callee given `&x` may change `x` (and so what `x.m` points to).
            let mut stripped = arg;
            while let ExprKind::Cast { expr, .. } = &stripped.kind {
                stripped = expr;
            }
            if let ExprKind::Unary { op: UnaryOp::AddrOf, operand } = &stripped.kind
                && let ExprKind::Ident(n) = &operand.kind
            {
                self.assigned.insert(n.clone());
            }
            self.rvalue(arg);
            let mode = match effect {
                LibraryEffect::None => 0,
                LibraryEffect::ReadsAll => READ,
                LibraryEffect::Unknown => READ | WRITE,
                LibraryEffect::WritesArg(n) => {
                    if i == n {
                        WRITE
                    } else {
                        READ
                    }
                }
                LibraryEffect::WritesFrom(n) => {
                    if i >= n {
                        WRITE
                    } else {
                        READ
                    }
                }
                LibraryEffect::ReadsWritesArg(n) => {
                    if i == n {
                        READ | WRITE
                    } else {
                        READ
                    }
                }
            };
            if mode != 0 {
                self.pointer_target(arg, mode);
            }
        }
    }

    pub(super) fn initializer(&mut self, init: &Initializer) {
        match init {
            Initializer::Expr(e) => self.rvalue(e),
            // Runs of numbers read nothing.
            Initializer::List(list) => {
                for (designators, i) in list.trees() {
                    for d in designators {
                        if let ast::Designator::Index(e) = d {
                            self.rvalue(e);
                        }
                    }
                    self.initializer(i);
                }
            }
        }
    }

    pub(super) fn declaration(&mut self, d: &Declaration) {
        self.tables.declare_typedefs(d);
        let base = self.tables.base_type(&d.specs);
        for init in &d.declarators {
            for derived in &init.declarator.derived {
                if let DerivedType::Array { size: Some(size), .. } = derived {
                    self.rvalue(size);
                }
            }
            if let Some(i) = &init.init {
                self.initializer(i);
            }
            if let Some(name) = &init.declarator.name
                && d.specs.storage != Some(StorageClass::Typedef)
            {
                self.declared.insert(name.clone());
                self.assigned.insert(name.clone());
                self.scopes.declare(name, apply_derived(base.clone(), &init.declarator));
            }
        }
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt) {
        match &s.kind {
            StmtKind::Compound(b) => {
                self.scopes.push();
                for s in &b.stmts {
                    self.stmt(s);
                }
                self.scopes.pop();
            }
            StmtKind::Expr(Some(e)) | StmtKind::Return(Some(e)) => self.rvalue(e),
            StmtKind::Decl(d) => self.declaration(d),
            StmtKind::If { cond, then, otherwise } => {
                self.rvalue(cond);
                self.conditionally(|c| {
                    c.stmt(then);
                    if let Some(o) = otherwise {
                        c.stmt(o);
                    }
                });
            }
            StmtKind::Switch { cond, body } => {
                self.rvalue(cond);
                self.conditionally(|c| c.stmt(body));
            }
            // Loop bodies count as run: a loop over `mt->m` with `mt` null is not a program we
            // protect against.
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.rvalue(cond);
                self.stmt(body);
            }
            StmtKind::For { init, cond, step, body } => {
                self.scopes.push();
                match init {
                    Some(ForInit::Decl(d)) => self.declaration(d),
                    Some(ForInit::Expr(e)) => self.rvalue(e),
                    None => {}
                }
                for e in [cond, step].into_iter().flatten() {
                    self.rvalue(e);
                }
                let bounds = LoopBounds::of(self.sources, init, cond, step, body);
                let counted = bounds.is_some();
                self.loops.extend(bounds);
                self.stmt(body);
                if counted {
                    self.loops.pop();
                }
                self.scopes.pop();
            }
            StmtKind::Case { body, .. } | StmtKind::Default { body } | StmtKind::Labeled { body, .. } => self.stmt(body),
            StmtKind::Acc { body: Some(b), .. } => self.stmt(b),
            StmtKind::Expr(None)
            | StmtKind::Goto(_)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Return(None)
            | StmtKind::Acc { body: None, .. } => {}
        }
    }
}

/// The text of a hook making the host copy of the `bytes` at `pointer` (C expressions)
/// current for an access of `mode`.
pub(super) fn range_hook(pointer: &str, bytes: &str, mode: u8) -> String {
    format!("__yosegi_rt->host_access_range((void *const[]){{(void *)({pointer})}}, (const unsigned long long[]){{(unsigned long long)({bytes})}}, (const int[]){{{mode}}}, 1)")
}

/// The text of a hook covering `accesses`, or `None` when there is nothing to cover: whole
/// objects through `host_access`, single elements through `host_access_range`.
pub(super) fn hook_call(accesses: &[Access]) -> Option<String> {
    let (elements, wholes): (Vec<&Access>, Vec<&Access>) = accesses.iter().partition(|a| a.element.is_some());
    let mut calls = Vec::new();
    if !wholes.is_empty() {
        let ptrs: Vec<String> = wholes.iter().map(|a| format!("(void *)({})", a.text)).collect();
        let modes: Vec<String> = wholes.iter().map(|a| a.mode.to_string()).collect();
        calls.push(format!(
            "__yosegi_rt->host_access((void *const[]){{{}}}, (const int[]){{{}}}, {})",
            ptrs.join(", "),
            modes.join(", "),
            wholes.len()
        ));
    }
    if !elements.is_empty() {
        let (ptrs, lens): (Vec<String>, Vec<String>) = elements
            .iter()
            .filter_map(|a| a.element.as_ref())
            .map(|e| match &e.range {
                Some(r) => {
                    // The iterations (none when hi <= lo), widened by the offsets' spread.
                    let iterations = format!("({} - {})", r.hi, r.lo);
                    let span = r.cmax - r.cmin;
                    (
                        format!("(void *)(({}) + {} + ({}))", r.array, r.lo, r.cmin),
                        format!("(unsigned long long)({iterations} > 0 ? {iterations} + {span} : 0) * sizeof(({})[0])", r.array),
                    )
                }
                None => (format!("(void *)&({})", e.text), format!("sizeof({})", e.text)),
            })
            .unzip();
        let modes: Vec<String> = elements.iter().map(|a| a.mode.to_string()).collect();
        calls.push(format!(
            "__yosegi_rt->host_access_range((void *const[]){{{}}}, (const unsigned long long[]){{{}}}, (const int[]){{{}}}, {})",
            ptrs.join(", "),
            lens.join(", "),
            modes.join(", "),
            elements.len()
        ));
    }
    match calls.len() {
        0 => None,
        1 => calls.pop(),
        _ => Some(format!("({})", calls.join(", "))),
    }
}

pub(super) const HOOK_ALL: &str = "__yosegi_rt->host_access_all()";

/// A hook evaluated in the middle of a statement: `host_access_all` when a base cannot be
/// evaluated again (side effects, conditional loads, names the statement declares).
pub(super) fn hook_for_reevaluation(accesses: &[Access], declared: &HashSet<String>) -> Option<String> {
    if accesses.iter().any(|a| a.idents.iter().any(|i| declared.contains(i))) {
        return Some(HOOK_ALL.to_string());
    }
    pure_hook(accesses)
}

/// A hook for accesses that can all be evaluated before the statement, else `host_access_all`.
pub(super) fn pure_hook(accesses: &[Access]) -> Option<String> {
    if accesses.iter().any(|a| a.impure || a.guarded_load) {
        return Some(HOOK_ALL.to_string());
    }
    hook_call(accesses)
}


#[cfg(test)]
mod element_range_tests {
    use super::*;

    fn element(c: i64) -> Element {
        let range = ElementRange { array: "a".into(), var: "i".into(), lo: "lo".into(), hi: "hi".into(), cmin: c, cmax: c };
        Element { text: format!("a[i + {c}]"), idents: vec!["lo".into(), "hi".into()], unsafe_to_hoist: false, range: Some(range) }
    }

    #[test]
    fn near_offsets_merge_into_one_range() {
        let merged = element(-1).merged(&element(2)).expect("one range");
        let range = merged.range.unwrap();
        assert_eq!((range.cmin, range.cmax), (-1, 2));
    }

    /// `a[i + 1] = a[i - 0x7fffffffffffffff]` (a fuzzer's input): the spread overflows i64, and
    /// the hook covers the whole object instead of a wrapped range.
    #[test]
    fn offsets_whose_spread_overflows_or_is_huge_cover_the_whole_object() {
        assert!(element(1).merged(&element(-i64::MAX)).is_none());
        assert!(element(i64::MAX).merged(&element(-1)).is_none());
        assert!(element(i64::MIN).merged(&element(i64::MAX)).is_none());
        assert!(element(0).merged(&element(MAX_OFFSET_SPREAD + 1)).is_none());
        assert!(element(0).merged(&element(MAX_OFFSET_SPREAD)).is_some());
    }
}
