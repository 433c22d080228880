//! Data clauses: each `copy(a[lo:len])`-like reference becomes a [`DataSection`] of the array
//! whose base pointer, first element and length the host evaluates (C text in host args), with
//! its element size; and the `if`/`self` conditions of the directive.

use super::*;

impl<'a> Lowerer<'a> {
    pub(super) fn data_clauses(&mut self, d: &Directive, sema: &Sema) -> (Vec<HostArg>, Vec<DataSection>, Option<u32>) {
        let mut args = Vec::new();
        let mut data = Vec::new();
        let mut if_text = None;
        let mut self_text = None;
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Data { kind, refs, zero } => {
                    for r in refs {
                        match self.data_section(*kind, r, sema, &mut args) {
                            Ok(s) => data.push(DataSection { zero: *zero, ..s }),
                            Err(e) => self.diags.push(e),
                        }
                    }
                }
                ClauseKind::If(e) => if_text = Some(format!("({})", self.text(e.span))),
                // `self(c)` on a compute construct: on the host when `c` holds (a bare `self`
                // never reaches here: the construct stays on the host).
                ClauseKind::SelfHost(Some(e)) => self_text = Some(format!("({})", self.text(e.span))),
                _ => {}
            }
        }
        let device_text = match (if_text, self_text) {
            (Some(i), Some(s)) => Some(format!("({i} && !{s})")),
            (Some(i), None) => Some(i),
            (None, Some(s)) => Some(format!("(!{s})")),
            (None, None) => None,
        };
        let if_arg = device_text.map(|text| push_arg(&mut args, HostArg { c_expr: text, kind: HostArgKind::Int, size_expr: None }));
        (args, data, if_arg)
    }

    fn data_section(&self, kind: DataClauseKind, r: &DataRef, sema: &Sema, args: &mut Vec<HostArg>) -> Result<DataSection, Diagnostic> {
        let base_text = self.text(r.base.span);
        let name = self.text(r.span);
        let Some(ty) = host_lvalue_type(sema, &r.base) else {
            return Err(Diagnostic::error(r.base.span, format!("undeclared variable `{base_text}` in a data clause"))
                .with_help("name a variable declared before the directive"));
        };
        if matches!(kind, DataClauseKind::Attach | DataClauseKind::Detach) && !matches!(ty, CType::Pointer { .. }) {
            let clause = clause_name(kind);
            return Err(Diagnostic::error(r.span, format!("`{clause}` needs a pointer, and `{base_text}` is not one"))
                .with_help(format!("name a pointer variable or member: {clause}(s.p)")));
        }
        let is_ident = matches!(r.base.kind, AE::Ident(_));
        let base_c = if is_ident { base_text.clone() } else { format!("({base_text})") };
        // The dimensions (text and constant value when known), first may be unknown for pointers.
        let (dims, elem): (Vec<DimText>, CType) = match &ty {
            CType::Array { .. } => self.dim_texts(&ty),
            CType::Pointer { to, .. } => {
                let (mut d, e) = self.dim_texts(to);
                d.insert(0, None);
                (d, e)
            }
            _ => {
                if !r.sections.is_empty() {
                    return Err(Diagnostic::error(r.span, format!("`{base_text}` is not an array"))
                        .with_help("use sections only on arrays and pointers"));
                }
                let size = sema.size_align(&ty).map(|(s, _)| s as u32).unwrap_or(0);
                let base = push_arg(args, HostArg { c_expr: format!("&({base_text})"), kind: HostArgKind::Pointer, size_expr: Some(format!("sizeof({base_text})")) });
                return Ok(DataSection { kind, base, lo: None, len: None, elem_size: size, name, span: r.span, zero: false });
            }
        };
        let elem_size = sema.size_align(&elem).map(|(s, _)| s as u32).ok_or_else(|| {
            Diagnostic::error(r.span, format!("the elements of `{base_text}` have no known size")).with_help("use arrays of complete types")
        })?;
        let is_object = matches!(ty, CType::Array { .. });
        let size_expr = if is_object { Some(format!("sizeof({base_text})")) } else { None };
        let base = push_arg(args, HostArg { c_expr: base_c, kind: HostArgKind::Pointer, size_expr });
        if r.sections.is_empty() {
            if !is_object && matches!(kind, DataClauseKind::Copy | DataClauseKind::CopyIn | DataClauseKind::CopyOut | DataClauseKind::Create) {
                let clause = clause_name(kind);
                return Err(Diagnostic::error(r.span, format!("cannot tell how many elements `{base_text}` has; write `{clause}({base_text}[0:n])`"))
                    .with_help(format!("give the section: {clause}({base_text}[0:n]) where n is the number of elements")));
            }
            return Ok(DataSection { kind, base, lo: None, len: None, elem_size, name, span: r.span, zero: false });
        }
        if r.sections.len() > dims.len() {
            return Err(Diagnostic::error(r.span, format!("`{base_text}` has {} dimension(s) but the clause gives {} sections", dims.len(), r.sections.len()))
                .with_help("give one section per dimension"));
        }
        // Per section: lo text ("0" when absent), len text, whether it covers the whole dim.
        let mut parts = Vec::new();
        let mut all_lo_zero = true;
        for (k, s) in r.sections.iter().enumerate() {
            let lo = s.lo.as_ref().map(|e| format!("({})", self.text(e.span)));
            let lo_const = match &s.lo {
                None => Some(0),
                Some(e) => sema.const_eval(e),
            };
            let (len, len_const) = if s.single {
                ("1".to_string(), Some(1))
            } else {
                match (&s.len, &dims[k]) {
                    (Some(e), _) => (format!("({})", self.text(e.span)), sema.const_eval(e)),
                    (None, Some((d, dc))) => match &lo {
                        Some(l) => (format!("({d} - {l})"), None),
                        None => (d.clone(), *dc),
                    },
                    (None, None) => {
                        return Err(Diagnostic::error(s.span, format!("the section of `{base_text}` has no length"))
                            .with_help(format!("write {base_text}[lo:len]")));
                    }
                }
            };
            let full = lo_const == Some(0)
                && match &dims[k] {
                    Some((d, dc)) => (dc.is_some() && len_const == *dc) || len == *d || s.len.is_none(),
                    None => false,
                };
            all_lo_zero &= lo_const == Some(0);
            parts.push((lo.unwrap_or_else(|| "0".into()), len, full));
        }
        // Stride of dimension k: the product of the later dimensions.
        let mut strides = Vec::new();
        for k in 0..r.sections.len() {
            let mut factors = Vec::new();
            for d in &dims[k + 1..] {
                match d {
                    Some((t, Some(1))) if t == "1" => {}
                    Some((t, _)) => factors.push(t.clone()),
                    None => {
                        return Err(Diagnostic::error(r.span, format!("an inner dimension of `{base_text}` has no length"))
                            .with_help("give every dimension but the first a length"));
                    }
                }
            }
            strides.push(factors);
        }
        let times = |a: &str, f: &[String]| -> String {
            if f.is_empty() { a.to_string() } else { format!("{a} * {}", f.join(" * ")) }
        };
        let inner_full = parts.iter().skip(1).all(|p| p.2);
        let (lo_text, len_text) = if inner_full {
            (times(&parts[0].0, &strides[0]), times(&parts[0].1, &strides[0]))
        } else {
            let lo = parts.iter().zip(&strides).map(|(p, f)| times(&p.0, f)).collect::<Vec<_>>().join(" + ");
            let len = parts.iter().zip(&strides).map(|(p, f)| times(&format!("({} - 1)", p.1), f)).collect::<Vec<_>>().join(" + ");
            (lo, format!("{len} + 1"))
        };
        let lo = if all_lo_zero { None } else { Some(push_arg(args, HostArg { c_expr: paren(&lo_text), kind: HostArgKind::Int, size_expr: None })) };
        let len = push_arg(args, HostArg { c_expr: paren(&len_text), kind: HostArgKind::Int, size_expr: None });
        Ok(DataSection { kind, base, lo, len: Some(len), elem_size, name, span: r.span, zero: false })
    }

    /// The dimension lengths of an array type (text, constant) and its element type.
    fn dim_texts(&self, ty: &CType) -> (Vec<DimText>, CType) {
        let mut dims = Vec::new();
        let mut cur = ty;
        while let CType::Array { elem, len } = cur {
            dims.push(match len {
                ArrayLen::Const(n) => Some((n.to_string(), Some(*n as i64))),
                ArrayLen::Var(e) => Some((format!("({})", self.text(e.span)), None)),
                ArrayLen::Unknown => None,
            });
            cur = elem;
        }
        (dims, cur.clone())
    }
}

/// The type of a host lvalue named in a clause (`a`, `s.f`, `p->m`, `a[i]`).
fn host_lvalue_type(sema: &Sema, e: &ast::Expr) -> Option<CType> {
    match &e.kind {
        AE::Ident(n) => sema.lookup_var(n).map(|v| v.ty.clone()),
        AE::Member { base, field, arrow } => {
            let bt = host_lvalue_type(sema, base)?;
            let index = match (bt, arrow) {
                (CType::Pointer { to, .. }, true) => match *to {
                    CType::Struct(i) => i,
                    _ => return None,
                },
                (CType::Struct(i), false) => i,
                _ => return None,
            };
            sema.field(index, field).cloned()
        }
        AE::Index { base, .. } => match host_lvalue_type(sema, base)? {
            CType::Array { elem, .. } => Some(*elem),
            CType::Pointer { to, .. } => Some(*to),
            _ => None,
        },
        AE::Unary { op: ast::UnaryOp::Deref, operand } => match host_lvalue_type(sema, operand)? {
            CType::Pointer { to, .. } => Some(*to),
            _ => None,
        },
        _ => None,
    }
}
