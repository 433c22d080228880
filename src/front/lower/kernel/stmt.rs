//! Statements of a kernel body: blocks, `if`, loops, `switch`, declarations of locals and local
//! arrays, assignments and increments.

use super::*;

impl<'a> KernelBuilder<'a> {
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
        if self.stmt_depth == 0 {
            super::super::walk::assigned_values(s, &mut self.assigned_values);
        }
        let saved = std::mem::take(&mut self.pending);
        let mut lowered = Vec::new();
        self.stmt_depth += 1;
        let r = self.stmt_inner(s, &mut lowered);
        self.stmt_depth -= 1;
        self.record(r);
        out.append(&mut self.pending);
        out.append(&mut lowered);
        self.pending = saved;
    }

    /// A loop condition, evaluated on every trip: the test as `Bool`, and the statements it needs
    /// run before it on every trip (an assignment or an inlined call in the condition).
    fn loop_condition(&mut self, e: &ast::Expr) -> R<(Handle<Expr>, Block)> {
        self.condition_deferred(e)
    }

    /// A condition that needs statements, tested inside the loop: `needed; if (!c) break;`.
    fn exit_unless(&mut self, mut needed: Block, c: Handle<Expr>) -> Block {
        let span = self.body.exprs[c].span;
        let stop = self.add(ExprKind::Unary { op: UnaryOp::Not, arg: c }, ScalarType::Bool, span);
        needed.push(Stmt::If { cond: stop, then: vec![Stmt::Break], otherwise: Vec::new() });
        needed
    }

    /// `continue`: to the innermost loop, or to the end of the parallel iteration. Out of a
    /// switch lowered as a one-trip loop it sets the switch's flag and leaves that loop; the
    /// switch continues after it (see `switch_with_fallthrough`).
    pub(super) fn continue_stmt(&mut self, span: Span, out: &mut Block) -> R<()> {
        match self.breaks.iter().rev().find(|b| **b != BreakTarget::Switch).copied() {
            Some(BreakTarget::Loop) => out.push(Stmt::Continue),
            Some(BreakTarget::Iteration) => {
                self.iteration_continue = true;
                out.push(Stmt::Continue);
            }
            Some(BreakTarget::SwitchLoop) if self.breaks.iter().any(|b| matches!(b, BreakTarget::Loop | BreakTarget::Iteration)) => {
                let flag = match self.switch_continues.last().copied() {
                    Some(Some(flag)) => flag,
                    Some(None) => {
                        let flag = self.new_local("switch_continue", ScalarType::Bool, LocalKind::Var, span);
                        if let Some(slot) = self.switch_continues.last_mut() {
                            *slot = Some(flag);
                        }
                        flag
                    }
                    None => return Err(Diagnostic::global_error("internal: a switch loop without its frame")),
                };
                let yes = self.add(ExprKind::ConstInt(1), ScalarType::Bool, span);
                out.push(Stmt::Assign { local: flag, value: yes });
                out.push(Stmt::Break);
            }
            _ => return Err(err(span, "`continue` outside a loop", "use continue inside loops only")),
        }
        Ok(())
    }

    /// After a loop inside an inlined function: a `return` in the loop left it with `break`;
    /// leave the enclosing loops too.
    pub(super) fn after_loop(&mut self, out: &mut Block) {
        if let Some(frame) = self.inline_frames.last() {
            let done = frame.done;
            let flag = self.add(ExprKind::Local(done), ScalarType::Bool, Span::default());
            out.push(Stmt::If { cond: flag, then: vec![Stmt::Break], otherwise: Vec::new() });
        }
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
                let c = self.condition(cond)?;
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
                let (c, needed) = self.loop_condition(cond)?;
                let mut b = self.loop_body(body);
                if needed.is_empty() {
                    out.push(Stmt::Loop { cond: Some(c), test_first: true, body: b, continuing: Vec::new(), range: None });
                } else {
                    let mut head = self.exit_unless(needed, c);
                    head.append(&mut b);
                    out.push(Stmt::Loop { cond: None, test_first: true, body: head, continuing: Vec::new(), range: None });
                }
                self.after_loop(out);
                Ok(())
            }
            StmtKind::DoWhile { body, cond } => {
                let b = self.loop_body(body);
                let (c, needed) = self.loop_condition(cond)?;
                if needed.is_empty() {
                    out.push(Stmt::Loop { cond: Some(c), test_first: false, body: b, continuing: Vec::new(), range: None });
                } else {
                    // `continue` goes to the condition: test it in the continuing block.
                    let continuing = self.exit_unless(needed, c);
                    out.push(Stmt::Loop { cond: None, test_first: false, body: b, continuing, range: None });
                }
                self.after_loop(out);
                Ok(())
            }
            StmtKind::For { .. } => self.for_loop(s, out),
            StmtKind::Switch { cond, body } => self.switch(cond, body, span, out),
            StmtKind::Case { .. } | StmtKind::Default { .. } => Err(err(
                span,
                "a `case` label that is not directly in a switch body is not supported in kernels",
                "put case labels directly in the switch body",
            )),
            StmtKind::Labeled { .. } | StmtKind::Goto(_) => Err(err(
                span,
                "`goto` and labels are not supported in kernels",
                "restructure the code with loops, if/else, break and continue",
            )),
            StmtKind::Break => match self.breaks.last() {
                Some(BreakTarget::Loop | BreakTarget::SwitchLoop) => {
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
            StmtKind::Continue => self.continue_stmt(span, out),
            StmtKind::Return(value) => {
                if let Some(frame) = self.inline_frames.last() {
                    let (result, done) = (frame.result.clone(), frame.done);
                    match (value, result) {
                        (Some(e), Some(InlineResult::Number(l, t))) => {
                            let v = self.value_as(e, t)?;
                            out.push(Stmt::Assign { local: l, value: v });
                        }
                        (Some(e), Some(InlineResult::Pointer(k))) => {
                            let v = self.pointer_value(e)?;
                            let mut pending = std::mem::take(&mut self.pending);
                            out.append(&mut pending);
                            self.assign_pointer(k, v, span, out)?;
                        }
                        (Some(e), Some(InlineResult::Struct(local, s))) => {
                            let (src, t) = self.struct_source(e)?;
                            if s != t {
                                return Err(err(e.span, "the function returns another struct than it declares", "return a struct of the declared type"));
                            }
                            let mut copying = Vec::new();
                            self.copy_struct(&structs::Place::Local(local), &src, s, span, &mut copying)?;
                            let mut pending = std::mem::take(&mut self.pending);
                            out.append(&mut pending);
                            out.append(&mut copying);
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
                    (Some(e), Some(t)) => Some(self.value_as(e, t)?),
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
            let mut range = match loops::counted_loop(&self.sema, s) {
                Ok(c) => self.loop_range(&c)?,
                Err(_) => None,
            };
            let (c, head) = match cond {
                Some(c) => {
                    let (c, needed) = self.loop_condition(c)?;
                    if needed.is_empty() {
                        (Some(c), Vec::new())
                    } else {
                        range = None;
                        (None, self.exit_unless(needed, c))
                    }
                }
                None => (None, Vec::new()),
            };
            // The step's own statements (an inlined call in it) run with it, after each trip.
            let mut continuing = Vec::new();
            if let Some(st) = step {
                let outer = std::mem::take(&mut self.pending);
                let mut step_stmts = Vec::new();
                let r = self.expr_stmt(st, &mut step_stmts);
                continuing = std::mem::replace(&mut self.pending, outer);
                r?;
                continuing.append(&mut step_stmts);
            }
            let mut b = head;
            b.append(&mut self.loop_body(body));
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
        // The range is a second reading of the bounds: one with side effects has none.
        let (Some(start), Some(bound)) = (self.effect_free_expr(c.lo)?, self.effect_free_expr(c.bound)?) else { return Ok(None) };
        let start = self.cast(start, vty);
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
                CType::Complex(format) => self.declare_complex_local(name, *format, id.init.as_ref(), span, out)?,
                CType::Scalar(t) => {
                    let t = &t.value_type();
                    let l = self.new_local(name, *t, LocalKind::Var, span);
                    if let Some(init) = &id.init {
                        let ast::Initializer::Expr(e) = init else {
                            return Err(err(span, "brace initializer for a scalar", "initialise scalars with an expression"));
                        };
                        let v = self.value_as(e, *t)?;
                        out.push(Stmt::Assign { local: l, value: v });
                    }
                    self.bind(name, l);
                }
                CType::Array { .. } if type_depth_of_elements_is_pointer(&ty) => {
                    return Err(err(span, format!("`{name}` is an array of pointers; kernels keep pointers in local variables only"), "use one pointer variable for each, or index the arrays directly"));
                }
                CType::Array { .. } if local_array_of_complex(&ty) => {
                    return Err(err(
                        span,
                        format!("the local array `{name}` holds complex numbers, which kernels do not support in local arrays"),
                        "use two arrays, one for the real parts and one for the imaginary parts",
                    ));
                }
                CType::Array { .. } if d.specs.block_shared && self.per_thread => {
                    let (dims, elem) = local_array_shape(&ty).ok_or_else(|| {
                        err(span, format!("the `__shared__` array `{name}` needs constant dimensions and number elements"), "give the array constant sizes, e.g. __shared__ float tile[256]")
                    })?;
                    if id.init.is_some() {
                        return Err(err(span, format!("the `__shared__` array `{name}` cannot have an initializer"), "assign its elements in the kernel's body"));
                    }
                    self.declare_block_shared(name, dims, elem);
                }
                _ if d.specs.block_shared => {
                    return Err(err(span, format!("`__shared__` `{name}` must be an array"), "declare a block's shared data as an array (`__shared__ float tile[256];`)"));
                }
                CType::Array { .. } if let Some((dims, s)) = struct_array_shape(&ty) => {
                    check_local_bytes(name, self.sema.bytes_saturating(&ty), span)?;
                    self.declare_struct_array_local(name, s, &dims, id.init.as_ref(), span, out)?;
                }
                CType::Array { .. } => {
                    let (dims, elem) = local_array_shape(&ty).ok_or_else(|| {
                        err(span, format!("the local array `{name}` needs constant dimensions and number elements"), "give the array constant sizes, e.g. double t[3]")
                    })?;
                    check_local_bytes(name, crate::ir::array_bytes(&dims, elem), span)?;
                    let l = self.body.locals.append(Local { name: name.clone(), ty: elem, array_dims: Some(dims.clone()), kind: LocalKind::Var, span });
                    self.bind(name, l);
                    if let Some(init) = &id.init {
                        self.local_array_init(l, &dims, elem, init, out)?;
                    }
                }
                CType::Struct(s) => {
                    check_local_bytes(name, self.sema.bytes_saturating(&ty), span)?;
                    self.declare_struct_local(name, *s, span)?;
                    if let Some(init) = &id.init {
                        self.init_struct_local(name, *s, init, span, out)?;
                    }
                }
                CType::Pointer { to, .. } => {
                    let k = self.declare_pointer(name, to, false, span, out)?;
                    match &id.init {
                        None => {}
                        Some(ast::Initializer::Expr(e)) => {
                            let value = self.pointer_value(e)?;
                            let mut pending = std::mem::take(&mut self.pending);
                            out.append(&mut pending);
                            self.assign_pointer(k, value, e.span, out)?;
                        }
                        Some(ast::Initializer::List(..)) => return Err(err(span, format!("the pointer `{name}` has a brace initializer"), "initialise a pointer with an address")),
                    }
                }
                _ => {
                    return Err(err(span, format!("the local `{name}` has a type kernels do not support"), "use number-typed locals and arrays in kernels"));
                }
            }
        }
        Ok(())
    }

    pub(super) fn local_array_init(&mut self, l: Handle<Local>, dims: &[u32], elem: ScalarType, init: &ast::Initializer, out: &mut Block) -> R<()> {
        let ast::Initializer::List(list) = init else {
            return Err(err(Span::default(), "an array needs a brace initializer", "write {a, b, c}"));
        };
        let span = &list.span;
        if dims.len() != 1 || list.iter().any(|(d, i)| !d.is_empty() || !matches!(*i, ast::Initializer::Expr(_))) {
            return Err(err(*span, "only flat initializers of one-dimensional local arrays are supported", "assign the elements in a loop"));
        }
        let mut elements = list.iter();
        for k in 0..dims[0] as usize {
            let value = match elements.next() {
                Some((_, i)) => match &*i {
                    ast::Initializer::Expr(e) => self.value_as(e, elem)?,
                    ast::Initializer::List(_) => self.zero_of(elem),
                },
                None => self.zero_of(elem),
            };
            let idx = self.int_const(k as i64, ScalarType::I32);
            out.push(Stmt::Store { array: ArrayRef::Local(l), indices: vec![idx], value, span: *span });
        }
        Ok(())
    }

    pub(in crate::front::lower) fn target(&mut self, lhs: &ast::Expr) -> R<Target> {
        match &lhs.kind {
            AE::Ident(name) if self.pointer_local(name).is_some() => Err(err(
                lhs.span,
                format!("the pointer `{name}` is used as a number"),
                "assign pointers in statements of their own (`p = q;`, `p++;`, `p += k;`)",
            )),
            AE::Index { .. } | AE::Unary { op: AU::Deref, .. } if let Some(t) = self.pointer_access(lhs, true)? => Ok(t),
            AE::Ident(name) => {
                if let Some(l) = self.kernel_local(name) {
                    if self.body.locals[l].array_dims.is_some() {
                        return Err(err(lhs.span, format!("cannot assign the whole array `{name}`"), "assign its elements"));
                    }
                    return Ok(Target::Local(l));
                }
                if self.kernel_struct(name).is_some() {
                    return Err(err(lhs.span, format!("the struct `{name}` cannot be assigned here"), "assign structs as statements of their own: `s = t;`"));
                }
                let Some(info) = self.host_var(name) else {
                    return Err(err(lhs.span, format!("undeclared name `{name}`"), "declare it before the construct"));
                };
                self.check_default_none(name, lhs.span);
                let Some(ty) = info.ty.scalar() else {
                    return Err(err(lhs.span, format!("cannot assign `{name}` in a kernel"), "assign numbers and array elements only"));
                };
                if matches!(self.treatments.get(name.as_str()), Some(Treatment::SameValue)) && !self.host_locals.contains_key(name.as_str()) {
                    return self.in_place_scalar(name, ty, lhs.span);
                }
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
                let pv = self.pointer_value(operand)?;
                self.pointer_element(pv, &[], true, lhs.span)
            }
            AE::Unary { op: AU::Real, operand } => self.part_target(crate::ir::ComplexPart::Real, operand, lhs.span),
            AE::Unary { op: AU::Imag, operand } => self.part_target(crate::ir::ComplexPart::Imag, operand, lhs.span),
            AE::Member { base, field, arrow } => {
                if let Some((place, s)) = self.member_base_place(base, *arrow)? {
                    return self.member_target(&place, s, field, lhs.span);
                }
                Err(err(lhs.span, "assigning members of host structs in a kernel is not supported", "assign the member on the host, or use a struct local"))
            }
            _ => Err(err(lhs.span, "this expression cannot be assigned", "assign variables and array elements")),
        }
    }

    pub(in crate::front::lower) fn target_type(&self, t: &Target) -> ScalarType {
        match t {
            Target::Local(l) => self.body.locals[*l].ty,
            Target::Element { ty, .. } => *ty,
        }
    }

    pub(in crate::front::lower) fn read_target(&mut self, t: &Target, span: Span) -> Handle<Expr> {
        match t {
            Target::Local(l) => self.add(ExprKind::Local(*l), self.body.locals[*l].ty, span),
            Target::Element { array, indices, ty } => self.add(ExprKind::Load { array: *array, indices: indices.clone() }, *ty, span),
        }
    }

    pub(in crate::front::lower) fn store(&mut self, t: Target, value: Handle<Expr>, span: Span, out: &mut Block) {
        let ty = self.target_type(&t);
        let value = self.cast(value, ty);
        match t {
            Target::Local(local) => out.push(Stmt::Assign { local, value }),
            Target::Element { array, indices, .. } => out.push(Stmt::Store { array, indices, value, span }),
        }
    }

    pub fn expr_stmt(&mut self, e: &ast::Expr, out: &mut Block) -> R<()> {
        let span = e.span;
        if self.per_thread
            && let AE::Call { callee, args } = &e.kind
            && matches!(&callee.kind, AE::Ident(n) if n == "__syncthreads")
            && args.is_empty()
        {
            out.push(Stmt::Barrier);
            return Ok(());
        }
        if let Some(done) = self.array_reduction_update(e, out) {
            return done;
        }
        if let AE::Assign { lhs, .. } = &e.kind
            && matches!(lhs.kind, AE::Index { .. } | AE::Unary { op: AU::Deref, .. } | AE::Member { .. })
            && self.is_pointer(lhs)
        {
            return Err(err(
                lhs.span,
                format!("`{}` stores a pointer into memory, which kernels cannot do (a pointer a kernel computes is an address on its device)", self.text(lhs.span)),
                "fill tables of pointers on the host, before the construct (kernels reach the rows through them), or store indices instead of pointers",
            ));
        }
        if let AE::Assign { lhs: target, .. } | AE::Unary { op: AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec, operand: target } = &e.kind
            && self.is_pointer(target)
            && !matches!(target.kind, AE::Index { .. } | AE::Unary { op: AU::Deref, .. } | AE::Member { .. })
        {
            let k = self.assigned_pointer(target)?;
            return match &e.kind {
                AE::Assign { op, rhs, .. } => self.pointer_update(k, *op, rhs, span, out),
                AE::Unary { op, .. } => self.pointer_step(k, matches!(op, AU::PreDec | AU::PostDec), span, out),
                _ => Ok(()),
            };
        }
        match &e.kind {
            AE::Assign { op: None, lhs, rhs } if self.struct_assignment(lhs, rhs, span, out)? => Ok(()),
            AE::Assign { op, lhs, rhs } if self.is_complex(lhs) => self.complex_assignment(*op, lhs, rhs, span, out),
            AE::Assign { op, lhs, rhs } => {
                let t = self.target(lhs)?;
                let value = match op {
                    None => self.value_as(rhs, self.target_type(&t))?,
                    Some(op) => {
                        let cur = self.read_target(&t, lhs.span);
                        match self.real_update_by_complex(*op, cur, rhs, span)? {
                            Some(v) => v,
                            None => {
                                let r = self.expr(rhs)?;
                                self.arith(*op, cur, r, span)?
                            }
                        }
                    }
                };
                self.store(t, value, span, out);
                Ok(())
            }
            AE::Unary { op: op @ (AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec), operand } => {
                self.no_complex_increment(operand, span)?;
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

/// The most a local array of a kernel may take: CUDA gives a thread 512 KiB of local memory.
const MAX_LOCAL_ARRAY_BYTES: u64 = 512 * 1024;

/// Refuses a local array or struct of `bytes` bytes per iteration that no GPU thread can hold;
/// lowering such a local would also emit one statement per element (a hang, not a refusal).
fn check_local_bytes(name: &str, bytes: u64, span: Span) -> R<()> {
    if bytes > MAX_LOCAL_ARRAY_BYTES {
        let size = if bytes == u64::MAX { "more than 2^64 bytes".to_string() } else { format!("{bytes} bytes") };
        return Err(err(
            span,
            format!("the local `{name}` takes {size} in each iteration; a GPU thread's local memory holds {} KiB", MAX_LOCAL_ARRAY_BYTES / 1024),
            "allocate it on the host and index it per iteration, or make it smaller",
        ));
    }
    Ok(())
}

/// The constant dimensions of an array (of arrays) of structs, and the struct.
fn struct_array_shape(ty: &CType) -> Option<(Vec<u32>, usize)> {
    let mut dims = Vec::new();
    let mut cur = ty;
    while let CType::Array { elem, len } = cur {
        match len {
            ArrayLen::Const(n) => dims.push(u32::try_from(*n).ok()?),
            _ => return None,
        }
        cur = elem;
    }
    match cur {
        CType::Struct(s) => Some((dims, *s)),
        _ => None,
    }
}

/// An array (of arrays) whose elements are pointers.
fn type_depth_of_elements_is_pointer(ty: &CType) -> bool {
    let mut cur = ty;
    while let CType::Array { elem, .. } = cur {
        cur = elem;
    }
    matches!(cur, CType::Pointer { .. })
}

/// An array (of arrays) of complex numbers.
fn local_array_of_complex(ty: &CType) -> bool {
    match ty {
        CType::Array { elem, .. } => matches!(**elem, CType::Complex(_)) || local_array_of_complex(elem),
        _ => false,
    }
}
