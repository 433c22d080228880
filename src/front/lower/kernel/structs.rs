//! Structs in kernels.
//!
//! * A struct local (`struct P p;` in a kernel) is one local per scalar member, one local array
//!   per array member, bound as `p.x`, `p.v`, `p.inner.y`; the struct itself is bound to its
//!   type. Members are read and assigned like locals.
//! * An element of a host array of structs (`a[i].x`, `a[i][j].inner.v[k]`) is read and assigned
//!   through an array param that sees the array's memory as rows of the member's type: for a
//!   struct of 24 bytes, `a[i].c` (a `double` at byte 16) is element `[i][2]` of `a` seen as
//!   `double (*)[3]`. This needs the struct's layout, which [`Sema`] computes for structs
//!   without bit-fields, attributes or `#pragma pack`; other structs are refused. So are unions
//!   there: distinct members must be distinct bytes, since the analyses take distinct array
//!   params as disjoint.
//! * Whole structs are assigned member by member (`p = a[i]`, `a[i] = p`, `p = q`, and from a
//!   host struct, whose members the kernel reads as params), and struct locals take
//!   initializer lists with `.member` designators.

use super::expr::{member_root, subscripts};
use super::*;

/// Arrays members copied element by element are unrolled up to this many elements.
const MAX_COPIED_ELEMENTS: u64 = 256;

/// Where a struct value lives.
#[derive(Clone, Debug)]
pub(super) enum Place {
    /// A struct local: member `m` is bound as `<name>.m`.
    Local(String),
    /// An element of a host array of structs.
    Element(ElementPlace),
    /// A host struct the kernel reads (a variable, `p->inner`), by its C text: its scalar
    /// members are params.
    Host(String),
    /// An element of a local array of structs (`ps[i]`, `ps[i].inner`): member `m` is element
    /// `indices` of the local array bound as `<name>.m`. The subscripts are held in locals, so
    /// that each member access reads them afresh.
    LocalElement { name: String, indices: Vec<Handle<Local>> },
}

/// Bytes of one element of a host array of structs.
#[derive(Clone, Debug)]
pub(super) struct ElementPlace {
    /// The host array or pointer (its C text), its type and qualifiers.
    root: String,
    root_info: VarInfo,
    /// The struct the array's elements are.
    element_struct: usize,
    /// The lowered subscripts of the array of structs, outermost first.
    indices: Vec<Handle<Expr>>,
    /// Bytes into the element: a constant, and `index * stride` terms of array members.
    offset: u64,
    terms: Vec<(Handle<Expr>, u64)>,
}

impl ElementPlace {
    /// Element `indices` of the host array of structs `root`, as a whole.
    pub(super) fn whole(root: String, root_info: VarInfo, element_struct: usize, indices: Vec<Handle<Expr>>) -> ElementPlace {
        ElementPlace { root, root_info, element_struct, indices, offset: 0, terms: Vec::new() }
    }

    /// The array, its info, struct and subscripts when the place is a whole element (not a
    /// struct nested in one).
    pub(super) fn whole_element(self) -> Option<(String, VarInfo, usize, Vec<Handle<Expr>>)> {
        (self.offset == 0 && self.terms.is_empty()).then_some((self.root, self.root_info, self.element_struct, self.indices))
    }
}

/// A member of a struct place.
enum MemberRef {
    /// A scalar member, to read or assign.
    Scalar(Target),
    /// A scalar member of a host struct: a param (its C text and type).
    HostScalar(String, ScalarType),
    Array(ArrayMember),
    Struct(Place, usize),
}

enum ArrayMember {
    Local(Handle<Local>),
    /// An array member of an element of a local array of structs: the member's local array and
    /// the element's subscripts, which come first.
    LocalRows(Handle<Local>, Vec<Handle<Local>>),
    /// An array member of an element: the place of its first element, its dimensions and
    /// element type.
    Element(ElementPlace, Vec<u32>, ScalarType),
    /// An array member of a host struct: its C text and type.
    Host(String, CType),
}

/// `ty` (a pointer to or an array of structs, of any depth) with its structs seen as rows of
/// `row` elements of `elem`.
fn rows_view(ty: &CType, elem: ScalarType, row: u64) -> CType {
    match ty {
        CType::Pointer { to, quals } => CType::Pointer { to: Box::new(rows_view(to, elem, row)), quals: *quals },
        CType::Array { elem: e, len } => CType::Array { elem: Box::new(rows_view(e, elem, row)), len: len.clone() },
        _ => CType::Array { elem: Box::new(CType::Scalar(elem)), len: ArrayLen::Const(row) },
    }
}

impl<'a> KernelBuilder<'a> {
    fn struct_name(&self, s: usize) -> String {
        match self.sema.structs.get(s).and_then(|d| d.tag.clone()) {
            Some(tag) => format!("struct `{tag}`"),
            None => "this struct".to_string(),
        }
    }

    /// The size of struct `s`, or why the kernel cannot know it.
    pub(super) fn struct_size(&self, s: usize, span: Span) -> R<u64> {
        match self.sema.size_align(&CType::Struct(s)) {
            Some((size, _)) => Ok(size),
            None => Err(err(
                span,
                format!("the layout of {} is not known: {}", self.struct_name(s), self.sema.layout_problem(s)),
                "kernels use structs laid out naturally (no bit-fields, packing or alignment attributes)",
            )),
        }
    }

    /// The place of `e` when it is a struct the kernel holds or indexes: a struct local, an
    /// element of a host array of structs, or a struct member of either. `None` for anything
    /// else (a host struct, a scalar).
    pub(super) fn kernel_struct_place(&mut self, e: &ast::Expr) -> R<Option<(Place, usize)>> {
        match &e.kind {
            AE::Ident(n) => Ok(self.kernel_struct(n).map(|s| (Place::Local(n.clone()), s))),
            AE::Index { base, index } if self.through_pointer(base) => {
                if self.struct_type_of(base, true).is_none() {
                    return Ok(None);
                }
                let pv = self.pointer_value(base)?;
                self.pointer_struct(pv, Some(index), e.span).map(Some)
            }
            AE::Index { .. } if let Some(found) = self.local_struct_element(e)? => Ok(Some(found)),
            AE::Index { .. } => self.struct_element(e),
            AE::Unary { op: AU::Deref, operand } if self.through_pointer(operand) => {
                if self.struct_type_of(operand, true).is_none() {
                    return Ok(None);
                }
                let pv = self.pointer_value(operand)?;
                self.pointer_struct(pv, None, e.span).map(Some)
            }
            AE::Member { base, field, arrow } => {
                let Some((place, s)) = self.member_base_place(base, *arrow)? else { return Ok(None) };
                match self.struct_member(&place, s, field, e.span)? {
                    MemberRef::Struct(p, t) => Ok(Some((p, t))),
                    _ => Ok(None),
                }
            }
            AE::Call { callee, args } => match &callee.kind {
                AE::Ident(name) => Ok(self.inline_struct_call(name, args, e.span)?.map(|(local, s)| (Place::Local(local), s))),
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// `ps[i]` (`ps[i][j]`) of a local array of structs: the element, its subscripts put in
    /// locals; `None` when `e` indexes something else.
    fn local_struct_element(&mut self, e: &ast::Expr) -> R<Option<(Place, usize)>> {
        let (cur, index_exprs) = subscripts(e);
        let AE::Ident(name) = &cur.kind else { return Ok(None) };
        let Some(Binding::StructArray(k)) = self.binding(name) else { return Ok(None) };
        let (s, dims) = self.struct_arrays[k].clone();
        if index_exprs.len() != dims.len() {
            return Ok(None);
        }
        let mut indices = Vec::new();
        for ix in index_exprs {
            let value = self.index_expr(ix)?;
            let value = self.cast(value, ScalarType::I64);
            indices.push(self.subscript_local(value, e.span));
        }
        Ok(Some((Place::LocalElement { name: name.clone(), indices }, s)))
    }

    /// A subscript of a local struct array's element, held in a local set before the statement.
    pub(super) fn subscript_local(&mut self, value: Handle<Expr>, span: Span) -> Handle<Local> {
        if let ExprKind::Local(l) = self.body.exprs[value].kind
            && self.body.locals[l].ty == ScalarType::I64
        {
            return l;
        }
        let local = self.new_local("element", ScalarType::I64, LocalKind::Var, span);
        self.pending.push(Stmt::Assign { local, value });
        local
    }

    /// Fresh loads of an element's subscripts.
    fn element_subscripts(&mut self, indices: &[Handle<Local>]) -> Vec<Handle<Expr>> {
        indices.iter().map(|&l| self.add(ExprKind::Local(l), ScalarType::I64, Span::default())).collect()
    }

    /// Declares the local array of structs `name` (struct `s`, dimensions `dims`): a local
    /// array per member, the array's dimensions first. `init` gives its elements' values,
    /// each as a struct local's initializer would (members without one are zero).
    pub(super) fn declare_struct_array_local(&mut self, name: &str, s: usize, dims: &[u32], init: Option<&ast::Initializer>, span: Span, out: &mut Block) -> R<()> {
        self.declare_struct_array_members(name, s, dims, span)?;
        let Some(init) = init else { return Ok(()) };
        let ast::Initializer::List(list) = init else {
            return Err(err(span, format!("the array `{name}` needs a brace initializer"), "write {{ {{...}}, {{...}} }}"));
        };
        if dims.len() != 1 || list.iter().any(|(d, _)| !d.is_empty()) {
            return Err(err(list.span, "only flat initializers of one-dimensional local arrays of structs are supported", "assign the elements in a loop"));
        }
        let zero = self.fresh_struct_name(name);
        self.declare_struct_local(&zero, s, span)?;
        let mut elements = list.iter();
        for k in 0..dims[0] as usize {
            let element = self.fresh_struct_name(name);
            self.declare_struct_local(&element, s, span)?;
            match elements.next() {
                Some((_, item)) => self.init_struct_local(&element, s, &item, span, out)?,
                None => self.zero_struct(&element, s, out),
            }
            let at = self.int_const(k as i64, ScalarType::I64);
            let index = self.subscript_local(at, span);
            let mut pending = std::mem::take(&mut self.pending);
            out.append(&mut pending);
            self.copy_struct(&Place::LocalElement { name: name.to_string(), indices: vec![index] }, &Place::Local(element), s, span, out)?;
        }
        Ok(())
    }

    fn declare_struct_array_members(&mut self, name: &str, s: usize, dims: &[u32], span: Span) -> R<()> {
        let def = &self.sema.structs[s];
        if def.is_union {
            return Err(err(span, format!("the array of unions `{name}` cannot be declared in a kernel"), "declare an array of the member's type"));
        }
        let Some(fields) = def.fields.clone() else {
            return Err(err(span, format!("{} is not defined", self.struct_name(s)), "define the struct before the construct"));
        };
        for (field, fty) in &fields {
            let full = format!("{name}.{field}");
            match fty {
                CType::Scalar(t) => {
                    let l = self.body.locals.append(Local { name: full.clone(), ty: *t, array_dims: Some(dims.to_vec()), kind: LocalKind::Var, span });
                    self.bind(&full, l);
                }
                CType::Array { .. } => {
                    let Some((inner, elem)) = local_array_shape(fty) else {
                        return Err(err(span, format!("the member `{field}` of `{name}` needs constant dimensions and number elements"), "give array members constant sizes"));
                    };
                    let mut all = dims.to_vec();
                    all.extend(inner);
                    let l = self.body.locals.append(Local { name: full.clone(), ty: elem, array_dims: Some(all), kind: LocalKind::Var, span });
                    self.bind(&full, l);
                }
                CType::Struct(t) => self.declare_struct_array_members(&full, *t, dims, span)?,
                _ => {
                    return Err(err(span, format!("the member `{field}` of `{name}` has a type kernels do not support"), "use structs of numbers, arrays of numbers and structs"));
                }
            }
        }
        self.struct_arrays.push((s, dims.to_vec()));
        let k = self.struct_arrays.len() - 1;
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), Binding::StructArray(k));
        }
        Ok(())
    }

    /// Binds the struct local `name` to the members of the struct local `existing` (a struct
    /// parameter of an inlined routine to the copy of its argument).
    pub(super) fn alias_struct_local(&mut self, name: &str, existing: &str, s: usize) {
        let fields = self.sema.structs[s].fields.clone().unwrap_or_default();
        for (field, fty) in &fields {
            let (to, from) = (format!("{name}.{field}"), format!("{existing}.{field}"));
            match (self.binding(&from), fty) {
                (Some(Binding::Struct(t)), _) => self.alias_struct_local(&to, &from, t),
                (Some(binding), _) => {
                    if let Some(scope) = self.scopes.last_mut() {
                        scope.insert(to, binding);
                    }
                }
                (None, _) => {}
            }
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), Binding::Struct(s));
        }
    }

    /// `a[i]`, `mt->parts[i][j]`: an element of a host array of structs.
    fn struct_element(&mut self, e: &ast::Expr) -> R<Option<(Place, usize)>> {
        let (cur, index_exprs) = subscripts(e);
        let root_name = match member_root(cur) {
            Some(r) if !self.is_kernel_name(r) && !self.host_locals.contains_key(r) => r.to_string(),
            _ => return Ok(None),
        };
        let (root, info) = match &cur.kind {
            AE::Ident(n) => match self.host_var(n) {
                Some(v) => (n.clone(), v),
                None => return Ok(None),
            },
            AE::Member { .. } => match self.member_type(cur) {
                Ok(ty) => (self.key(cur.span), VarInfo { ty, is_const: false, restrict: false, storage: sema::Storage::Global, span: cur.span, declared_len: None }),
                Err(_) => return Ok(None),
            },
            _ => return Ok(None),
        };
        let mut ty = &info.ty;
        for _ in &index_exprs {
            ty = match ty {
                CType::Pointer { to, .. } => to,
                CType::Array { elem, .. } => elem,
                _ => return Ok(None),
            };
        }
        let CType::Struct(s) = *ty else { return Ok(None) };
        self.check_default_none(&root_name, cur.span);
        if self.treatments.contains_key(root_name.as_str()) {
            return Err(err(
                cur.span,
                format!("private copies of the array of structs `{root_name}` are not supported"),
                "declare a struct local inside the loop instead",
            ));
        }
        if matches!(cur.kind, AE::Ident(_)) && self.written.contains(root_name.as_str()) {
            return Err(err(
                cur.span,
                format!("the pointer `{root_name}` is assigned inside the construct"),
                "assign pointers on the host, outside the compute construct",
            ));
        }
        let mut indices = Vec::new();
        for ix in index_exprs {
            indices.push(self.index_expr(ix)?);
        }
        let place = ElementPlace { root, root_info: info, element_struct: s, indices, offset: 0, terms: Vec::new() };
        Ok(Some((Place::Element(place), s)))
    }

    /// Member `field` of the struct `s` at `place`.
    fn struct_member(&mut self, place: &Place, s: usize, field: &str, span: Span) -> R<MemberRef> {
        let Some(fty) = self.sema.field(s, field).cloned() else {
            return Err(err(span, format!("no member `{field}` in {}", self.struct_name(s)), "check the member name"));
        };
        let unsupported = |what: &str| {
            err(span, format!("the member `{field}` {what} cannot be used in a kernel"), "use members that are numbers, arrays of numbers or structs")
        };
        match place {
            Place::Local(prefix) => {
                let name = format!("{prefix}.{field}");
                match self.binding(&name) {
                    Some(Binding::Local(l)) if self.body.locals[l].array_dims.is_some() => Ok(MemberRef::Array(ArrayMember::Local(l))),
                    Some(Binding::Local(l)) => Ok(MemberRef::Scalar(Target::Local(l))),
                    Some(Binding::Struct(t)) => Ok(MemberRef::Struct(Place::Local(name), t)),
                    Some(Binding::Complex { .. }) => Err(unsupported("(a complex number)")),
                    Some(Binding::Pointer(_)) => Err(unsupported("(a pointer)")),
                    Some(Binding::StructArray(_)) => Err(unsupported("(an array of structs)")),
                    None => Err(Diagnostic::global_error(format!("internal: the member `{name}` of a struct local is not bound"))),
                }
            }
            Place::Element(at) => {
                if self.sema.structs[s].is_union {
                    // Its members overlap; the views of the array (one per member type) would
                    // too, and the analyses take distinct array params as disjoint.
                    return Err(err(span, format!("the member `{field}` is a member of a union in an array; kernels cannot use it"), "use arrays of structs without unions"));
                }
                let Some(offset) = self.sema.field_offset(s, field) else {
                    self.struct_size(s, span)?;
                    return Err(unsupported("(of a struct whose layout is not known)"));
                };
                let mut at = at.clone();
                at.offset += offset;
                match &fty {
                    CType::Scalar(t) => {
                        let (array, indices) = self.element_view(&at, *t, field, span)?;
                        Ok(MemberRef::Scalar(Target::Element { array, indices, ty: *t }))
                    }
                    CType::Array { .. } => match local_array_shape(&fty) {
                        Some((dims, elem)) => Ok(MemberRef::Array(ArrayMember::Element(at, dims, elem))),
                        None => Err(unsupported("(an array of pointers or structs)")),
                    },
                    CType::Struct(t) => Ok(MemberRef::Struct(Place::Element(at), *t)),
                    CType::Complex(_) => Err(unsupported("(a complex number)")),
                    _ => Err(unsupported("(a pointer in an element of an array of structs)")),
                }
            }
            Place::LocalElement { name, indices } => {
                let full = format!("{name}.{field}");
                match self.binding(&full) {
                    Some(Binding::Local(l)) => {
                        let local = &self.body.locals[l];
                        let ty = local.ty.value_type();
                        if local.array_dims.as_ref().map_or(0, Vec::len) == indices.len() {
                            let at = self.element_subscripts(indices);
                            Ok(MemberRef::Scalar(Target::Element { array: ArrayRef::Local(l), indices: at, ty }))
                        } else {
                            Ok(MemberRef::Array(ArrayMember::LocalRows(l, indices.clone())))
                        }
                    }
                    Some(Binding::StructArray(k)) => Ok(MemberRef::Struct(Place::LocalElement { name: full, indices: indices.clone() }, self.struct_arrays[k].0)),
                    _ => Err(unsupported("(of a local array of structs)")),
                }
            }
            Place::Host(key) => {
                let name = format!("{key}.{field}");
                match &fty {
                    CType::Scalar(t) => Ok(MemberRef::HostScalar(name, t.value_type())),
                    CType::Array { .. } => Ok(MemberRef::Array(ArrayMember::Host(name, fty))),
                    CType::Struct(t) => Ok(MemberRef::Struct(Place::Host(name), *t)),
                    CType::Complex(_) => Err(unsupported("(a complex number)")),
                    _ => Err(unsupported("(a pointer)")),
                }
            }
        }
    }

    /// The array param and subscripts of a scalar of type `t` at `at`: the host array of
    /// structs seen as rows of `t`.
    fn element_view(&mut self, at: &ElementPlace, t: ScalarType, member: &str, span: Span) -> R<(ArrayRef, Vec<Handle<Expr>>)> {
        let size = self.struct_size(at.element_struct, span)?;
        let bytes = t.size_bytes() as u64;
        if !size.is_multiple_of(bytes) || !at.offset.is_multiple_of(bytes) || at.terms.iter().any(|(_, stride)| !stride.is_multiple_of(bytes)) {
            return Err(err(
                span,
                format!("the member `{member}` is not at a multiple of its own size in {}", self.struct_name(at.element_struct)),
                "kernels index arrays of structs whose members are naturally aligned",
            ));
        }
        let info = VarInfo { ty: rows_view(&at.root_info.ty, t, size / bytes), ..at.root_info.clone() };
        let p = self.array_param_as(&at.root, &format!("{} as {}", at.root, t.c_name()), &info, span)?;
        let index_ty = at.terms.iter().fold(ScalarType::I32, |ty, (h, _)| sema::common_type(ty, self.ty(*h)));
        let mut index = self.int_const((at.offset / bytes) as i64, index_ty);
        for &(h, stride) in &at.terms {
            let h = self.cast(h, index_ty);
            let k = self.int_const((stride / bytes) as i64, index_ty);
            let term = self.binary(BinaryOp::Mul, h, k, index_ty, span);
            index = self.binary(BinaryOp::Add, index, term, index_ty, span);
        }
        let mut indices = at.indices.clone();
        indices.push(index);
        Ok((ArrayRef::Param(p), indices))
    }

    /// The value of member `field` of the struct at `place`.
    pub(super) fn member_value(&mut self, place: &Place, s: usize, field: &str, span: Span) -> R<Handle<Expr>> {
        match self.struct_member(place, s, field, span)? {
            MemberRef::Scalar(t) => Ok(self.read_target(&t, span)),
            MemberRef::HostScalar(key, ty) => {
                let p = self.scalar_param(&key, ty);
                Ok(self.add(ExprKind::Param(p), ty, span))
            }
            MemberRef::Array(_) => Err(err(span, format!("the array member `{field}` is used as a value"), "index it")),
            MemberRef::Struct(..) => Err(err(span, format!("the struct member `{field}` is used as a value"), "use its members, or assign it as a whole")),
        }
    }

    /// Member `field` of the struct at `place`, to assign.
    pub(super) fn member_target(&mut self, place: &Place, s: usize, field: &str, span: Span) -> R<Target> {
        match self.struct_member(place, s, field, span)? {
            MemberRef::Scalar(t) => Ok(t),
            MemberRef::HostScalar(..) => Err(err(span, "assigning members of host structs in a kernel is not supported", "assign the member on the host")),
            MemberRef::Array(_) => Err(err(span, format!("cannot assign the whole array member `{field}`"), "assign its elements")),
            MemberRef::Struct(..) => Err(err(span, format!("the struct member `{field}` cannot be assigned here"), "assign structs as statements of their own: `s.m = t;`")),
        }
    }

    /// `p.v[i][j]`, `a[k].v[i]`: an element of an array member.
    pub(super) fn member_element(&mut self, place: &Place, s: usize, field: &str, index_exprs: &[&ast::Expr], span: Span) -> R<(ArrayRef, Vec<Handle<Expr>>, ScalarType)> {
        let mut indices = Vec::new();
        for ix in index_exprs {
            indices.push(self.index_expr(ix)?);
        }
        self.member_element_at(place, s, field, indices, span)
    }

    pub(super) fn member_element_at(&mut self, place: &Place, s: usize, field: &str, indices: Vec<Handle<Expr>>, span: Span) -> R<(ArrayRef, Vec<Handle<Expr>>, ScalarType)> {
        let count_error = |this: &Self, ndims: usize| {
            err(
                span,
                format!("`{}` indexes {} of the member's {ndims} dimensions", this.text(span), indices.len()),
                "index every dimension of the array member",
            )
        };
        match self.struct_member(place, s, field, span)? {
            MemberRef::Array(ArrayMember::Local(l)) => {
                let local = &self.body.locals[l];
                let (ndims, ty) = (local.array_dims.as_ref().map_or(0, Vec::len), local.ty);
                if indices.len() != ndims {
                    return Err(count_error(self, ndims));
                }
                Ok((ArrayRef::Local(l), indices, ty))
            }
            MemberRef::Array(ArrayMember::LocalRows(l, prefix)) => {
                let local = &self.body.locals[l];
                let (ndims, ty) = (local.array_dims.as_ref().map_or(0, Vec::len) - prefix.len(), local.ty);
                if indices.len() != ndims {
                    return Err(count_error(self, ndims));
                }
                let mut all = self.element_subscripts(&prefix);
                all.extend(indices);
                Ok((ArrayRef::Local(l), all, ty))
            }
            MemberRef::Array(ArrayMember::Element(mut at, dims, elem)) => {
                if indices.len() != dims.len() {
                    return Err(count_error(self, dims.len()));
                }
                for (k, h) in indices.into_iter().enumerate() {
                    let stride = dims[k + 1..].iter().map(|&d| d as u64).product::<u64>() * elem.size_bytes() as u64;
                    at.terms.push((h, stride));
                }
                let (array, indices) = self.element_view(&at, elem, field, span)?;
                Ok((array, indices, elem))
            }
            MemberRef::Array(ArrayMember::Host(key, ty)) => {
                let info = VarInfo { ty, is_const: false, restrict: false, storage: sema::Storage::Global, span, declared_len: None };
                let p = self.array_param(&key, &info, span)?;
                let (array, ndims, elem) = self.param_shape(p)?;
                if indices.len() != ndims {
                    return Err(count_error(self, ndims));
                }
                Ok((array, indices, elem.value_type()))
            }
            _ => Err(err(span, format!("the member `{field}` is not an array"), "index array members only")),
        }
    }

    /// A struct value a struct can be assigned from: a place of the kernel, or a host struct
    /// (a variable or a member of one).
    pub(super) fn struct_source(&mut self, e: &ast::Expr) -> R<(Place, usize)> {
        if let Some(found) = self.kernel_struct_place(e)? {
            return Ok(found);
        }
        let host = match &e.kind {
            AE::Ident(n) if !self.is_kernel_name(n) => self.host_var(n).map(|v| v.ty),
            AE::Member { .. } if member_root(e).is_some_and(|r| !self.is_kernel_name(r)) => self.member_type(e).ok(),
            _ => None,
        };
        match host {
            Some(CType::Struct(s)) => {
                if let Some(r) = member_root(e) {
                    self.check_default_none(r, e.span);
                }
                Ok((Place::Host(self.key(e.span)), s))
            }
            _ => Err(err(e.span, "this is not a struct value a kernel can copy", "assign from a struct variable, a struct member or an element of an array of structs")),
        }
    }

    /// `lhs = rhs` where `lhs` is a struct the kernel holds or indexes; `false` when it is not
    /// (an ordinary assignment).
    pub(super) fn struct_assignment(&mut self, lhs: &ast::Expr, rhs: &ast::Expr, span: Span, out: &mut Block) -> R<bool> {
        let Some((dst, s)) = self.kernel_struct_place(lhs)? else { return Ok(false) };
        let (src, t) = self.struct_source(rhs)?;
        if s != t {
            return Err(err(span, "the two sides of this assignment are different structs", "assign structs of the same type"));
        }
        self.copy_struct(&dst, &src, s, span, out)?;
        Ok(true)
    }

    /// `dst = src`, member by member.
    pub(super) fn copy_struct(&mut self, dst: &Place, src: &Place, s: usize, span: Span, out: &mut Block) -> R<()> {
        let def = &self.sema.structs[s];
        if def.is_union {
            return Err(err(span, "unions cannot be copied in a kernel", "copy the member you need"));
        }
        let Some(fields) = def.fields.clone() else {
            return Err(err(span, format!("{} is not defined", self.struct_name(s)), "define the struct before the construct"));
        };
        for (name, fty) in &fields {
            match fty {
                CType::Scalar(_) => {
                    let v = self.member_value(src, s, name, span)?;
                    let t = self.member_target(dst, s, name, span)?;
                    self.store(t, v, span, out);
                }
                CType::Array { .. } => {
                    let Some((dims, _)) = local_array_shape(fty) else {
                        return Err(err(span, format!("the member `{name}` is an array kernels cannot copy"), "copy arrays of numbers"));
                    };
                    let count: u64 = dims.iter().map(|&d| d as u64).product();
                    if count > MAX_COPIED_ELEMENTS {
                        return Err(err(span, format!("the array member `{name}` is too large to copy in a kernel ({count} elements)"), "copy the elements you need in a loop"));
                    }
                    for flat in 0..count {
                        let mut rest = flat;
                        let mut at = vec![0i64; dims.len()];
                        for k in (0..dims.len()).rev() {
                            at[k] = (rest % dims[k] as u64) as i64;
                            rest /= dims[k] as u64;
                        }
                        let from_idx: Vec<Handle<Expr>> = at.iter().map(|&v| self.int_const(v, ScalarType::I32)).collect();
                        let to_idx: Vec<Handle<Expr>> = at.iter().map(|&v| self.int_const(v, ScalarType::I32)).collect();
                        let (array, indices, ty) = self.member_element_at(src, s, name, from_idx, span)?;
                        let v = self.add(ExprKind::Load { array, indices }, ty, span);
                        let (array, indices, ty) = self.member_element_at(dst, s, name, to_idx, span)?;
                        self.store(Target::Element { array, indices, ty }, v, span, out);
                    }
                }
                CType::Struct(_) => {
                    let (MemberRef::Struct(from, t), MemberRef::Struct(to, _)) =
                        (self.struct_member(src, s, name, span)?, self.struct_member(dst, s, name, span)?)
                    else {
                        return Err(Diagnostic::global_error("internal: a struct member is no struct"));
                    };
                    self.copy_struct(&to, &from, t, span, out)?;
                }
                _ => return Err(err(span, format!("the member `{name}` is a pointer; kernels cannot copy it"), "copy structs of numbers")),
            }
        }
        Ok(())
    }

    /// Declares the struct local `name` of struct `s`: a local per member.
    pub(super) fn declare_struct_local(&mut self, name: &str, s: usize, span: Span) -> R<()> {
        let def = &self.sema.structs[s];
        if def.is_union {
            return Err(err(span, format!("the union `{name}` cannot be declared in a kernel"), "declare a local of the member's type"));
        }
        let Some(fields) = def.fields.clone() else {
            return Err(err(span, format!("{} is not defined", self.struct_name(s)), "define the struct before the construct"));
        };
        for (field, fty) in &fields {
            let full = format!("{name}.{field}");
            match fty {
                CType::Scalar(t) => {
                    let l = self.new_local(&full, t.value_type(), LocalKind::Var, span);
                    self.bind(&full, l);
                }
                CType::Array { .. } => {
                    let Some((dims, elem)) = local_array_shape(fty) else {
                        return Err(err(span, format!("the member `{field}` of `{name}` needs constant dimensions and number elements"), "give array members constant sizes"));
                    };
                    let l = self.body.locals.append(Local { name: full.clone(), ty: elem, array_dims: Some(dims), kind: LocalKind::Var, span });
                    self.bind(&full, l);
                }
                CType::Struct(t) => self.declare_struct_local(&full, *t, span)?,
                _ => {
                    return Err(err(span, format!("the member `{field}` of `{name}` has a type kernels do not support"), "use structs of numbers, arrays of numbers and structs"));
                }
            }
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), Binding::Struct(s));
        }
        Ok(())
    }

    /// The initializer of the struct local `name`.
    pub(super) fn init_struct_local(&mut self, name: &str, s: usize, init: &ast::Initializer, span: Span, out: &mut Block) -> R<()> {
        let place = Place::Local(name.to_string());
        match init {
            ast::Initializer::Expr(e) => {
                let (src, t) = self.struct_source(e)?;
                if s != t {
                    return Err(err(e.span, "the initializer is a different struct", "initialise with a struct of the same type"));
                }
                self.copy_struct(&place, &src, s, span, out)
            }
            ast::Initializer::List(list) => {
                // Members without an initializer are zero, as in C.
                self.zero_struct(name, s, out);
                self.init_members(name, s, list, out)
            }
        }
    }

    pub(super) fn zero_struct(&mut self, name: &str, s: usize, out: &mut Block) {
        let fields = self.sema.structs[s].fields.clone().unwrap_or_default();
        for (field, fty) in &fields {
            let full = format!("{name}.{field}");
            match (self.binding(&full), fty) {
                (Some(Binding::Local(l)), _) => {
                    let local = &self.body.locals[l];
                    let (ty, dims) = (local.ty, local.array_dims.clone());
                    match dims {
                        None => {
                            let zero = self.zero_of(ty);
                            out.push(Stmt::Assign { local: l, value: zero });
                        }
                        Some(dims) => {
                            let count: u64 = dims.iter().map(|&d| d as u64).product();
                            for flat in 0..count {
                                let mut rest = flat;
                                let mut indices = vec![Handle::new(0); dims.len()];
                                for k in (0..dims.len()).rev() {
                                    indices[k] = self.int_const((rest % dims[k] as u64) as i64, ScalarType::I32);
                                    rest /= dims[k] as u64;
                                }
                                let zero = self.zero_of(ty);
                                out.push(Stmt::Store { array: ArrayRef::Local(l), indices, value: zero, span: Span::default() });
                            }
                        }
                    }
                }
                (Some(Binding::Struct(t)), _) => self.zero_struct(&full, t, out),
                // Struct locals have no complex members (refused when declared).
                (Some(Binding::Complex { .. } | Binding::Pointer(_) | Binding::StructArray(_)) | None, _) => {}
            }
        }
    }

    /// `{ 1, .y = 2, .inner = { 3 }, .v = { 4, 5 } }` for the struct local `name`.
    fn init_members(&mut self, name: &str, s: usize, list: &ast::InitList, out: &mut Block) -> R<()> {
        let span = list.span;
        let fields = self.sema.structs[s].fields.clone().unwrap_or_default();
        let mut next = 0usize;
        for (designators, init) in list.iter() {
            let init = &*init;
            let k = match designators {
                [] => next,
                [ast::Designator::Field(f)] => match fields.iter().position(|(n, _)| n == f) {
                    Some(k) => k,
                    None => return Err(err(span, format!("no member `{f}` in {}", self.struct_name(s)), "check the member name")),
                },
                _ => return Err(err(span, "this designator is not supported in a kernel's struct initializer", "designate members with `.member = value`")),
            };
            let Some((field, fty)) = fields.get(k) else {
                return Err(err(span, format!("too many initializers for {}", self.struct_name(s)), "give one value per member"));
            };
            let full = format!("{name}.{field}");
            match (fty, init, self.binding(&full)) {
                (CType::Scalar(t), ast::Initializer::Expr(e), Some(Binding::Local(l))) => {
                    let v = self.value_as(e, t.value_type())?;
                    out.push(Stmt::Assign { local: l, value: v });
                }
                (CType::Array { .. }, ast::Initializer::List(..), Some(Binding::Local(l))) => {
                    let local = &self.body.locals[l];
                    let (dims, elem) = (local.array_dims.clone().unwrap_or_default(), local.ty);
                    self.local_array_init(l, &dims, elem, init, out)?;
                }
                (CType::Struct(t), ast::Initializer::List(inner), _) => self.init_members(&full, *t, inner, out)?,
                (CType::Struct(t), ast::Initializer::Expr(_), _) => self.init_struct_local(&full, *t, init, span, out)?,
                _ => {
                    return Err(err(
                        span,
                        format!("the initializer of member `{field}` does not match its type"),
                        "give a value for a number and braces for an array or a struct member",
                    ));
                }
            }
            next = k + 1;
        }
        Ok(())
    }
}
