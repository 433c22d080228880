//! `#pragma acc atomic` inside kernels: update, read, write and capture forms.

use super::*;

impl<'a> KernelBuilder<'a> {
    pub(super) fn atomic(&mut self, kind: AtomicKind, body: &ast::Stmt, out: &mut Block) -> R<()> {
        let e = match &body.kind {
            StmtKind::Expr(Some(e)) => e,
            _ => return Err(err(body.span, "this atomic form is not supported", "write a single expression statement such as x[i] += v")),
        };
        match kind {
            AtomicKind::Read => self.expr_stmt(e, out),
            AtomicKind::Write => {
                let AE::Assign { op: None, lhs, rhs } = &e.kind else {
                    return Err(err(e.span, "atomic write needs `x = expr`", "write x[i] = value"));
                };
                match self.atomic_target(lhs)? {
                    Target::Element { array, indices, ty } => {
                        let v = self.expr(rhs)?;
                        let value = self.cast(v, ty);
                        out.push(Stmt::Atomic { op: AtomicOp::Write, array, indices, value, capture: None, span: e.span });
                        Ok(())
                    }
                    Target::Local(_) => self.expr_stmt(e, out),
                }
            }
            AtomicKind::Update => {
                let (lhs, op, value) = self.atomic_update_parts(e)?;
                match self.atomic_target(lhs)? {
                    Target::Element { array, indices, ty } => {
                        let value = self.atomic_value(value, ty)?;
                        out.push(Stmt::Atomic { op, array, indices, value, capture: None, span: e.span });
                        Ok(())
                    }
                    Target::Local(_) => self.expr_stmt(e, out),
                }
            }
            AtomicKind::Capture => {
                let AE::Assign { op: None, lhs: v, rhs } = &e.kind else {
                    return Err(err(e.span, "atomic capture needs `v = x[i]++` or `v = x[i] += e`", "write the capture in one of those forms"));
                };
                let (x, op, value, new_value) = match &rhs.kind {
                    AE::Unary { op: u @ (AU::PostInc | AU::PostDec | AU::PreInc | AU::PreDec), operand } => {
                        let op = if matches!(u, AU::PostInc | AU::PreInc) { AtomicOp::Add } else { AtomicOp::Sub };
                        (&**operand, op, None, matches!(u, AU::PreInc | AU::PreDec))
                    }
                    AE::Assign { op: Some(_), .. } => {
                        let (x, op, val) = self.atomic_update_parts(rhs)?;
                        (x, op, Some(val), true)
                    }
                    _ => return Err(err(e.span, "atomic capture needs `v = x[i]++` or `v = x[i] += e`", "write the capture in one of those forms")),
                };
                let Target::Element { array, indices, ty } = self.atomic_target(x)? else {
                    return Err(err(x.span, "atomic capture of a local variable", "capture array elements only"));
                };
                let val = match value {
                    Some(v) => self.atomic_value(v, ty)?,
                    None => {
                        let one = self.int_const(1, ScalarType::I32);
                        self.cast(one, ty)
                    }
                };
                let old = self.new_local("atomic_old", ty, LocalKind::Var, e.span);
                out.push(Stmt::Atomic { op, array, indices, value: val, capture: Some(old), span: e.span });
                let t = self.target(v)?;
                let old_value = self.add(ExprKind::Local(old), ty, e.span);
                let result = if new_value {
                    let irop = match op {
                        AtomicOp::Add => AB::Add,
                        AtomicOp::Sub => AB::Sub,
                        AtomicOp::Mul => AB::Mul,
                        AtomicOp::BitAnd => AB::BitAnd,
                        AtomicOp::BitOr => AB::BitOr,
                        AtomicOp::BitXor => AB::BitXor,
                        _ => return Err(err(e.span, "this capture form is not supported", "capture with += or ++")),
                    };
                    self.arith(irop, old_value, val, e.span)?
                } else {
                    old_value
                };
                self.store(t, result, e.span, out);
                Ok(())
            }
        }
    }

    /// The target of an atomic: a host scalar is updated in place, through its address (a
    /// one-element array param), so every iteration sees the others' updates.
    fn atomic_target(&mut self, lhs: &ast::Expr) -> R<Target> {
        if let AE::Ident(name) = &lhs.kind {
            if !self.is_kernel_name(name) && !self.host_locals.contains_key(name.as_str()) && !self.treatments.contains_key(name.as_str()) {
                if let Some(ty) = self.host_var(name).and_then(|v| v.ty.scalar()) {
                    self.check_default_none(name, lhs.span);
                    let key = format!("&({name})");
                    let p = match self.param_keys.get(&key) {
                        Some(&p) => p,
                        None => {
                            let arg = self.add_arg(HostArg { c_expr: key.clone(), kind: HostArgKind::Pointer, size_expr: Some(format!("sizeof({name})")) });
                            self.params.push(Param {
                                name: key.clone(),
                                kind: ParamKind::Array { elem: ty, dims: vec![None], restrict: false, read_only: false },
                                arg,
                            });
                            let p = (self.params.len() - 1) as u32;
                            self.param_keys.insert(key, p);
                            p
                        }
                    };
                    let zero = self.int_const(0, ScalarType::I32);
                    return Ok(Target::Element { array: ArrayRef::Param(p), indices: vec![zero], ty });
                }
            }
        }
        self.target(lhs)
    }

    fn atomic_value(&mut self, value: AtomicValue<'_>, ty: ScalarType) -> R<Handle<Expr>> {
        let h = match value {
            AtomicValue::Expr(e) => self.expr(e)?,
            AtomicValue::One => self.int_const(1, ScalarType::I32),
        };
        Ok(self.cast(h, ty))
    }

    /// `x[i] op= e`, `x[i]++`, `x[i] = x[i] op e`: the target, the operator and the operand.
    fn atomic_update_parts<'e>(&self, e: &'e ast::Expr) -> R<(&'e ast::Expr, AtomicOp, AtomicValue<'e>)> {
        let bad = || err(e.span, "this atomic update form is not supported", "write x[i] += v, x[i]++, or x[i] = x[i] op v");
        let op_of = |op: AB| -> Option<AtomicOp> {
            Some(match op {
                AB::Add => AtomicOp::Add,
                AB::Sub => AtomicOp::Sub,
                AB::Mul => AtomicOp::Mul,
                AB::BitAnd => AtomicOp::BitAnd,
                AB::BitOr => AtomicOp::BitOr,
                AB::BitXor => AtomicOp::BitXor,
                _ => return None,
            })
        };
        match &e.kind {
            AE::Assign { op: Some(op), lhs, rhs } => Ok((lhs, op_of(*op).ok_or_else(bad)?, AtomicValue::Expr(rhs))),
            AE::Unary { op: AU::PostInc | AU::PreInc, operand } => Ok((operand, AtomicOp::Add, AtomicValue::One)),
            AE::Unary { op: AU::PostDec | AU::PreDec, operand } => Ok((operand, AtomicOp::Sub, AtomicValue::One)),
            AE::Assign { op: None, lhs, rhs } => {
                let same = |x: &ast::Expr| self.key(x.span) == self.key(lhs.span);
                match &rhs.kind {
                    AE::Binary { op, lhs: a, rhs: b } if same(a) => Ok((lhs, op_of(*op).ok_or_else(bad)?, AtomicValue::Expr(b))),
                    AE::Binary { op: op @ (AB::Add | AB::Mul | AB::BitAnd | AB::BitOr | AB::BitXor), lhs: a, rhs: b } if same(b) => {
                        Ok((lhs, op_of(*op).ok_or_else(bad)?, AtomicValue::Expr(a)))
                    }
                    AE::Call { callee, args } if args.len() == 2 && same(&args[0]) => match &callee.kind {
                        AE::Ident(f) if f.starts_with("fmax") => Ok((lhs, AtomicOp::Max, AtomicValue::Expr(&args[1]))),
                        AE::Ident(f) if f.starts_with("fmin") => Ok((lhs, AtomicOp::Min, AtomicValue::Expr(&args[1]))),
                        _ => Err(bad()),
                    },
                    _ => Err(bad()),
                }
            }
            _ => Err(bad()),
        }
    }
}

enum AtomicValue<'e> {
    Expr(&'e ast::Expr),
    One,
}
