//! Data clauses (`copy`, `copyin`, ..., `update host/device`) lowered to [`DataSection`]s: the
//! host args that give each section's base address, first element and length, evaluated where
//! the directive stands.
//!
//! A section of several dimensions of a contiguous array is one range of elements (the hull of
//! the rows it names). A two-dimensional section of a pointer to pointers (`double **a;
//! copyin(a[0:n][0:m])`, or an array of pointers `double *a[N]`) is a deep copy: the first
//! section selects row pointers of the table, the second the elements of each row, which are
//! separate objects ([`RowSection`]; the runtime walks the table when the clause runs).

use super::*;
use crate::ir::RowSection;

/// One dimension of an array in a data clause: its length as C text and as a constant when it
/// is one; `None` when unknown (the first dimension behind a pointer).
type DimText = Option<(String, Option<i64>)>;

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
                            Ok(s) => {
                                let dead_on_host = self.dead_on_host(r, sema);
                                data.push(DataSection { zero: *zero, dead_on_host, ..s })
                            }
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

    /// Whether `r` names a whole automatic local array of the function being lowered that
    /// its host code never names ([`DataSection::dead_on_host`]).
    fn dead_on_host(&self, r: &DataRef, sema: &Sema) -> bool {
        let AE::Ident(name) = &r.base.kind else { return false };
        let local_array = sema
            .lookup_var(name)
            .is_some_and(|v| matches!(v.storage, Storage::Local) && matches!(v.ty, CType::Array { .. }));
        local_array && self.locals_the_host_never_names.contains(name)
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
                return Ok(DataSection { kind, base, lo: None, len: None, elem_size: size, name, span: r.span, zero: false, rows: None, dead_on_host: false });
            }
        };
        let elem_size = sema.size_align(&elem).map(|(s, _)| s as u32).ok_or_else(|| {
            Diagnostic::error(r.span, format!("the elements of `{base_text}` have no known size")).with_help("use arrays of complete types")
        })?;
        let is_object = matches!(ty, CType::Array { .. });
        let size_expr = if is_object { Some(format!("sizeof({base_text})")) } else { None };
        let base = push_arg(args, HostArg { c_expr: base_c, kind: HostArgKind::Pointer, size_expr });
        if r.sections.is_empty() {
            // A parameter declared as an array (`double a[n][m]`) has the declared extent; any
            // other pointer's extent is the allocation it points into, which the runtime knows
            // (it tracks malloc and its relatives, and static arrays) and refuses when it does not.
            let declared = match &r.base.kind {
                AE::Ident(n) if !is_object => sema.lookup_var(n).and_then(|v| v.declared_len.clone()),
                _ => None,
            };
            let outer = match &declared {
                Some(ArrayLen::Const(n)) => Some(n.to_string()),
                Some(ArrayLen::Var(e)) => Some(format!("({})", self.text(e.span))),
                _ => None,
            };
            if let Some(outer) = outer
                && dims[1..].iter().all(|d| d.is_some())
            {
                let factors: Vec<String> = std::iter::once(outer).chain(dims[1..].iter().flatten().map(|(t, _)| t.clone())).collect();
                let len = push_arg(args, HostArg { c_expr: paren(&factors.join(" * ")), kind: HostArgKind::Int, size_expr: None });
                return Ok(DataSection { kind, base, lo: None, len: Some(len), elem_size, name, span: r.span, zero: false, rows: None, dead_on_host: false });
            }
            return Ok(DataSection { kind, base, lo: None, len: None, elem_size, name, span: r.span, zero: false, rows: None, dead_on_host: false });
        }
        // One section more than the table has dimensions, on a table of pointers: the last one
        // selects elements of each row (deep copy).
        if let CType::Pointer { to: row_elem, .. } = &elem
            && r.sections.len() > dims.len()
        {
            if dims.len() != 1 || r.sections.len() != 2 {
                return Err(Diagnostic::error(
                    r.span,
                    format!(
                        "`{base_text}` is a {} of pointers, and the clause gives {} sections",
                        if dims.len() == 1 { "table" } else { "multi-dimensional array" },
                        r.sections.len()
                    ),
                )
                .with_help(format!(
                    "give two sections: the rows of the table and the elements of each row, as in {}({base_text}[0:n][0:m])",
                    clause_name(kind)
                )));
            }
            let rows = self.row_section(kind, r, &base_text, row_elem, sema, args)?;
            let (lo, len) = self.flat_section(&base_text, r, &r.sections[..1], &dims, sema, args)?;
            return Ok(DataSection { kind, base, lo, len: Some(len), elem_size, name, span: r.span, zero: false, rows: Some(rows), dead_on_host: false });
        }
        if r.sections.len() > dims.len() {
            return Err(Diagnostic::error(r.span, format!("`{base_text}` has {} dimension(s) but the clause gives {} sections", dims.len(), r.sections.len()))
                .with_help("give one section per dimension (a section of the elements of each row needs a table of row pointers, such as `double **a`)"));
        }
        let (lo, len) = self.flat_section(&base_text, r, &r.sections, &dims, sema, args)?;
        Ok(DataSection { kind, base, lo, len: Some(len), elem_size, name, span: r.span, zero: false, rows: None, dead_on_host: false })
    }

    /// The element range `sections` name in an array of dimensions `dims` (the hull of the
    /// rows when an inner section is partial), as args: the first element (`None` for 0) and
    /// the count.
    fn flat_section(
        &self,
        base_text: &str,
        r: &DataRef,
        sections: &[ast::Section],
        dims: &[DimText],
        sema: &Sema,
        args: &mut Vec<HostArg>,
    ) -> Result<(Option<u32>, u32), Diagnostic> {
        // Per section: lo text ("0" when absent), len text, whether it covers the whole dim.
        let mut parts = Vec::new();
        let mut all_lo_zero = true;
        for (k, s) in sections.iter().enumerate() {
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
        for k in 0..sections.len() {
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
        Ok((lo, len))
    }

    /// The second section of a deep copy (`a[0:n][lo:len]`): the elements of each row. A row
    /// has no length the compiler knows, so `a[0:n][lo:]` leaves it to the runtime (the row's
    /// allocation).
    fn row_section(
        &self,
        kind: DataClauseKind,
        r: &DataRef,
        base_text: &str,
        row_elem: &CType,
        sema: &Sema,
        args: &mut Vec<HostArg>,
    ) -> Result<RowSection, Diagnostic> {
        let moves_data = matches!(
            kind,
            DataClauseKind::Copy
                | DataClauseKind::CopyIn
                | DataClauseKind::CopyOut
                | DataClauseKind::Create
                | DataClauseKind::Present
                | DataClauseKind::Delete
                | DataClauseKind::NoCreate
                | DataClauseKind::Host
                | DataClauseKind::Device
        );
        if !moves_data {
            let clause = clause_name(kind);
            return Err(Diagnostic::error(r.span, format!("`{clause}` takes pointers, not the rows of `{base_text}`"))
                .with_help(format!("name the pointer itself: {clause}({base_text})")));
        }
        let elem_size = sema.size_align(row_elem).map(|(s, _)| s as u32).filter(|&s| s > 0).ok_or_else(|| {
            Diagnostic::error(r.span, format!("the rows of `{base_text}` point to elements of no known size"))
                .with_help("use rows of numbers or of complete structs")
        })?;
        let s = &r.sections[1];
        let int_arg = |args: &mut Vec<HostArg>, e: &ast::Expr| {
            push_arg(args, HostArg { c_expr: format!("({})", self.text(e.span)), kind: HostArgKind::Int, size_expr: None })
        };
        let lo = match &s.lo {
            Some(e) if sema.const_eval(e) != Some(0) => Some(int_arg(args, e)),
            _ => None,
        };
        let len = if s.single {
            Some(push_arg(args, HostArg { c_expr: "1".into(), kind: HostArgKind::Int, size_expr: None }))
        } else {
            s.len.as_ref().map(|e| int_arg(args, e))
        };
        Ok(RowSection { lo, len, elem_size })
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

/// Parenthesises C text unless it already is one parenthesised group.
pub(super) fn paren(text: &str) -> String {
    let mut depth = 0i32;
    let bytes = text.as_bytes();
    let whole_group = bytes.first() == Some(&b'(')
        && bytes.iter().enumerate().all(|(i, b)| {
            match b {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            depth > 0 || i + 1 == bytes.len()
        });
    if whole_group { text.to_string() } else { format!("({text})") }
}

pub(super) fn push_arg(args: &mut Vec<HostArg>, arg: HostArg) -> u32 {
    if let Some(i) = args.iter().position(|a| a.c_expr == arg.c_expr && a.kind == arg.kind) {
        return i as u32;
    }
    args.push(arg);
    (args.len() - 1) as u32
}

/// The clause as diagnostics name it (`update host` for the `update` directive's clauses).
pub(super) fn clause_name(kind: DataClauseKind) -> &'static str {
    match kind {
        DataClauseKind::Host => "update host",
        DataClauseKind::Device => "update device",
        other => other.keyword(),
    }
}

/// The type of a host lvalue named in a clause (`a`, `s.f`, `p->m`, `a[i]`).
pub(super) fn host_lvalue_type(sema: &Sema, e: &ast::Expr) -> Option<CType> {
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
