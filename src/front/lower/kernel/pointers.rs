//! Pointers in kernels and in the routines they call: what a pointer points into, pointer
//! locals (`const double *row = &a[8*k]`, a routine's pointer parameters), `&`, pointer
//! arithmetic, comparisons, `NULL`, and the loads and stores made through pointers.
//!
//! A kernel's pointer is resolved when the kernel is lowered: it points into one [`Object`]
//! lowering knows (an array param, a local or shared array, one scalar local, the elements of a
//! host array of structs, a struct local, a host struct, or device memory at a computed
//! address), and only its place in that object is a run-time value. A pointer local is assigned
//! pointers into one object only (`NULL` aside); it holds its place in locals: the subscripts of
//! the rows it fixes (its coordinates) and its offset along the next dimension, counted in
//! elements of the type it points to, as C's pointer arithmetic counts. So `row[j]` is the load
//! `a[row + j]` with `row = 8*k`, which the analyses read as the affine `a[8*k + j]`, and on a
//! GPU every pointer is a register or two.
//!
//! `NULL` is an offset no object has ([`NULL_OFFSET`]): comparing pointers compares offsets,
//! `if (p)` tests the offset, and a load through `NULL` is far out of bounds, which the simulator
//! reports with the source line (as it reports a pointer that walks off its object).
//!
//! What cannot be resolved this way is refused at the construct with what to write instead: a
//! pointer assigned pointers into two objects, a pointer stored into memory, arithmetic on the
//! address of a single variable, a function pointer.

use super::expr::subscripts;
use super::structs::{ElementPlace, Place};
use super::*;

/// The offset a null pointer holds: negative and far from every object, so that comparisons of
/// offsets compare nullness too and a load through `NULL` is out of bounds.
pub(super) const NULL_OFFSET: i64 = -(1 << 40);

/// What a pointer points into.
#[derive(Clone, Debug)]
pub(super) enum Object {
    /// Elements of `array` (rows of it when `ndims > 1`): the pointer fixes the first `fixed`
    /// subscripts (its coordinates) and moves along the next; `ndims` subscripts remain from
    /// there. `elem` is the array's element format.
    Array { array: ArrayRef, fixed: usize, ndims: usize, elem: ScalarType },
    /// One scalar local (no arithmetic). `read_only` for a copy of a host scalar every
    /// iteration shares: the kernel may read through the pointer but not write.
    Scalar { local: Handle<Local>, read_only: bool },
    /// Elements of a host array of structs: `fixed` leading subscripts are coordinates.
    Structs { root: String, root_info: VarInfo, element_struct: usize, fixed: usize },
    /// A struct local (no arithmetic).
    StructLocal { name: String, s: usize },
    /// Elements of a local array of structs: `fixed` leading subscripts are coordinates.
    StructLocalArray { name: String, s: usize, fixed: usize },
    /// A host struct the kernel reads (its members are params): read-only, no arithmetic.
    HostStruct { key: String, s: usize },
    /// Device memory at a byte address the kernel computes (the one coordinate), seen as
    /// elements of this type.
    Address(ScalarType),
}

impl Object {
    /// Whether two objects are the same (so that a pointer local may hold pointers into both).
    fn same(&self, other: &Object) -> bool {
        use Object::*;
        match (self, other) {
            (Array { array: a, fixed: f, ndims: n, elem: e }, Array { array: b, fixed: g, ndims: m, elem: d }) => a == b && f == g && n == m && e == d,
            (Scalar { local: a, .. }, Scalar { local: b, .. }) => a == b,
            (Structs { root: a, element_struct: s, fixed: f, .. }, Structs { root: b, element_struct: t, fixed: g, .. }) => a == b && s == t && f == g,
            (StructLocal { name: a, .. }, StructLocal { name: b, .. }) => a == b,
            (StructLocalArray { name: a, fixed: f, .. }, StructLocalArray { name: b, fixed: g, .. }) => a == b && f == g,
            (HostStruct { key: a, .. }, HostStruct { key: b, .. }) => a == b,
            (Address(a), Address(b)) => a == b,
            _ => false,
        }
    }

    /// How many coordinates a pointer into the object carries besides its offset.
    fn coordinates(&self) -> usize {
        match self {
            Object::Array { fixed, .. } | Object::Structs { fixed, .. } | Object::StructLocalArray { fixed, .. } => *fixed,
            Object::Address(_) => 1,
            Object::Scalar { .. } | Object::StructLocal { .. } | Object::HostStruct { .. } => 0,
        }
    }

    /// Whether pointer arithmetic may move a pointer within the object (it is not one variable).
    fn has_elements(&self) -> bool {
        matches!(self, Object::Array { .. } | Object::Structs { .. } | Object::StructLocalArray { .. } | Object::Address(_))
    }

    /// How many subscripts a pointer into the object takes (`p[i][j]` for rows of a 2-D array).
    fn depth(&self) -> usize {
        match self {
            Object::Array { ndims, .. } => *ndims,
            _ => 1,
        }
    }
}

/// What a pointer local is declared to point to.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum PointsTo {
    /// Numbers of this format (`double *`).
    Number(ScalarType),
    /// Rows (`double (*)[n]`): `depth` subscripts reach a number of format `elem`.
    Rows { depth: usize, elem: ScalarType },
    /// Row pointers (`double **`): a table of rows.
    Table(ScalarType),
    Struct(usize),
    /// `void *`: anything; it is cast back before it is used.
    Void,
}

impl PointsTo {
    fn of(to: &CType) -> Option<PointsTo> {
        Some(match to {
            CType::Void => PointsTo::Void,
            CType::Scalar(t) => PointsTo::Number(*t),
            CType::Struct(s) => PointsTo::Struct(*s),
            CType::Array { .. } => {
                let mut depth = 1;
                let mut cur = to;
                while let CType::Array { elem, .. } = cur {
                    depth += 1;
                    cur = elem;
                }
                PointsTo::Rows { depth, elem: cur.element_scalar()? }
            }
            CType::Pointer { to: row, .. } => PointsTo::Table(row.element_scalar()?),
            _ => return None,
        })
    }

    fn depth(&self) -> usize {
        match self {
            PointsTo::Rows { depth, .. } => *depth,
            PointsTo::Table(_) => 2,
            _ => 1,
        }
    }
}

/// A pointer value: the object (`None` for `NULL`) and the place in it, as expressions to be
/// used once.
#[derive(Debug)]
pub(super) struct PointerValue {
    pub object: Option<Object>,
    /// The coordinates ([`Object::coordinates`] of them), `I64`.
    pub coords: Vec<Handle<Expr>>,
    /// The offset, in elements of what the pointer points to, `I64`.
    pub offset: Handle<Expr>,
}

/// A pointer local of the kernel (or a pointer parameter of an inlined routine).
#[derive(Clone, Debug)]
pub(super) struct PointerLocal {
    pub name: String,
    pub to: PointsTo,
    /// Set by the first assignment of a pointer other than `NULL`.
    pub object: Option<Object>,
    pub coords: Vec<Handle<Local>>,
    pub offset: Handle<Local>,
    /// Assigned once and never changed (a routine's pointer parameter its body does not
    /// assign): the offset it was given, when that is a constant, is read as the constant.
    pub assigned_once: bool,
    pub constant_offset: Option<i64>,
}

/// The number of subscripts (or dereferences) a value of type `ty` takes before it is no
/// pointer or array: `Some(2)` for `double **` and `double a[n][m]`, `None` for a number.
pub(super) fn type_depth(ty: &CType) -> Option<usize> {
    match ty {
        CType::Pointer { to, .. } if matches!(**to, CType::Function { .. }) => Some(1),
        CType::Pointer { to: inner, .. } | CType::Array { elem: inner, .. } => Some(1 + type_depth(inner).unwrap_or(0)),
        _ => None,
    }
}

impl<'a> KernelBuilder<'a> {
    /// The pointer local a name of the kernel stands for.
    pub(super) fn pointer_local(&self, name: &str) -> Option<usize> {
        match self.binding(name) {
            Some(Binding::Pointer(k)) => Some(k),
            _ => None,
        }
    }

    /// Declares the pointer local `name`, pointing to `to`, starting as `NULL` unless
    /// `assigned_once` (it is given its one value right away).
    pub(super) fn declare_pointer(&mut self, name: &str, to: &CType, assigned_once: bool, span: Span, out: &mut Block) -> R<usize> {
        if matches!(to, CType::Function { .. }) {
            return Err(err(span, format!("`{name}` is a function pointer; kernels cannot call through pointers"), "call the function by name"));
        }
        let Some(points_to) = PointsTo::of(to) else {
            return Err(err(span, format!("the pointer `{name}` points to a type kernels do not support"), "point to numbers, rows of numbers or structs"));
        };
        let offset = self.new_local(name, ScalarType::I64, LocalKind::Var, span);
        if !assigned_once {
            let null = self.int_const(NULL_OFFSET, ScalarType::I64);
            out.push(Stmt::Assign { local: offset, value: null });
        }
        self.pointers.push(PointerLocal { name: name.to_string(), to: points_to, object: None, coords: Vec::new(), offset, assigned_once, constant_offset: None });
        let k = self.pointers.len() - 1;
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), Binding::Pointer(k));
        }
        Ok(k)
    }

    /// The value a pointer local holds now.
    pub(super) fn read_pointer(&mut self, k: usize, span: Span) -> PointerValue {
        if self.pointers[k].object.is_none() {
            self.infer_object(k, span);
        }
        let local = self.pointers[k].clone();
        let coords = local.coords.iter().map(|&c| self.add(ExprKind::Local(c), ScalarType::I64, span)).collect();
        let offset = match local.constant_offset {
            Some(c) => self.int_const(c, ScalarType::I64),
            None => self.add(ExprKind::Local(local.offset), ScalarType::I64, span),
        };
        PointerValue { object: local.object, coords, offset }
    }

    /// Where a pointer local is read before any pointer other than `NULL` was assigned to it
    /// in the text lowered so far: the object of the first value the statements being lowered
    /// assign to its name that points into one (tried as it would lower here, its statements
    /// and diagnostics dropped). Its assignment, when lowered, must agree.
    fn infer_object(&mut self, k: usize, span: Span) {
        let name = self.pointers[k].name.clone();
        let Some(values) = self.assigned_values.get(&name).cloned() else { return };
        if !self.inferring.insert(k) {
            return;
        }
        let to = self.pointers[k].to.clone();
        for value in &values {
            let (pending, errors, reported) = (std::mem::take(&mut self.pending), self.errors.len(), self.reported.clone());
            let tried = self.pointer_value(value);
            self.pending = pending;
            self.errors.truncate(errors);
            self.reported = reported;
            if let Ok(PointerValue { object: Some(object), .. }) = tried
                && self.check_points_to(&to, &object, "", span).is_ok()
            {
                let coords = (0..object.coordinates()).map(|i| self.new_local(&format!("{name}_row{i}"), ScalarType::I64, LocalKind::Var, span)).collect();
                let local = &mut self.pointers[k];
                local.coords = coords;
                local.object = Some(object);
                break;
            }
        }
        self.inferring.remove(&k);
    }

    /// `p = value`: the statements that make the pointer local `k` hold `value`. The first
    /// pointer other than `NULL` fixes the object; later ones must point into it too.
    pub(super) fn assign_pointer(&mut self, k: usize, value: PointerValue, span: Span, out: &mut Block) -> R<()> {
        let name = self.pointers[k].name.clone();
        if let Some(object) = &value.object {
            self.check_points_to(&self.pointers[k].to.clone(), object, &format!("`{name}`"), span)?;
            match &self.pointers[k].object {
                Some(held) if !held.same(object) => {
                    return Err(err(
                        span,
                        format!("`{name}` points into {} here but into {} before; a pointer in a kernel stays in one object", self.describe(object), self.describe(held)),
                        "use one pointer for each array (or index the arrays directly)",
                    ));
                }
                Some(_) => {}
                None => {
                    let coords = (0..object.coordinates()).map(|i| self.new_local(&format!("{name}_row{i}"), ScalarType::I64, LocalKind::Var, span)).collect();
                    let local = &mut self.pointers[k];
                    local.coords = coords;
                    local.object = Some(object.clone());
                }
            }
            for (i, c) in value.coords.into_iter().enumerate() {
                let local = self.pointers[k].coords[i];
                let value = self.cast(c, ScalarType::I64);
                out.push(Stmt::Assign { local, value });
            }
        }
        let offset = self.cast(value.offset, ScalarType::I64);
        if self.pointers[k].assigned_once
            && let ExprKind::ConstInt(c) = self.body.exprs[offset].kind
        {
            self.pointers[k].constant_offset = Some(c);
            return Ok(());
        }
        out.push(Stmt::Assign { local: self.pointers[k].offset, value: offset });
        Ok(())
    }

    /// Refuses a pointer into `object` where a pointer to `to` is expected (`what` names it).
    fn check_points_to(&self, to: &PointsTo, object: &Object, what: &str, span: Span) -> R<()> {
        let fits = match (to, object) {
            (PointsTo::Void, _) => true,
            (PointsTo::Number(t), Object::Array { ndims: 1, elem, .. }) => same_format(*t, *elem),
            (PointsTo::Number(t), Object::Address(e)) => same_format(*t, *e),
            (PointsTo::Number(t), Object::Scalar { local, .. }) => t.value_type() == self.body.locals[*local].ty,
            (PointsTo::Rows { depth, elem: t }, Object::Array { ndims, elem, array, .. }) => *ndims == *depth && same_format(*t, *elem) && !self.is_row_table(*array),
            (PointsTo::Table(t), Object::Array { ndims: 2, elem, array, fixed: 0 }) => same_format(*t, *elem) && self.is_row_table(*array),
            (PointsTo::Struct(s), Object::Structs { element_struct, .. }) => self.same_struct(*s, *element_struct),
            (PointsTo::Struct(s), Object::StructLocal { s: t, .. } | Object::HostStruct { s: t, .. } | Object::StructLocalArray { s: t, .. }) => self.same_struct(*s, *t),
            _ => false,
        };
        if fits {
            return Ok(());
        }
        Err(err(
            span,
            format!("{what} points to {}, but is given a pointer into {}", self.describe_points_to(to), self.describe(object)),
            "pass a pointer of the declared type (the same element type and number of dimensions)",
        ))
    }

    fn is_row_table(&self, array: ArrayRef) -> bool {
        matches!(array, ArrayRef::Param(p) if matches!(self.params[p as usize].kind, ParamKind::RowTable { .. }))
    }

    /// Two struct types of the kernel's scope that are the same struct (one definition seen
    /// through two declarations has one index; tags tell apart the rest).
    fn same_struct(&self, a: usize, b: usize) -> bool {
        a == b || (self.sema.structs[a].tag.is_some() && self.sema.structs[a].tag == self.sema.structs[b].tag)
    }

    fn describe_points_to(&self, to: &PointsTo) -> String {
        match to {
            PointsTo::Number(t) => format!("`{}` numbers", t.c_name()),
            PointsTo::Rows { depth, elem } => format!("rows of `{}` ({depth} subscripts)", elem.c_name()),
            PointsTo::Table(t) => format!("row pointers to `{}`", t.c_name()),
            PointsTo::Struct(s) => self.struct_title(*s),
            PointsTo::Void => "anything".to_string(),
        }
    }

    fn struct_title(&self, s: usize) -> String {
        match &self.sema.structs[s].tag {
            Some(tag) => format!("`struct {tag}`"),
            None => "a struct".to_string(),
        }
    }

    /// The object in words, for diagnostics.
    pub(super) fn describe(&self, object: &Object) -> String {
        match object {
            Object::Array { array, ndims, .. } => {
                let name = match array {
                    ArrayRef::Param(p) => self.params[*p as usize].name.clone(),
                    ArrayRef::Local(l) => self.body.locals[*l].name.clone(),
                    ArrayRef::Shared(i) => self.block_shared[*i as usize].name.clone(),
                    _ => "an array".to_string(),
                };
                if *ndims > 1 { format!("rows of `{name}`") } else { format!("`{name}`") }
            }
            Object::Scalar { local, .. } => format!("the variable `{}`", self.body.locals[*local].name),
            Object::Structs { root, .. } => format!("`{root}`"),
            Object::StructLocal { name, .. } => format!("the struct `{name}`"),
            Object::StructLocalArray { name, .. } => format!("the array of structs `{name}`"),
            Object::HostStruct { key, .. } => format!("the host struct `{key}`"),
            Object::Address(_) => "memory at a computed address".to_string(),
        }
    }

    /// How many subscripts `e` takes before it is no pointer (`None`: not a pointer or array).
    /// Answered from a memo by node: a chain of `+` asks it of every operand.
    pub(super) fn pointer_depth(&mut self, e: &ast::Expr) -> Option<usize> {
        let key = (e as *const ast::Expr as usize, e.span);
        if let Some(&known) = self.pointer_nodes.get(&key) {
            return known;
        }
        let depth = self.pointer_depth_uncached(e);
        self.pointer_nodes.insert(key, depth);
        depth
    }

    fn pointer_depth_uncached(&mut self, e: &ast::Expr) -> Option<usize> {
        let positive = |d: Option<usize>| d.filter(|&d| d > 0);
        match &e.kind {
            AE::Ident(name) => match self.binding(name) {
                Some(Binding::Pointer(k)) => {
                    let p = &self.pointers[k];
                    Some(p.object.as_ref().map_or(p.to.depth(), Object::depth))
                }
                Some(Binding::Local(l)) => self.body.locals[l].array_dims.as_ref().map(Vec::len),
                Some(Binding::StructArray(k)) => Some(self.struct_arrays[k].1.len()),
                Some(_) => None,
                None => {
                    if let Some((_, _, n)) = self.block_shared_array(name) {
                        return Some(n);
                    }
                    if self.private_arrays.contains_key(name.as_str()) {
                        return Some(1);
                    }
                    if let Some(&l) = self.host_locals.get(name.as_str()) {
                        return self.body.locals[l].array_dims.as_ref().map(Vec::len);
                    }
                    self.host_var(name).and_then(|v| type_depth(&v.ty))
                }
            },
            AE::Member { base, field, arrow } => match self.struct_type_of(base, *arrow) {
                Some(s) => self.sema.field(s, field).and_then(type_depth),
                None => self.member_type(e).ok().and_then(|t| type_depth(&t)),
            },
            AE::Index { .. } => {
                let (base, subs) = subscripts(e);
                positive(self.pointer_depth(base).and_then(|d| d.checked_sub(subs.len())))
            }
            AE::Unary { op: AU::Deref, operand } => positive(self.pointer_depth(operand).and_then(|d| d.checked_sub(1))),
            AE::Unary { op: AU::AddrOf, operand } => Some(1 + self.pointer_depth(operand).unwrap_or(0)),
            AE::Unary { op: AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec, operand } => self.pointer_depth(operand),
            AE::Binary { op: AB::Add, lhs, rhs } => {
                let l = self.pointer_depth(lhs);
                let r = self.pointer_depth(rhs);
                l.or(r)
            }
            AE::Binary { op: AB::Sub, lhs, rhs } => {
                let l = self.pointer_depth(lhs);
                if self.pointer_depth(rhs).is_some() { None } else { l }
            }
            AE::Binary { op: AB::Comma, rhs, .. } => self.pointer_depth(rhs),
            AE::Conditional { then, otherwise, .. } => {
                let t = self.pointer_depth(then);
                let o = self.pointer_depth(otherwise);
                t.or(o)
            }
            AE::Assign { lhs, .. } => self.pointer_depth(lhs),
            AE::Cast { ty, .. } => self.sema.declared_type(&ty.specs, &ty.declarator).ok().and_then(|t| type_depth(&t)),
            AE::Call { callee, .. } => match &callee.kind {
                AE::Ident(name) => self.inline_result_type(name, e.span).and_then(|t| type_depth(&t)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `e` is a pointer (or an array, which C turns into one).
    pub(super) fn is_pointer(&mut self, e: &ast::Expr) -> bool {
        self.pointer_depth(e).is_some()
    }

    /// Whether an access whose base is `base` (`base[i]`, `base->m`, `*base`) goes through a
    /// pointer of the kernel: a pointer local, or a pointer the expression computes
    /// (`(p + 1)[k]`, `(&a[i])->x`). Named host arrays and host pointers keep their own paths
    /// (a host struct pointer's members are params).
    pub(super) fn through_pointer(&mut self, base: &ast::Expr) -> bool {
        match &base.kind {
            AE::Ident(name) => self.pointer_local(name).is_some(),
            AE::Member { .. } | AE::Index { .. } => false,
            _ => self.is_pointer(base),
        }
    }

    /// The value of the pointer expression `e`.
    pub(super) fn pointer_value(&mut self, e: &ast::Expr) -> R<PointerValue> {
        let span = e.span;
        match &e.kind {
            AE::Ident(name) => {
                if let Some(k) = self.pointer_local(name) {
                    return Ok(self.read_pointer(k, span));
                }
                self.array_start(e)
            }
            AE::Member { base, field, arrow } => {
                if let Some((place, s)) = self.member_base_place(base, *arrow)? {
                    return self.member_array_start(&place, s, field, span);
                }
                self.array_start(e)
            }
            AE::Index { .. } => {
                let (base, subs) = subscripts(e);
                let depth = self.pointer_depth(base).unwrap_or(0);
                if subs.len() >= depth {
                    return Err(err(span, format!("`{}` is an element, not a pointer", self.text(span)), "take its address with `&`"));
                }
                let pv = self.pointer_value(base)?;
                let subs = self.subscripts_i64(&subs)?;
                self.pointer_rows(pv, subs, span)
            }
            AE::Unary { op: AU::Deref, operand } => {
                let pv = self.pointer_value(operand)?;
                let zero = self.int_const(0, ScalarType::I64);
                self.pointer_rows(pv, vec![zero], span)
            }
            AE::Unary { op: AU::AddrOf, operand } => self.address_of(operand),
            AE::Unary { op: op @ (AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec), operand } => {
                let k = self.assigned_pointer(operand)?;
                let before = self.read_pointer(k, span);
                let old = self.snapshot_pointer(before, span);
                let one = self.int_const(1, ScalarType::I64);
                let again = self.copy_pointer(&old);
                let moved = self.pointer_moved(again, one, matches!(op, AU::PreDec | AU::PostDec), span)?;
                let mut stmts = Vec::new();
                self.assign_pointer(k, moved, span, &mut stmts)?;
                self.pending.append(&mut stmts);
                Ok(if matches!(op, AU::PostInc | AU::PostDec) { old } else { self.read_pointer(k, span) })
            }
            AE::Binary { op: op @ (AB::Add | AB::Sub), lhs, rhs } => {
                let left = self.is_pointer(lhs);
                let (pointer, amount) = if left { (lhs, rhs) } else { (rhs, lhs) };
                if *op == AB::Sub && !left {
                    return Err(err(span, "a number minus a pointer is not a pointer", "subtract the number from the pointer"));
                }
                let pv = self.pointer_value(pointer)?;
                let delta = self.index_expr(amount)?;
                self.pointer_moved(pv, delta, *op == AB::Sub, span)
            }
            AE::Binary { op: AB::Comma, lhs, rhs } => {
                let mut effects = Vec::new();
                self.expr_stmt(lhs, &mut effects)?;
                self.pending.append(&mut effects);
                self.pointer_value(rhs)
            }
            AE::Conditional { cond, then, otherwise } => self.pointer_choice(cond, then, otherwise, span),
            AE::Assign { op, lhs, rhs } => {
                let k = self.assigned_pointer(lhs)?;
                let mut stmts = Vec::new();
                self.pointer_update(k, *op, rhs, span, &mut stmts)?;
                self.pending.append(&mut stmts);
                Ok(self.read_pointer(k, span))
            }
            AE::Cast { ty, expr } => {
                let target = self.sema.declared_type(&ty.specs, &ty.declarator)?;
                let CType::Pointer { to, .. } = &target else {
                    return Err(err(span, "this cast does not make a pointer", "cast to a pointer type"));
                };
                if is_null_literal(expr) {
                    return Ok(self.null_pointer());
                }
                if !self.is_pointer(expr) {
                    // `(double *) addr`: an integer the program turned into an address.
                    let Some(elem) = to.element_scalar() else {
                        return Err(err(span, "only pointers to numbers can be made from integers in kernels", "cast the integer to a pointer to numbers"));
                    };
                    let base = self.expr(expr)?;
                    if self.ty(base).is_float() || self.ty(base) == ScalarType::Bool {
                        return Err(err(expr.span, "only integers can be turned into pointers in kernels", "cast an address held in an integer, such as a size_t"));
                    }
                    let address = self.cast(base, ScalarType::U64);
                    let zero = self.int_const(0, ScalarType::I64);
                    return Ok(PointerValue { object: Some(Object::Address(elem)), coords: vec![address], offset: zero });
                }
                let pv = self.pointer_value(expr)?;
                self.pointer_cast_to(pv, to, span)
            }
            AE::IntLit { value: 0, .. } => Ok(self.null_pointer()),
            AE::Call { callee, args } => {
                let AE::Ident(name) = &callee.kind else {
                    return Err(err(span, "calls through function pointers are not supported in kernels", "call the function by name"));
                };
                self.inline_pointer_call(name, args, span)
            }
            _ => Err(err(span, format!("`{}` is not a pointer a kernel can follow", self.text(span)), "point into an array, a local or a struct")),
        }
    }

    /// `NULL`.
    pub(super) fn null_pointer(&mut self) -> PointerValue {
        let offset = self.int_const(NULL_OFFSET, ScalarType::I64);
        PointerValue { object: None, coords: Vec::new(), offset }
    }

    /// A second copy of a pointer value whose parts read only locals and constants (as
    /// [`Self::snapshot_pointer`] makes them): fresh expression nodes for each use.
    fn copy_pointer(&mut self, pv: &PointerValue) -> PointerValue {
        let coords = pv.coords.iter().map(|&c| self.copy_leaf(c)).collect();
        let offset = self.copy_leaf(pv.offset);
        PointerValue { object: pv.object.clone(), coords, offset }
    }

    fn copy_leaf(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        let e = self.body.exprs[h].clone();
        self.add(e.kind, e.ty, e.span)
    }

    /// The pointer value as it is now, in locals (for a value used after statements that may
    /// change what it reads: `p++`).
    fn snapshot_pointer(&mut self, pv: PointerValue, span: Span) -> PointerValue {
        let coords = pv.coords.into_iter().map(|c| self.snapshot_leaf(c, span)).collect();
        let offset = self.snapshot_leaf(pv.offset, span);
        PointerValue { object: pv.object, coords, offset }
    }

    fn snapshot_leaf(&mut self, value: Handle<Expr>, span: Span) -> Handle<Expr> {
        if matches!(self.body.exprs[value].kind, ExprKind::ConstInt(_)) {
            return value;
        }
        let ty = self.ty(value);
        let local = self.new_local("pointer", ty, LocalKind::Var, span);
        self.pending.push(Stmt::Assign { local, value });
        self.add(ExprKind::Local(local), ty, span)
    }

    /// `offset + index`, `index` alone when the offset is the constant 0.
    fn offset_plus(&mut self, offset: Handle<Expr>, index: Handle<Expr>, span: Span) -> Handle<Expr> {
        if matches!(self.body.exprs[offset].kind, ExprKind::ConstInt(0)) {
            return index;
        }
        self.binary(BinaryOp::Add, offset, index, ScalarType::I64, span)
    }

    /// `pv + delta` (`pv - delta` when `back`), in elements of what it points to.
    fn pointer_moved(&mut self, pv: PointerValue, delta: Handle<Expr>, back: bool, span: Span) -> R<PointerValue> {
        let zero = matches!(self.body.exprs[delta].kind, ExprKind::ConstInt(0));
        match &pv.object {
            None if !zero => return Err(err(span, "arithmetic on a null pointer", "point the pointer into an array first")),
            Some(object) if !object.has_elements() && !zero => {
                return Err(err(
                    span,
                    format!("pointer arithmetic on the address of {}, a single variable", self.describe(object)),
                    "use a local array if the code steps through several values",
                ));
            }
            _ => {}
        }
        let delta = self.cast(delta, ScalarType::I64);
        let offset = if back { self.binary(BinaryOp::Sub, pv.offset, delta, ScalarType::I64, span) } else { self.offset_plus(pv.offset, delta, span) };
        Ok(PointerValue { offset, ..pv })
    }

    /// Lowered subscripts, as `I64`.
    fn subscripts_i64(&mut self, subs: &[&ast::Expr]) -> R<Vec<Handle<Expr>>> {
        let mut out = Vec::new();
        for s in subs {
            let i = self.index_expr(s)?;
            out.push(self.cast(i, ScalarType::I64));
        }
        Ok(out)
    }

    /// `pv[s0][s1]...` for fewer subscripts than the object takes: the pointer to the row they
    /// reach (`a[i]` of a 2-D array is the address of `a[i][0]`).
    fn pointer_rows(&mut self, pv: PointerValue, subs: Vec<Handle<Expr>>, span: Span) -> R<PointerValue> {
        let Some(Object::Array { array, fixed, ndims, elem }) = pv.object else {
            return Err(err(span, format!("`{}` is not a row of an array", self.text(span)), "index arrays of numbers"));
        };
        if subs.len() >= ndims {
            return Err(err(span, format!("`{}` is an element, not a pointer", self.text(span)), "take its address with `&`"));
        }
        let count = subs.len();
        let mut coords = pv.coords;
        for (i, index) in subs.into_iter().enumerate() {
            coords.push(if i == 0 { self.offset_plus(pv.offset, index, span) } else { index });
        }
        let offset = self.int_const(0, ScalarType::I64);
        Ok(PointerValue { object: Some(Object::Array { array, fixed: fixed + count, ndims: ndims - count, elem }), coords, offset })
    }

    /// `(T *) pv`: the same pointer seen as pointing to `to`. Between number types of one
    /// format, to and from `void *`, and from an array to a pointer to its numbers (`(double *)
    /// a` of a 2-D array walks it row after row, as C lays it out).
    fn pointer_cast_to(&mut self, pv: PointerValue, to: &CType, span: Span) -> R<PointerValue> {
        let Some(points_to) = PointsTo::of(to) else {
            return Err(err(span, "this pointer type is not supported in kernels", "cast to pointers to numbers or structs"));
        };
        let Some(object) = &pv.object else { return Ok(pv) };
        if let (PointsTo::Number(t), Object::Array { array, fixed, ndims, elem }) = (&points_to, object)
            && *ndims > 1
            && same_format(*t, *elem)
            && !self.is_row_table(*array)
        {
            // Flattened: the row the pointer is at, then its elements as one run.
            let (array, fixed, ndims, elem) = (*array, *fixed, *ndims, *elem);
            let mut coords = pv.coords;
            coords.push(pv.offset);
            for _ in 1..ndims - 1 {
                coords.push(self.int_const(0, ScalarType::I64));
            }
            let offset = self.int_const(0, ScalarType::I64);
            return Ok(PointerValue { object: Some(Object::Array { array, fixed: fixed + ndims - 1, ndims: 1, elem }), coords, offset });
        }
        self.check_points_to(&points_to, object, "the cast", span)?;
        Ok(pv)
    }

    /// `cond ? a : b` of two pointers into one object (or `NULL`).
    fn pointer_choice(&mut self, cond: &ast::Expr, then: &ast::Expr, otherwise: &ast::Expr, span: Span) -> R<PointerValue> {
        let c = self.condition(cond)?;
        let outer = std::mem::take(&mut self.pending);
        let a = self.pointer_value(then);
        let then_needed = std::mem::replace(&mut self.pending, Vec::new());
        let b = self.pointer_value(otherwise);
        let else_needed = std::mem::replace(&mut self.pending, outer);
        let (a, b) = (a?, b?);
        let object = match (&a.object, &b.object) {
            (Some(x), Some(y)) if !x.same(y) => {
                return Err(err(
                    span,
                    format!("the two sides choose pointers into {} and {}; a pointer in a kernel stays in one object", self.describe(x), self.describe(y)),
                    "index the arrays directly in each branch",
                ));
            }
            (x, y) => x.clone().or_else(|| y.clone()),
        };
        let n = object.as_ref().map_or(0, Object::coordinates);
        // A side that is NULL has no coordinates: any value does.
        let pad = |this: &mut Self, mut coords: Vec<Handle<Expr>>| {
            while coords.len() < n {
                coords.push(this.int_const(0, ScalarType::I64));
            }
            coords
        };
        let (ac, bc) = (pad(self, a.coords), pad(self, b.coords));
        if then_needed.is_empty() && else_needed.is_empty() {
            let mut coords = Vec::new();
            for (x, y) in ac.into_iter().zip(bc) {
                let c2 = self.copy_condition(c);
                coords.push(self.add(ExprKind::Select { cond: c2, then: x, otherwise: y }, ScalarType::I64, span));
            }
            let offset = self.add(ExprKind::Select { cond: c, then: a.offset, otherwise: b.offset }, ScalarType::I64, span);
            return Ok(PointerValue { object, coords, offset });
        }
        let chosen: Vec<Handle<Local>> = (0..=n).map(|_| self.new_local("chosen", ScalarType::I64, LocalKind::Var, span)).collect();
        let mut then_needed = then_needed;
        let mut else_needed = else_needed;
        for (i, (x, y)) in ac.into_iter().chain([a.offset]).zip(bc.into_iter().chain([b.offset])).enumerate() {
            then_needed.push(Stmt::Assign { local: chosen[i], value: x });
            else_needed.push(Stmt::Assign { local: chosen[i], value: y });
        }
        self.pending.push(Stmt::If { cond: c, then: then_needed, otherwise: else_needed });
        let mut parts: Vec<Handle<Expr>> = chosen.iter().map(|&l| self.add(ExprKind::Local(l), ScalarType::I64, span)).collect();
        let offset = parts.pop().expect("the offset");
        Ok(PointerValue { object, coords: parts, offset })
    }

    /// A condition used twice (in each coordinate's select): a local holds it.
    fn copy_condition(&mut self, c: Handle<Expr>) -> Handle<Expr> {
        if let ExprKind::Local(_) | ExprKind::ConstInt(_) = self.body.exprs[c].kind {
            return self.copy_leaf(c);
        }
        let span = self.body.exprs[c].span;
        let local = self.new_local("chosen", ScalarType::Bool, LocalKind::Var, span);
        let value = std::mem::replace(&mut self.body.exprs[c], Expr { kind: ExprKind::Local(local), ty: ScalarType::Bool, span });
        let moved = self.body.exprs.append(value);
        self.pending.push(Stmt::Assign { local, value: moved });
        self.add(ExprKind::Local(local), ScalarType::Bool, span)
    }

    /// The pointer to the first element of the array `e` names (C's array-to-pointer
    /// conversion), or the value of the host pointer `e`.
    fn array_start(&mut self, e: &ast::Expr) -> R<PointerValue> {
        let span = e.span;
        if let AE::Ident(name) = &e.kind
            && let Some(Binding::StructArray(k)) = self.binding(name)
        {
            let (s, dims) = self.struct_arrays[k].clone();
            let fixed = dims.len() - 1;
            let coords = (0..fixed).map(|_| self.int_const(0, ScalarType::I64)).collect();
            let zero = self.int_const(0, ScalarType::I64);
            return Ok(PointerValue { object: Some(Object::StructLocalArray { name: name.clone(), s, fixed }), coords, offset: zero });
        }
        if let AE::Ident(name) = &e.kind
            && !self.is_kernel_name(name)
        {
            if let Some((index, elem, ndims)) = self.block_shared_array(name) {
                return Ok(self.array_pointer(ArrayRef::Shared(index), ndims, elem));
            }
            if let Some(&copies) = self.private_arrays.get(name.as_str()) {
                let (_, _, elem) = self.param_shape(copies.buffer)?;
                let base = self.add(ExprKind::Local(copies.base), ScalarType::I64, span);
                return Ok(PointerValue { object: Some(Object::Array { array: ArrayRef::Param(copies.buffer), fixed: 0, ndims: 1, elem }), coords: Vec::new(), offset: base });
            }
            if let Some(info) = self.host_var(name)
                && let Some(s) = struct_elements(&info.ty)
                && !self.host_locals.contains_key(name.as_str())
            {
                self.check_default_none(name, span);
                self.check_struct_array_root(name, span)?;
                let zero = self.int_const(0, ScalarType::I64);
                let fixed = type_depth(&info.ty).unwrap_or(1) - 1;
                let coords = (0..fixed).map(|_| self.int_const(0, ScalarType::I64)).collect();
                return Ok(PointerValue { object: Some(Object::Structs { root: name.clone(), root_info: info, element_struct: s, fixed }), coords, offset: zero });
            }
        }
        if let AE::Member { .. } = &e.kind
            && let Ok(ty) = self.member_type(e)
            && let Some(s) = struct_elements(&ty)
        {
            let key = self.key(e.span);
            let info = VarInfo { ty, is_const: false, restrict: false, storage: sema::Storage::Global, span, declared_len: None };
            let zero = self.int_const(0, ScalarType::I64);
            return Ok(PointerValue { object: Some(Object::Structs { root: key, root_info: info, element_struct: s, fixed: 0 }), coords: Vec::new(), offset: zero });
        }
        let view = self.array_base(e)?;
        Ok(self.array_pointer(view.array, view.ndims, view.elem))
    }

    fn array_pointer(&mut self, array: ArrayRef, ndims: usize, elem: ScalarType) -> PointerValue {
        let zero = self.int_const(0, ScalarType::I64);
        PointerValue { object: Some(Object::Array { array, fixed: 0, ndims, elem }), coords: Vec::new(), offset: zero }
    }

    /// `&x`.
    pub(super) fn address_of(&mut self, x: &ast::Expr) -> R<PointerValue> {
        let span = x.span;
        match &x.kind {
            AE::Unary { op: AU::Deref, operand } if self.struct_type_of(x, false).is_none() => return self.pointer_value(operand),
            AE::Ident(name) => return self.address_of_name(name, span),
            _ => {}
        }
        if let Some(found) = self.struct_address(x)? {
            return Ok(found);
        }
        if let AE::Index { .. } = &x.kind {
            let (base, subs) = subscripts(x);
            // Through a pointer, or a row of an array (`&a[i]` of a 2-D `a`); an element of an
            // array member (`&s.v[i]`) is a target like any other.
            let row = self.pointer_depth(base).is_some_and(|d| d > subs.len());
            if self.through_pointer(base) || (row && !matches!(base.kind, AE::Member { .. })) {
                let pv = self.pointer_value(base)?;
                let subs = self.subscripts_i64(&subs)?;
                return self.element_address(pv, subs, span);
            }
        }
        match self.target(x)? {
            Target::Local(local) => Ok(self.scalar_pointer(local, false)),
            Target::Element { array, indices, .. } => Ok(self.element_pointer(array, indices)),
        }
    }

    /// The address of the element `array[indices]`.
    fn element_pointer(&mut self, array: ArrayRef, mut indices: Vec<Handle<Expr>>) -> PointerValue {
        let elem = self.array_format(array);
        let last = indices.pop().unwrap_or_else(|| self.int_const(0, ScalarType::I64));
        let coords = indices.into_iter().map(|h| self.cast(h, ScalarType::I64)).collect::<Vec<_>>();
        let fixed = coords.len();
        let offset = self.cast(last, ScalarType::I64);
        PointerValue { object: Some(Object::Array { array, fixed, ndims: 1, elem }), coords, offset }
    }

    /// `&pv[s0]...[sk]`: the address of the element (or of the row, for fewer subscripts than
    /// the object takes).
    fn element_address(&mut self, pv: PointerValue, mut subs: Vec<Handle<Expr>>, span: Span) -> R<PointerValue> {
        let Some(last) = subs.pop() else { return Ok(pv) };
        let at = if subs.is_empty() { pv } else { self.pointer_rows(pv, subs, span)? };
        self.pointer_moved(at, last, false, span)
    }

    /// `&x` for a name: a scalar local, a struct local, or a host variable.
    fn address_of_name(&mut self, name: &str, span: Span) -> R<PointerValue> {
        match self.binding(name) {
            Some(Binding::Local(l)) if self.body.locals[l].array_dims.is_none() => return Ok(self.scalar_pointer(l, false)),
            Some(Binding::Struct(s)) => {
                let zero = self.int_const(0, ScalarType::I64);
                return Ok(PointerValue { object: Some(Object::StructLocal { name: name.to_string(), s }), coords: Vec::new(), offset: zero });
            }
            Some(Binding::Pointer(_)) => {
                return Err(err(span, format!("`&{name}` is the address of a pointer; kernels cannot hold pointers to pointers"), "pass the pointer itself"));
            }
            Some(_) => {
                return Err(err(span, format!("cannot take the address of the array `{name}` as a whole in a kernel"), format!("take the address of its first element: &{name}[0]")));
            }
            None => {}
        }
        let Some(info) = self.host_var(name) else {
            return Err(err(span, format!("undeclared name `{name}`"), "declare it before the construct"));
        };
        self.check_default_none(name, span);
        match &info.ty {
            CType::Scalar(t) => {
                let value = self.host_scalar(name, t.value_type(), span, false)?;
                if let ExprKind::Local(l) = self.body.exprs[value].kind {
                    return Ok(self.scalar_pointer(l, false));
                }
                // A host scalar every iteration shares: a copy the kernel reads through.
                let local = self.new_local(name, t.value_type(), LocalKind::Var, span);
                self.pending.push(Stmt::Assign { local, value });
                Ok(self.scalar_pointer(local, true))
            }
            CType::Struct(s) => {
                let zero = self.int_const(0, ScalarType::I64);
                Ok(PointerValue { object: Some(Object::HostStruct { key: name.to_string(), s: *s }), coords: Vec::new(), offset: zero })
            }
            _ => Err(err(span, format!("cannot take the address of `{name}` as a whole in a kernel"), format!("take the address of an element: &{name}[0]"))),
        }
    }

    fn scalar_pointer(&mut self, local: Handle<Local>, read_only: bool) -> PointerValue {
        let zero = self.int_const(0, ScalarType::I64);
        PointerValue { object: Some(Object::Scalar { local, read_only }), coords: Vec::new(), offset: zero }
    }

    /// The address of a struct the kernel holds or indexes (`&grid[i]`, `&s`, `&p->inner`
    /// aside), `None` when `x` is no struct.
    fn struct_address(&mut self, x: &ast::Expr) -> R<Option<PointerValue>> {
        let Some((place, s)) = self.kernel_struct_place(x)? else { return Ok(None) };
        let span = x.span;
        match place {
            Place::Local(name) => {
                let zero = self.int_const(0, ScalarType::I64);
                Ok(Some(PointerValue { object: Some(Object::StructLocal { name, s }), coords: Vec::new(), offset: zero }))
            }
            Place::Host(key) => {
                let zero = self.int_const(0, ScalarType::I64);
                Ok(Some(PointerValue { object: Some(Object::HostStruct { key, s }), coords: Vec::new(), offset: zero }))
            }
            Place::LocalElement { name, mut indices } => {
                if name.contains('.') {
                    return Err(err(span, "pointers to structs nested inside an array's elements are not supported in kernels", "point to the array's elements"));
                }
                let last = indices.pop().map(|l| self.add(ExprKind::Local(l), ScalarType::I64, span)).unwrap_or_else(|| self.int_const(0, ScalarType::I64));
                let coords: Vec<Handle<Expr>> = indices.into_iter().map(|l| self.add(ExprKind::Local(l), ScalarType::I64, span)).collect();
                let fixed = coords.len();
                Ok(Some(PointerValue { object: Some(Object::StructLocalArray { name, s, fixed }), coords, offset: last }))
            }
            Place::Element(at) => {
                let Some((root, root_info, element_struct, mut indices)) = at.whole_element() else {
                    return Err(err(span, "pointers to structs nested inside an array's elements are not supported in kernels", "point to the array's elements, or to a struct local copy"));
                };
                let last = indices.pop().unwrap_or_else(|| self.int_const(0, ScalarType::I64));
                let coords = indices.into_iter().map(|h| self.cast(h, ScalarType::I64)).collect::<Vec<_>>();
                let fixed = coords.len();
                let offset = self.cast(last, ScalarType::I64);
                Ok(Some(PointerValue { object: Some(Object::Structs { root, root_info, element_struct, fixed }), coords, offset }))
            }
        }
    }

    /// The element format of an array the kernel indexes.
    fn array_format(&self, array: ArrayRef) -> ScalarType {
        match array {
            ArrayRef::Param(p) => match &self.params[p as usize].kind {
                ParamKind::Array { elem, .. } | ParamKind::RowTable { elem, .. } => *elem,
                ParamKind::Scalar(t) => *t,
            },
            ArrayRef::Local(l) => self.body.locals[l].ty,
            ArrayRef::Shared(i) => self.block_shared[i as usize].elem,
            ArrayRef::Address(t) => t,
            ArrayRef::Partials(_) => ScalarType::F64,
        }
    }

    /// The pointer to the first element of the array member `field` of the struct at `place`
    /// (`s.v`, `a[i].v`, `p->v`).
    fn member_array_start(&mut self, place: &Place, s: usize, field: &str, span: Span) -> R<PointerValue> {
        let dims = match self.sema.field(s, field) {
            Some(ty @ CType::Array { .. }) => type_depth(ty).unwrap_or(1),
            _ => return Err(err(span, format!("the member `{field}` is not an array"), "take the address of an array member or an element")),
        };
        let zeros = (0..dims).map(|_| self.int_const(0, ScalarType::I64)).collect();
        let (array, indices, _) = self.member_element_at(place, s, field, zeros, span)?;
        if let ArrayRef::Local(_) = array {
            return Ok(self.array_pointer(array, dims, self.array_format(array)));
        }
        if dims > 1 {
            return Err(err(span, "pointers to multi-dimensional array members of array elements are not supported in kernels", "index the member directly"));
        }
        Ok(self.element_pointer(array, indices))
    }

    /// The struct type of `e` (`e->` when `arrow`) as the kernel sees it, without lowering
    /// anything: a struct local, an element of an array of structs, a struct a pointer points
    /// to, a member of one, a host struct.
    pub(super) fn struct_type_of(&mut self, e: &ast::Expr, arrow: bool) -> Option<usize> {
        if arrow {
            return match &e.kind {
                AE::Ident(name) => match self.pointer_local(name) {
                    Some(k) => match (&self.pointers[k].object, &self.pointers[k].to) {
                        (Some(Object::Structs { element_struct: s, .. } | Object::StructLocal { s, .. } | Object::StructLocalArray { s, .. } | Object::HostStruct { s, .. }), _) => Some(*s),
                        (_, PointsTo::Struct(s)) => Some(*s),
                        _ => None,
                    },
                    None => match self.binding(name) {
                        Some(Binding::StructArray(k)) => Some(self.struct_arrays[k].0),
                        Some(_) => None,
                        None => self.host_var(name).and_then(|v| struct_elements(&v.ty)),
                    },
                },
                AE::Unary { op: AU::AddrOf, operand } => self.struct_type_of(operand, false),
                AE::Binary { op: AB::Add | AB::Sub, lhs, rhs } => {
                    let l = self.struct_type_of(lhs, true);
                    l.or_else(|| self.struct_type_of(rhs, true))
                }
                AE::Conditional { then, otherwise, .. } => {
                    let t = self.struct_type_of(then, true);
                    t.or_else(|| self.struct_type_of(otherwise, true))
                }
                AE::Unary { op: AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec, operand } | AE::Assign { lhs: operand, .. } => self.struct_type_of(operand, true),
                AE::Cast { ty, .. } => match self.sema.declared_type(&ty.specs, &ty.declarator).ok()? {
                    CType::Pointer { to, .. } => match *to {
                        CType::Struct(s) => Some(s),
                        _ => None,
                    },
                    _ => None,
                },
                AE::Call { callee, .. } => match &callee.kind {
                    AE::Ident(name) => match self.inline_result_type(name, e.span)? {
                        CType::Pointer { to, .. } => match *to {
                            CType::Struct(s) => Some(s),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            };
        }
        match &e.kind {
            AE::Ident(name) => self.kernel_struct(name).or_else(|| match self.host_var(name)?.ty {
                CType::Struct(s) if !self.is_kernel_name(name) => Some(s),
                _ => None,
            }),
            AE::Index { base, .. } | AE::Unary { op: AU::Deref, operand: base } => self.struct_type_of(base, true),
            AE::Member { base, field, arrow } => match self.struct_type_of(base, *arrow).and_then(|s| self.sema.field(s, field))? {
                CType::Struct(t) => Some(*t),
                _ => None,
            },
            _ => None,
        }
    }

    /// The place of the struct a member access `base.m` / `base->m` reads from, when the
    /// kernel holds or indexes it (a struct local, an element, a struct through a pointer);
    /// `None` for a host struct, whose members are params.
    pub(super) fn member_base_place(&mut self, base: &ast::Expr, arrow: bool) -> R<Option<(Place, usize)>> {
        if arrow {
            if !self.through_pointer(base) {
                return Ok(None);
            }
            let pv = self.pointer_value(base)?;
            return self.pointer_struct(pv, None, base.span).map(Some);
        }
        self.kernel_struct_place(base)
    }

    /// The struct `pv` points to (`pv[sub]` with a subscript).
    pub(super) fn pointer_struct(&mut self, pv: PointerValue, sub: Option<&ast::Expr>, span: Span) -> R<(Place, usize)> {
        let index = match sub {
            Some(s) => {
                let i = self.index_expr(s)?;
                Some(self.cast(i, ScalarType::I64))
            }
            None => None,
        };
        match pv.object {
            Some(Object::Structs { root, root_info, element_struct, .. }) => {
                let mut indices = pv.coords;
                let at = match index {
                    Some(i) => self.binary(BinaryOp::Add, pv.offset, i, ScalarType::I64, span),
                    None => pv.offset,
                };
                indices.push(at);
                Ok((Place::Element(ElementPlace::whole(root, root_info, element_struct, indices)), element_struct))
            }
            Some(Object::StructLocal { name, s }) => {
                self.only_element_zero(index, span)?;
                Ok((Place::Local(name), s))
            }
            Some(Object::StructLocalArray { name, s, .. }) => {
                let at = match index {
                    Some(i) => self.offset_plus(pv.offset, i, span),
                    None => pv.offset,
                };
                let mut indices: Vec<Handle<Local>> = pv.coords.into_iter().map(|c| self.subscript_local(c, span)).collect();
                indices.push(self.subscript_local(at, span));
                Ok((Place::LocalElement { name, indices }, s))
            }
            Some(Object::HostStruct { key, s }) => {
                self.only_element_zero(index, span)?;
                Ok((Place::Host(key), s))
            }
            None => Err(err(span, "this dereferences a null pointer", "point the pointer at a struct first")),
            Some(other) => Err(err(span, format!("`{}` points into {}, not to a struct", self.text(span), self.describe(&other)), "use `->` on pointers to structs")),
        }
    }

    fn only_element_zero(&mut self, index: Option<Handle<Expr>>, span: Span) -> R<()> {
        match index.map(|i| self.body.exprs[i].kind.clone()) {
            None | Some(ExprKind::ConstInt(0)) => Ok(()),
            _ => Err(err(span, "this pointer points to a single struct; only its element 0 exists", "use `p->member` or `p[0].member`")),
        }
    }

    /// The element `pv[subs...]` (`*pv` with none) reads or (`writing`) writes.
    pub(super) fn pointer_element(&mut self, pv: PointerValue, subs: &[&ast::Expr], writing: bool, span: Span) -> R<Target> {
        match pv.object {
            None => Err(err(span, format!("`{}` dereferences a null pointer", self.text(span)), "point the pointer into an array before using it")),
            Some(Object::Array { array, ndims, elem, .. }) => {
                let given = subs.len().max(1);
                if given != ndims {
                    return Err(err(
                        span,
                        format!("`{}` gives {given} of the {ndims} subscripts the pointer takes", self.text(span)),
                        "index every dimension (rows of arrays cannot be used as values in kernels)",
                    ));
                }
                let mut indices = pv.coords;
                let first = match subs.first() {
                    Some(s) => {
                        let i = self.index_expr(s)?;
                        let i = self.cast(i, ScalarType::I64);
                        self.offset_plus(pv.offset, i, span)
                    }
                    None => pv.offset,
                };
                indices.push(first);
                for s in subs.iter().skip(1) {
                    indices.push(self.index_expr(s)?);
                }
                Ok(Target::Element { array, indices, ty: elem.value_type() })
            }
            Some(Object::Scalar { local, read_only }) => {
                let index = match subs {
                    [] => None,
                    [s] => Some(self.index_expr(s)?),
                    _ => return Err(err(span, "this pointer points to a single number", "dereference it once")),
                };
                self.only_element_zero(index, span)?;
                if writing && read_only {
                    let name = self.body.locals[local].name.clone();
                    return Err(err(
                        span,
                        format!("this writes through the address of `{name}`, a host variable every iteration shares"),
                        format!("add private({name}) (or reduction) to the construct, or declare `{name}` inside the loop"),
                    ));
                }
                Ok(Target::Local(local))
            }
            Some(Object::Address(elem)) => {
                let [base] = pv.coords.as_slice() else { return Err(Diagnostic::global_error("internal: an address pointer without its base")) };
                let base = *base;
                let at = match subs {
                    [] => pv.offset,
                    [s] => {
                        let i = self.index_expr(s)?;
                        let i = self.cast(i, ScalarType::I64);
                        self.binary(BinaryOp::Add, pv.offset, i, ScalarType::I64, span)
                    }
                    _ => return Err(err(span, "a pointer made from an integer has one dimension", "index it with one subscript")),
                };
                let at = self.cast(at, ScalarType::U64);
                let size = self.int_const(elem.size_bytes() as i64, ScalarType::U64);
                let bytes = self.binary(BinaryOp::Mul, at, size, ScalarType::U64, span);
                let address = self.binary(BinaryOp::Add, base, bytes, ScalarType::U64, span);
                Ok(Target::Element { array: ArrayRef::Address(elem), indices: vec![address], ty: elem.value_type() })
            }
            Some(Object::Structs { .. } | Object::StructLocal { .. } | Object::StructLocalArray { .. } | Object::HostStruct { .. }) => Err(err(
                span,
                format!("`{}` is a struct, which kernels use member by member", self.text(span)),
                "use its members: p->member or p[i].member",
            )),
        }
    }

    /// `base[i]...` or `*base` through a pointer of the kernel: the element.
    pub(super) fn pointer_access(&mut self, e: &ast::Expr, writing: bool) -> R<Option<Target>> {
        match &e.kind {
            AE::Unary { op: AU::Deref, operand } => {
                if self.kernel_struct_place(e)?.is_some() {
                    return Ok(None);
                }
                let pv = self.pointer_value(operand)?;
                self.pointer_element(pv, &[], writing, e.span).map(Some)
            }
            AE::Index { .. } => {
                let (base, subs) = subscripts(e);
                if !self.through_pointer(base) {
                    return Ok(None);
                }
                let pv = self.pointer_value(base)?;
                self.pointer_element(pv, &subs, writing, e.span).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The pointer local an assignment or increment changes (`p = q`, `p++`, `p += 2`).
    pub(super) fn assigned_pointer(&mut self, lhs: &ast::Expr) -> R<usize> {
        if let AE::Ident(name) = &lhs.kind
            && let Some(k) = self.pointer_local(name)
        {
            return Ok(k);
        }
        if let AE::Ident(name) = &lhs.kind
            && !self.is_kernel_name(name)
            && self.host_var(name).is_some_and(|v| matches!(v.ty, CType::Pointer { .. }))
        {
            return Err(err(
                lhs.span,
                format!("the host pointer `{name}` is assigned inside the construct"),
                format!("declare a pointer inside the loop (`double *{name}_here = ...;`), or assign `{name}` on the host"),
            ));
        }
        Err(err(lhs.span, format!("`{}` stores a pointer into memory, which kernels cannot do", self.text(lhs.span)), "keep pointers in local variables of the kernel"))
    }

    /// `p = rhs`, `p += rhs`, `p -= rhs` for the pointer local `k`.
    pub(super) fn pointer_update(&mut self, k: usize, op: Option<AB>, rhs: &ast::Expr, span: Span, out: &mut Block) -> R<()> {
        let value = match op {
            None => self.pointer_value(rhs)?,
            Some(op @ (AB::Add | AB::Sub)) => {
                let delta = self.index_expr(rhs)?;
                let current = self.read_pointer(k, span);
                self.pointer_moved(current, delta, op == AB::Sub, span)?
            }
            Some(_) => return Err(err(span, "only `+=` and `-=` apply to pointers", "move pointers by adding or subtracting numbers")),
        };
        let mut pending = std::mem::take(&mut self.pending);
        out.append(&mut pending);
        // A pointer into another object is reported at the value that points there.
        self.assign_pointer(k, value, if op.is_none() { rhs.span } else { span }, out)
    }

    /// `p++`, `--p` as statements.
    pub(super) fn pointer_step(&mut self, k: usize, back: bool, span: Span, out: &mut Block) -> R<()> {
        let current = self.read_pointer(k, span);
        let one = self.int_const(1, ScalarType::I64);
        let moved = self.pointer_moved(current, one, back, span)?;
        self.assign_pointer(k, moved, span, out)
    }

    /// `lhs op rhs` where an operand is a pointer: comparisons and the difference of two
    /// pointers into one object; anything else is refused.
    pub(super) fn pointer_binary(&mut self, op: AB, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> R<Handle<Expr>> {
        let compare = match op {
            AB::Eq => BinaryOp::Eq,
            AB::Ne => BinaryOp::Ne,
            AB::Lt => BinaryOp::Lt,
            AB::Le => BinaryOp::Le,
            AB::Gt => BinaryOp::Gt,
            AB::Ge => BinaryOp::Ge,
            AB::Sub => {
                let (a, b) = (self.pointer_value(lhs)?, self.pointer_value(rhs)?);
                if let (Some(x), Some(y)) = (&a.object, &b.object)
                    && !x.same(y)
                {
                    return Err(err(span, format!("subtracts pointers into {} and {}", self.describe(x), self.describe(y)), "subtract pointers into one array only"));
                }
                return Ok(self.binary(BinaryOp::Sub, a.offset, b.offset, ScalarType::I64, span));
            }
            _ => {
                return Err(err(
                    span,
                    format!("`{}` uses a pointer as a number", self.text(span)),
                    "add or subtract numbers to move a pointer, compare pointers, or index through them",
                ));
            }
        };
        let (a, b) = (self.pointer_value(lhs)?, self.pointer_value(rhs)?);
        if let (Some(x), Some(y)) = (&a.object, &b.object)
            && !x.same(y)
        {
            return match compare {
                BinaryOp::Eq | BinaryOp::Ne => Ok(self.int_const((compare == BinaryOp::Ne) as i64, ScalarType::Bool)),
                _ => Err(err(span, format!("compares the order of pointers into {} and {}", self.describe(x), self.describe(y)), "compare pointers into one array only")),
            };
        }
        if a.object.is_none() || b.object.is_none() {
            // Against NULL: the offsets alone tell.
            return Ok(self.binary(compare, a.offset, b.offset, ScalarType::Bool, span));
        }
        // Over the coordinates, then the offsets: all equal, or the first that differs in order.
        let (mut xs, mut ys) = (a.coords, b.coords);
        xs.push(a.offset);
        ys.push(b.offset);
        if matches!(compare, BinaryOp::Eq | BinaryOp::Ne) {
            let mut all: Option<Handle<Expr>> = None;
            for (x, y) in xs.into_iter().zip(ys) {
                let here = self.binary(BinaryOp::Eq, x, y, ScalarType::Bool, span);
                all = Some(match all {
                    None => here,
                    Some(prev) => self.binary(BinaryOp::LogAnd, prev, here, ScalarType::Bool, span),
                });
            }
            let equal = all.expect("at least the offsets");
            return Ok(if compare == BinaryOp::Eq { equal } else { self.add(ExprKind::Unary { op: UnaryOp::Not, arg: equal }, ScalarType::Bool, span) });
        }
        let strict = if matches!(compare, BinaryOp::Lt | BinaryOp::Le) { BinaryOp::Lt } else { BinaryOp::Gt };
        let mut pairs: Vec<(Handle<Expr>, Handle<Expr>)> = xs.into_iter().zip(ys).collect();
        let (x, y) = pairs.pop().expect("at least the offsets");
        let mut result = self.binary(compare, x, y, ScalarType::Bool, span);
        for (x, y) in pairs.into_iter().rev() {
            let (x, y) = (self.snapshot(x, "pointer", span), self.snapshot(y, "pointer", span));
            let (x2, y2) = (self.copy_leaf(x), self.copy_leaf(y));
            let before = self.binary(strict, x, y, ScalarType::Bool, span);
            let equal = self.binary(BinaryOp::Eq, x2, y2, ScalarType::Bool, span);
            let tie = self.binary(BinaryOp::LogAnd, equal, result, ScalarType::Bool, span);
            result = self.binary(BinaryOp::LogOr, before, tie, ScalarType::Bool, span);
        }
        Ok(result)
    }

    /// `if (p)`, `!p`, `p && q`: whether the pointer is not `NULL`.
    pub(super) fn pointer_truth(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        let pv = self.pointer_value(e)?;
        let null = self.int_const(NULL_OFFSET, ScalarType::I64);
        Ok(self.binary(BinaryOp::Ne, pv.offset, null, ScalarType::Bool, e.span))
    }

    /// A reference of the construct to the host array of structs `root`, which the kernel
    /// indexes through an array param: refused when the construct privatises or assigns it.
    fn check_struct_array_root(&mut self, root: &str, span: Span) -> R<()> {
        if self.treatments.contains_key(root) {
            return Err(err(span, format!("private copies of the array of structs `{root}` are not supported"), "declare a struct local inside the loop instead"));
        }
        if self.written.contains(root) {
            return Err(err(span, format!("the pointer `{root}` is assigned inside the construct"), "assign pointers on the host, outside the compute construct"));
        }
        Ok(())
    }
}

/// The struct a pointer or array type's elements are (`node_t *`, `node_t g[n][m]`).
fn struct_elements(ty: &CType) -> Option<usize> {
    let mut cur = ty;
    while let CType::Pointer { to: inner, .. } | CType::Array { elem: inner, .. } = cur {
        cur = inner;
    }
    match cur {
        CType::Struct(s) if !std::ptr::eq(cur, ty) => Some(*s),
        _ => None,
    }
}

/// Two element formats a pointer may move between: the same, or integers of one width (C lets
/// `unsigned` and `int` alias).
fn same_format(a: ScalarType, b: ScalarType) -> bool {
    a == b || (!a.is_float() && !b.is_float() && a != ScalarType::Bool && b != ScalarType::Bool && a.size_bytes() == b.size_bytes())
}

/// `0` or `(void *) 0`, as `NULL` expands.
pub(super) fn is_null_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        AE::IntLit { value: 0, .. } => true,
        AE::Cast { expr, .. } => is_null_literal(expr),
        _ => false,
    }
}
