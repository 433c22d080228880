//! Expressions of a kernel body: names (kernel locals, host scalars as params, arrays as array
//! params), C's conversions and operators, subscripts and dereferences, struct members, calls of
//! math functions and device functions (inlined when they take arrays).

use super::*;

impl<'a> KernelBuilder<'a> {
    pub fn expr(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        let span = e.span;
        if self.is_complex(e) {
            // C converts a complex value to a real type by dropping its imaginary part.
            return Ok(self.complex_value(e)?.re);
        }
        match &e.kind {
            AE::Ident(name) => {
                if self.pointer_local(name).is_some() {
                    return Err(err(
                        span,
                        format!("the pointer `{name}` is used as a number"),
                        "dereference it (`*p`, `p[i]`, `p->m`), compare it, or subtract two pointers; kernels cannot turn pointers into numbers",
                    ));
                }
                if let Some(l) = self.kernel_local(name) {
                    let local = &self.body.locals[l];
                    if local.array_dims.is_some() {
                        return Err(err(span, format!("the array `{name}` is used as a value"), "index the array"));
                    }
                    return Ok(self.add(ExprKind::Local(l), local.ty, span));
                }
                if self.kernel_struct(name).is_some() {
                    return Err(err(
                        span,
                        format!("the struct `{name}` is used as a value"),
                        format!("use its members (`{name}.member`), or assign it to a struct as a whole"),
                    ));
                }
                match self.sema.lookup(name).cloned() {
                    Some(Symbol::EnumConst(v)) => Ok(self.add(ExprKind::ConstInt(v), ScalarType::I32, span)),
                    Some(Symbol::Var(info)) => {
                        if info.ty.scalar().is_some() {
                            self.check_default_none_read(name, span);
                        } else {
                            self.check_default_none(name, span);
                        }
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
            // Always complex (handled above); as a real value, its real part is zero.
            AE::ImagLit { single, .. } => Ok(self.zero_of(if *single { ScalarType::F32 } else { ScalarType::F64 })),
            AE::CharLit(c) => Ok(self.add(ExprKind::ConstInt(*c), ScalarType::I32, span)),
            AE::StringLit(_) => Err(err(span, "string literals cannot be used in kernels", "compute with numbers in kernels; print on the host")),
            AE::Unary { op, operand } => self.unary(*op, operand, span),
            AE::Binary { op, lhs, rhs } => self.binary_expr(*op, lhs, rhs, span),
            AE::Assign { op, lhs, rhs } => self.assignment_value(*op, lhs, rhs, span),
            AE::Conditional { cond, then, otherwise } => self.conditional(cond, then, otherwise, span),
            AE::Cast { ty, expr } => {
                let target = self.sema.declared_type(&ty.specs, &ty.declarator)?;
                match target {
                    // `(double) 1.79e+308L`, as <float.h>'s DBL_MAX expands: a `long double`
                    // constant converted at once loses nothing computed in `double`.
                    CType::Scalar(t) if t != ScalarType::F80 && let AE::FloatLit { value, long_double: true, .. } = &expr.kind => {
                        let c = self.add(ExprKind::ConstFloat(*value), ScalarType::F64, expr.span);
                        Ok(self.cast(c, t.value_type()))
                    }
                    CType::Scalar(t) => self.value_as(expr, t.value_type()),
                    CType::Void => self.expr(expr),
                    CType::Pointer { .. } => Err(err(
                        span,
                        format!("`{}` is a pointer used as a number", self.text(span)),
                        "use the pointer where a pointer is expected: dereference it, pass it, or compare it",
                    )),
                    _ => Err(err(span, "casts to struct types are not supported in kernels", "cast only between number types in kernels")),
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
                    _ if self.is_complex(inner) => Some(self.complex_size(inner)?),
                    AE::Ident(n) => match self.kernel_struct(n) {
                        Some(i) => Some(self.struct_size(i, inner.span)?),
                        None if !self.is_kernel_name(n) => self.host_var(n).and_then(|v| self.sema.size_align(&v.ty)).map(|(s, _)| s),
                        None => None,
                    },
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
            AE::Index { .. } if let Some(t) = self.pointer_access(e, false)? => Ok(self.read_target(&t, span)),
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
            AE::Member { .. } if let Some(kind) = self.grid_builtin(e) => {
                // As CUDA types them: `unsigned int`.
                let index = self.add(kind, ScalarType::I32, span);
                Ok(self.cast(index, ScalarType::U32))
            }
            AE::Member { base, field, arrow } => {
                if let Some((place, s)) = self.member_base_place(base, *arrow)? {
                    return self.member_value(&place, s, field, span);
                }
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
        names.iter().all(|n| !self.is_kernel_name(n) && !self.host_locals.contains_key(n.as_str()))
    }

    pub(super) fn warn_once(&mut self, span: Span, msg: &str) {
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
                let a = self.condition(operand)?;
                Ok(self.add(ExprKind::Unary { op: UnaryOp::Not, arg: a }, ScalarType::Bool, span))
            }
            AU::Real => self.part_value(crate::ir::ComplexPart::Real, operand),
            AU::Imag => self.part_value(crate::ir::ComplexPart::Imag, operand),
            AU::Deref => {
                let pv = self.pointer_value(operand)?;
                let t = self.pointer_element(pv, &[], false, span)?;
                Ok(self.read_target(&t, span))
            }
            AU::AddrOf => Err(err(
                span,
                format!("the address `{}` is used as a number", self.text(span)),
                "pass addresses to routines, assign them to pointers, or compare them; kernels cannot turn them into numbers",
            )),
            AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec => {
                self.no_complex_increment(operand, span)?;
                self.increment_value(op, operand, span)
            }
        }
    }

    /// `(T *) e` with `T` a number type: the element type and `e`.
    fn pointer_cast<'e>(&mut self, e: &'e ast::Expr) -> Option<(ScalarType, &'e ast::Expr)> {
        let AE::Cast { ty, expr } = &e.kind else { return None };
        match self.sema.declared_type(&ty.specs, &ty.declarator).ok()? {
            CType::Pointer { to, .. } => Some((to.element_scalar()?, expr)),
            _ => None,
        }
    }

    /// Element `index` (or 0) of `(T *) e`, an integer the program turned into a pointer: the
    /// memory at byte address `e + index * sizeof(T)`, which must be device memory.
    fn address_element(&mut self, cast: &ast::Expr, index: Option<Handle<Expr>>, span: Span) -> R<(ArrayRef, Vec<Handle<Expr>>, ScalarType)> {
        let (elem, inner) = self.pointer_cast(cast).expect("a cast to a pointer to numbers");
        let base = self.expr(inner)?;
        if self.ty(base).is_float() || self.ty(base) == ScalarType::Bool {
            return Err(err(inner.span, "only integers can be turned into pointers in kernels", "cast an address held in an integer, such as a size_t"));
        }
        let mut address = self.cast(base, ScalarType::U64);
        if let Some(index) = index {
            let index = self.cast(index, ScalarType::U64);
            let size = self.int_const(elem.size_bytes() as i64, ScalarType::U64);
            let offset = self.binary(BinaryOp::Mul, index, size, ScalarType::U64, span);
            address = self.binary(BinaryOp::Add, address, offset, ScalarType::U64, span);
        }
        Ok((ArrayRef::Address(elem), vec![address], elem.value_type()))
    }

    pub(super) fn is_host_pointer(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            AE::Ident(n) => {
                !self.is_kernel_name(n) && self.host_var(n).is_some_and(|v| v.ty.is_pointer_like())
            }
            AE::Member { .. } => self.member_type(e).is_ok_and(|t| t.is_pointer_like()),
            _ => false,
        }
    }

    pub(super) fn index_expr(&mut self, e: &ast::Expr) -> R<Handle<Expr>> {
        let h = self.expr(e)?;
        if self.ty(h).is_float() {
            return Err(err(e.span, "array index is not an integer", "cast the index to an integer type"));
        }
        let ty = sema::promote(self.ty(h));
        Ok(self.cast(h, ty))
    }

    /// The array a subscript chain starts from.
    pub(super) fn array_base(&mut self, base: &ast::Expr) -> R<ArrayView> {
        let (array, ndims, elem) = self.array_base_plain(base)?;
        Ok(ArrayView { array, ndims, elem })
    }

    /// [`KernelBuilder::array_base`]: (array, its number of dimensions, element type).
    fn array_base_plain(&mut self, base: &ast::Expr) -> R<(ArrayRef, usize, ScalarType)> {
        match &base.kind {
            AE::Ident(name) => {
                if self.is_kernel_name(name) {
                    let local = self.kernel_local(name).map(|l| (l, &self.body.locals[l]));
                    return match local {
                        Some((l, Local { array_dims: Some(d), ty, .. })) => Ok((ArrayRef::Local(l), d.len(), *ty)),
                        _ => Err(err(base.span, format!("`{name}` is not an array"), "index arrays and pointers only")),
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
                let info = VarInfo { ty, is_const: false, restrict: false, storage: sema::Storage::Global, span: base.span, declared_len: None };
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

    pub(super) fn param_shape(&self, p: u32) -> R<(ArrayRef, usize, ScalarType)> {
        match &self.params[p as usize].kind {
            ParamKind::Array { elem, dims, .. } => Ok((ArrayRef::Param(p), dims.len(), *elem)),
            ParamKind::RowTable { elem, .. } => Ok((ArrayRef::Param(p), 2, *elem)),
            ParamKind::Scalar(_) => Err(Diagnostic::global_error("internal: scalar param used as an array")),
        }
    }

    /// `a[i][j]`: the array and one index per dimension.
    pub(super) fn element(&mut self, e: &ast::Expr) -> R<(ArrayRef, Vec<Handle<Expr>>, ScalarType)> {
        let (cur, index_exprs) = subscripts(e);
        // The update's own element only: its subscripts may not read the array.
        if !std::mem::take(&mut self.reduction_update_target) {
            self.check_array_reduction_use(cur, e.span)?;
        }
        if let AE::Ident(name) = &cur.kind
            && let Some((index, elem, ndims)) = self.block_shared_array(name)
        {
            if index_exprs.len() != ndims {
                return Err(err(e.span, format!("`{name}` has {ndims} dimensions"), format!("index every dimension of `{name}`")));
            }
            let mut indices = Vec::new();
            for ix in index_exprs {
                indices.push(self.index_expr(ix)?);
            }
            return Ok((ArrayRef::Shared(index), indices, elem));
        }
        if let AE::Ident(name) = &cur.kind
            && let Some(&copies) = self.private_arrays.get(name.as_str())
            && !self.is_kernel_name(name)
        {
            let [ix] = index_exprs.as_slice() else {
                return Err(err(e.span, format!("the private array `{name}` has one dimension"), format!("index `{name}` with one subscript")));
            };
            let ix = self.index_expr(ix)?;
            let ix = self.cast(ix, ScalarType::I64);
            let base = self.add(ExprKind::Local(copies.base), ScalarType::I64, e.span);
            let at = self.binary(BinaryOp::Add, base, ix, ScalarType::I64, e.span);
            let (_, _, elem) = self.param_shape(copies.buffer)?;
            return Ok((ArrayRef::Param(copies.buffer), vec![at], elem.value_type()));
        }
        if let AE::Member { base, field, arrow } = &cur.kind
            && let Some((place, s)) = self.member_base_place(base, *arrow)?
        {
            // An array member of a struct local or of an element of an array of structs.
            return self.member_element(&place, s, field, &index_exprs, e.span);
        }
        if self.pointer_cast(cur).is_some() {
            let [ix] = index_exprs.as_slice() else {
                return Err(err(e.span, "a pointer made from an integer has one dimension", "index it with one subscript"));
            };
            let index = self.index_expr(ix)?;
            return self.address_element(cur, Some(index), e.span);
        }
        let view = self.array_base(cur)?;
        let (array, ndims, elem) = (view.array, view.ndims, view.elem);
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
        // A `long double` element is read and written as a `double` value.
        Ok((array, indices, elem.value_type()))
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

    pub(super) fn member_type(&mut self, e: &ast::Expr) -> R<CType> {
        match &e.kind {
            AE::Ident(name) => {
                if self.is_kernel_name(name) {
                    return Err(err(e.span, format!("`{}` is not a member of a struct the kernel can use", self.text(e.span)), "use the members of struct locals with `.`"));
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
            return self.comma(lhs, rhs);
        }
        if matches!(op, AB::LogAnd | AB::LogOr) {
            return self.logical(op == AB::LogAnd, lhs, rhs, span);
        }
        if self.is_pointer(lhs) || self.is_pointer(rhs) {
            return self.pointer_binary(op, lhs, rhs, span);
        }
        if let Some(c) = self.complex_compare(op, lhs, rhs, span)? {
            return Ok(c);
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        self.arith(op, a, b, span)
    }

    /// A C binary operator on lowered operands, with the usual arithmetic conversions.
    pub(super) fn arith(&mut self, op: AB, a: Handle<Expr>, b: Handle<Expr>, span: Span) -> R<Handle<Expr>> {
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
        if let Some(v) = self.real_complex_call(name, args, span)? {
            return Ok(v);
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
        // The function C's linkage names from the file the call is written in (an inlined
        // routine's body keeps its own file's spans).
        let key = self.cx.definitions.resolve(name, span.tu);
        if let Some(def) = key.as_ref().and_then(|k| self.cx.inline_routines.get(k)).copied() {
            return self.inline_call(name, def, args, span);
        }
        if let Some(info) = key.as_ref().and_then(|k| self.cx.routines.get(k)).cloned() {
            // The kernel's scope knows the function when the call is in its file and the
            // function is declared before the construct; else (a call in an inlined routine's
            // body, which sees what its own file declared before it) its own file's type.
            // Declared without parameter types (`double f();`, an old-style definition): the
            // arguments, promoted as C promotes them for such a call, reach the definition's
            // parameters, which convert them to their own types; converting each argument to
            // its parameter's type gives the same value.
            let in_scope = match self.sema.lookup(name) {
                Some(Symbol::Function(ty)) if span.tu == self.cx.unit => Some(ty.clone()),
                _ => None,
            };
            let declared = match in_scope {
                Some(CType::Function { prototyped: false, .. }) | None => info.signature.or(in_scope),
                d => d,
            };
            let Some(CType::Function { params, ret, .. }) = declared else {
                return Err(err(span, format!("`{name}` is not declared before this call"), "declare the function before the construct"));
            };
            let result = *ret;
            if params.len() != args.len() {
                return Err(err(span, format!("`{name}` takes {} argument(s)", params.len()), "check the call"));
            }
            let mut lowered = Vec::new();
            for (a, p) in args.iter().zip(&params) {
                let Some(pt) = p.scalar() else {
                    return Err(err(a.span, "only numbers can be passed to device functions", "pass scalar values"));
                };
                let h = self.value_as(a, pt)?;
                lowered.push(self.cast(h, pt));
            }
            // A void call is typed I32 here; `Stmt::Eval` discards the value.
            let ty = result.scalar().unwrap_or(ScalarType::I32);
            return Ok(self.add(ExprKind::Call { func: Handle::new(info.index), args: lowered }, ty, span));
        }
        if key.is_some() {
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


    /// An inlined body's names are looked up in the kernel's scope. For a routine of another
    /// file, a name `static` at file scope in either file may mean another variable there than
    /// in the routine's own file: refused rather than read from the wrong one. (The routine's
    /// own parameters and locals shadow such names and are fine.)
    fn check_inlined_file_scope_names(&self, name: &str, def: &ast::FunctionDef, span: Span) -> R<()> {
        let (own, here) = (def.span.tu, self.cx.unit);
        if own == here {
            return Ok(());
        }
        let (mut local, named) = crate::front::lower::walk::declared_and_named(&def.body.stmts);
        if let Some(ast::DerivedType::Function { params, .. }) = def.declarator.derived.first() {
            local.extend(params.iter().filter_map(|p| p.declarator.name.clone()));
        }
        let mut clashing: Vec<&String> =
            named.iter().filter(|n| !local.contains(*n) && (self.cx.definitions.static_object(own, n) || self.cx.definitions.static_object(here, n))).collect();
        clashing.sort();
        match clashing.first() {
            None => Ok(()),
            Some(v) => {
                let (routine_file, kernel_file) = (self.cx.sources.file_name(own), self.cx.sources.file_name(here));
                Err(err(
                    span,
                    format!(
                        "`{name}` (defined in {routine_file}) reads the file-scope variable `{v}`, which is `static` in {}; inlined into this kernel of {kernel_file}, it would read {kernel_file}'s `{v}`",
                        if self.cx.definitions.static_object(own, v) { &routine_file } else { &kernel_file }
                    ),
                    format!("pass `{v}` to `{name}` as an argument, or define `{name}` in {kernel_file}"),
                ))
            }
        }
    }

    fn inline_call(&mut self, name: &str, def: &ast::FunctionDef, args: &[ast::Expr], span: Span) -> R<Handle<Expr>> {
        match self.inline_body(name, def, args, span)? {
            Some(InlineResult::Number(l, t)) => Ok(self.add(ExprKind::Local(l), t, span)),
            None => Ok(self.int_const(0, ScalarType::I32)),
            Some(InlineResult::Pointer(_)) => Err(err(
                span,
                format!("`{name}` returns a pointer, used here as a number"),
                "assign the pointer it returns to a pointer variable, or dereference it",
            )),
            Some(InlineResult::Struct(..)) => Err(err(
                span,
                format!("`{name}` returns a struct, used here as a number"),
                "assign the struct it returns to a struct variable, or use one of its members",
            )),
        }
    }

    /// The routine a call names, when it is inlined (it takes or returns pointers or structs).
    pub(super) fn inline_routine(&self, name: &str, span: Span) -> Option<&'a ast::FunctionDef> {
        let key = self.cx.definitions.resolve(name, span.tu)?;
        self.cx.inline_routines.get(&key).copied()
    }

    /// The type an inlined routine returns (for the pointer analysis of a call).
    pub(super) fn inline_result_type(&mut self, name: &str, span: Span) -> Option<CType> {
        let def = self.inline_routine(name, span)?;
        let ret = self.sema.resolve_specs(&def.specs).ok()?;
        self.sema.apply_declarator(ret, &ast::Declarator { name: None, name_span: span, derived: def.declarator.derived[1..].to_vec(), span }).ok()
    }

    /// A call of an inlined routine that returns a pointer: the pointer.
    pub(super) fn inline_pointer_call(&mut self, name: &str, args: &[ast::Expr], span: Span) -> R<pointers::PointerValue> {
        let Some(def) = self.inline_routine(name, span) else {
            return Err(err(span, format!("`{name}` does not return a pointer a kernel can follow"), "call routines that return pointers into the kernel's arrays"));
        };
        match self.inline_body(name, def, args, span)? {
            Some(InlineResult::Pointer(k)) => Ok(self.read_pointer(k, span)),
            _ => Err(err(span, format!("`{name}` does not return a pointer"), "use its value as a number")),
        }
    }

    /// A call of an inlined routine that returns a struct: the struct local holding it.
    pub(super) fn inline_struct_call(&mut self, name: &str, args: &[ast::Expr], span: Span) -> R<Option<(String, usize)>> {
        let Some(def) = self.inline_routine(name, span) else { return Ok(None) };
        match self.inline_result_type(name, span) {
            Some(CType::Struct(_)) => {}
            _ => return Ok(None),
        }
        match self.inline_body(name, def, args, span)? {
            Some(InlineResult::Struct(local, s)) => Ok(Some((local, s))),
            _ => Ok(None),
        }
    }

    /// Inlines a call: the statements of the body go to `pending` (in a one-trip loop that
    /// `return` leaves), and the result is where they leave what the call returns. Scalar
    /// parameters are locals, pointer parameters pointer locals, struct parameters struct
    /// locals, each assigned the argument (evaluated in the caller's scope) first.
    fn inline_body(&mut self, name: &str, def: &ast::FunctionDef, args: &[ast::Expr], span: Span) -> R<Option<InlineResult>> {
        if self.inline_frames.iter().any(|f| std::ptr::eq(f.routine, def)) {
            return Err(err(span, format!("`{name}` calls itself here (directly or through the routines it calls)"), "device functions cannot be recursive"));
        }
        if self.inline_frames.len() >= MAX_INLINE_DEPTH {
            return Err(err(span, format!("calls of `{name}` nest too deeply (recursion?)"), "device functions cannot be recursive"));
        }
        if self.inlined_calls >= MAX_INLINED_CALLS {
            return Err(err(
                span,
                format!("this call of `{name}` would inline more than {MAX_INLINED_CALLS} routine calls into one kernel"),
                "routines that kernels call are inlined at each call: call fewer of them, or from fewer places",
            ));
        }
        self.inlined_calls += 1;
        let Some(ast::DerivedType::Function { params, .. }) = def.declarator.derived.first() else {
            return Err(err(span, format!("`{name}` is not a function"), "call a function"));
        };
        self.check_inlined_file_scope_names(name, def, span)?;
        let params: Vec<&ast::ParamDecl> = params.iter().filter(|p| p.declarator.name.is_some() || !p.declarator.derived.is_empty() || !matches!(p.specs.ty, ast::TypeSpec::Base(ast::BaseType::Void))).collect();
        if params.len() != args.len() {
            return Err(err(span, format!("`{name}` takes {} argument(s)", params.len()), "check the call"));
        }
        let ret = self.sema.resolve_specs(&def.specs)?;
        let ret = self.sema.apply_declarator(ret, &ast::Declarator { name: None, name_span: span, derived: def.declarator.derived[1..].to_vec(), span })?;
        // Arguments are evaluated in the caller's scope.
        enum Argument {
            Number(ScalarType, Handle<Expr>),
            Pointer(CType, pointers::PointerValue),
            /// A copy, in a struct local of the caller's scope.
            Struct(String, usize),
        }
        let mut bound = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let pname = p.declarator.name.clone().unwrap_or_default();
            let pty = sema::adjust_param(self.sema.declared_type(&p.specs, &p.declarator)?);
            let argument = match pty {
                CType::Scalar(t) => {
                    let t = t.value_type();
                    Argument::Number(t, self.value_as(a, t)?)
                }
                CType::Pointer { to, .. } => {
                    if !self.is_pointer(a) && !pointers::is_null_literal(a) {
                        return Err(err(a.span, format!("`{pname}` of `{name}` is a pointer, but `{}` is not one", self.text(a.span)), "pass an array, a pointer or an address (`&x`)"));
                    }
                    Argument::Pointer(*to, self.pointer_value(a)?)
                }
                CType::Struct(s) => {
                    let copy = self.fresh_struct_name(&pname);
                    self.declare_struct_local(&copy, s, a.span)?;
                    let (src, t) = self.struct_source(a)?;
                    if s != t {
                        return Err(err(a.span, format!("the struct passed as `{pname}` is not the struct `{name}` takes"), "pass a struct of the parameter's type"));
                    }
                    let mut copying = Vec::new();
                    self.copy_struct(&structs::Place::Local(copy.clone()), &src, s, a.span, &mut copying)?;
                    self.pending.append(&mut copying);
                    Argument::Struct(copy, s)
                }
                _ => return Err(err(a.span, format!("parameter `{pname}` of `{name}` has a type kernels do not support"), "pass numbers, pointers and structs")),
            };
            bound.push((pname, argument));
        }
        let mut block = Vec::new();
        let result = match &ret {
            CType::Void => None,
            CType::Scalar(t) => Some(InlineResult::Number(self.new_local(&format!("{name}_result"), t.value_type(), LocalKind::Var, span), t.value_type())),
            CType::Pointer { to, .. } => {
                // Declared in the caller's scope (under a name no C name has), read after the body.
                let mut init = Vec::new();
                let k = self.declare_pointer(&format!("{name}#result{}", self.pointers.len()), to, false, span, &mut init)?;
                self.pending.append(&mut init);
                Some(InlineResult::Pointer(k))
            }
            CType::Struct(s) => {
                let local = self.fresh_struct_name(&format!("{name}_result"));
                self.declare_struct_local(&local, *s, span)?;
                Some(InlineResult::Struct(local, *s))
            }
            _ => return Err(err(span, format!("`{name}` must return a number, a pointer, a struct or nothing"), "return a scalar value")),
        };
        let done = self.new_local(&format!("{name}_done"), ScalarType::Bool, LocalKind::Var, span);
        let saved_breaks = std::mem::take(&mut self.breaks);
        let saved_pending = std::mem::take(&mut self.pending);
        self.inline_frames.push(InlineFrame { result: result.clone(), done, routine: def });
        self.push_scope();
        let body_writes: std::collections::HashSet<String> = def.body.stmts.iter().flat_map(super::super::walk::written_names).collect();
        let bound_ok = (|| -> R<()> {
            for (pname, argument) in bound {
                match argument {
                    Argument::Number(t, v) => {
                        let l = self.new_local(&pname, t, LocalKind::Var, span);
                        block.push(Stmt::Assign { local: l, value: v });
                        self.bind(&pname, l);
                    }
                    Argument::Pointer(to, value) => {
                        let k = self.declare_pointer(&pname, &to, !body_writes.contains(&pname), span, &mut block)?;
                        self.assign_pointer(k, value, span, &mut block).map_err(|d| {
                            let message = format!("the argument passed as `{pname}` does not have the parameter's type: {}", d.message);
                            Diagnostic { message, ..d }
                        })?;
                    }
                    Argument::Struct(copy, s) => self.alias_struct_local(&pname, &copy, s),
                }
            }
            Ok(())
        })();
        if bound_ok.is_ok() {
            for st in &def.body.stmts {
                super::super::walk::assigned_values(st, &mut self.assigned_values);
            }
            self.breaks.push(BreakTarget::Loop);
            for st in &def.body.stmts {
                self.stmt(st, &mut block);
            }
        }
        self.pop_scope();
        self.inline_frames.pop();
        self.breaks = saved_breaks;
        self.pending = saved_pending;
        bound_ok?;
        let no = self.add(ExprKind::ConstInt(0), ScalarType::Bool, Span::default());
        self.pending.push(Stmt::Assign { local: done, value: no });
        let never = self.add(ExprKind::ConstInt(0), ScalarType::Bool, Span::default());
        self.pending.push(Stmt::Loop { cond: Some(never), test_first: false, body: block, continuing: Vec::new(), range: None });
        Ok(result)
    }

    /// A struct local name no C name can be (it holds a `#`).
    pub(super) fn fresh_struct_name(&self, base: &str) -> String {
        format!("{base}#{}", self.body.locals.len())
    }
}

/// The terms of a chain of `+` (parentheses and nesting looked through).
pub(super) fn flatten_sum<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match &e.kind {
        AE::Binary { op: AB::Add, lhs, rhs } => {
            flatten_sum(lhs, out);
            flatten_sum(rhs, out);
        }
        _ => out.push(e),
    }
}

pub(super) fn member_root(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        AE::Ident(n) => Some(n),
        AE::Member { base, .. } => member_root(base),
        _ => None,
    }
}

/// `a[i][j]` as its base (`a`) and its subscripts, outermost first.
pub(super) fn subscripts(e: &ast::Expr) -> (&ast::Expr, Vec<&ast::Expr>) {
    let mut index_exprs = Vec::new();
    let mut cur = e;
    while let AE::Index { base, index } = &cur.kind {
        index_exprs.push(&**index);
        cur = base;
    }
    index_exprs.reverse();
    (cur, index_exprs)
}
