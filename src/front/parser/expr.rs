//! C expressions: assignment and comma, `?:`, binary operators by precedence climbing (with
//! the bound on operators per full expression), casts versus parenthesised expressions, unary
//! and postfix operators, primaries, and the GNU builtins standard macros expand to.

use super::*;

impl Parser<'_> {

    pub(crate) fn expression(&mut self) -> PResult<Expr> {
        self.full_expression(Self::expression_inner)
    }

    pub(super) fn expression_inner(&mut self) -> PResult<Expr> {
        let mut e = self.assignment()?;
        while self.is_punct(",") {
            self.fold()?;
            self.bump();
            let rhs = self.assignment()?;
            let span = e.span.to(rhs.span);
            e = Expr { kind: ExprKind::Binary { op: BinaryOp::Comma, lhs: Box::new(e), rhs: Box::new(rhs) }, span };
        }
        Ok(e)
    }

    pub(crate) fn assignment(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.full_expression(Self::assignment_inner);
        self.leave();
        r
    }

    pub(super) fn assignment_inner(&mut self) -> PResult<Expr> {
        let lhs = self.conditional()?;
        let op = match &self.peek().kind {
            TokKind::Punct(p) => match *p {
                "=" => Some(None),
                "+=" => Some(Some(BinaryOp::Add)),
                "-=" => Some(Some(BinaryOp::Sub)),
                "*=" => Some(Some(BinaryOp::Mul)),
                "/=" => Some(Some(BinaryOp::Div)),
                "%=" => Some(Some(BinaryOp::Rem)),
                "<<=" => Some(Some(BinaryOp::Shl)),
                ">>=" => Some(Some(BinaryOp::Shr)),
                "&=" => Some(Some(BinaryOp::BitAnd)),
                "|=" => Some(Some(BinaryOp::BitOr)),
                "^=" => Some(Some(BinaryOp::BitXor)),
                _ => None,
            },
            _ => None,
        };
        let Some(op) = op else { return Ok(lhs) };
        self.bump();
        let rhs = self.assignment()?;
        let span = lhs.span.to(rhs.span);
        Ok(Expr { kind: ExprKind::Assign { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span })
    }

    pub(crate) fn conditional(&mut self) -> PResult<Expr> {
        self.full_expression(Self::conditional_inner)
    }

    pub(super) fn conditional_inner(&mut self) -> PResult<Expr> {
        let cond = self.binary(1)?;
        if !self.is_punct("?") {
            return Ok(cond);
        }
        self.bump();
        self.enter()?;
        let then = self.expression();
        self.leave();
        let then = then?;
        self.expect_punct(":", "in the conditional expression")?;
        self.enter()?;
        let otherwise = self.conditional();
        self.leave();
        let otherwise = otherwise?;
        let span = cond.span.to(otherwise.span);
        Ok(Expr { kind: ExprKind::Conditional { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) }, span })
    }

    pub(super) fn binary_op(&self) -> Option<(BinaryOp, u8)> {
        let TokKind::Punct(p) = &self.peek().kind else { return None };
        Some(match *p {
            "||" => (BinaryOp::LogOr, 1),
            "&&" => (BinaryOp::LogAnd, 2),
            "|" => (BinaryOp::BitOr, 3),
            "^" => (BinaryOp::BitXor, 4),
            "&" => (BinaryOp::BitAnd, 5),
            "==" => (BinaryOp::Eq, 6),
            "!=" => (BinaryOp::Ne, 6),
            "<" => (BinaryOp::Lt, 7),
            ">" => (BinaryOp::Gt, 7),
            "<=" => (BinaryOp::Le, 7),
            ">=" => (BinaryOp::Ge, 7),
            "<<" => (BinaryOp::Shl, 8),
            ">>" => (BinaryOp::Shr, 8),
            "+" => (BinaryOp::Add, 9),
            "-" => (BinaryOp::Sub, 9),
            "*" => (BinaryOp::Mul, 10),
            "/" => (BinaryOp::Div, 10),
            "%" => (BinaryOp::Rem, 10),
            _ => return None,
        })
    }

    /// Precedence climbing over the left-associative binary operators.
    pub(super) fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.cast()?;
        while let Some((op, prec)) = self.binary_op() {
            if prec < min_prec {
                break;
            }
            self.fold()?;
            self.bump();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
        }
        Ok(lhs)
    }

    pub(super) fn cast(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.cast_inner();
        self.leave();
        r
    }

    pub(super) fn cast_inner(&mut self) -> PResult<Expr> {
        if self.is_punct("(") && self.paren_opens_type_name() {
            let open = self.bump().span;
            let ty = self.type_name()?;
            self.expect_punct(")", "to close the type in the cast")?;
            if self.is_punct("{") {
                let init = self.initializer()?;
                let span = open.to(self.prev_span());
                let e = Expr { kind: ExprKind::CompoundLiteral { ty: Box::new(ty), init: Box::new(init) }, span };
                return self.postfix_ops(e);
            }
            let expr = self.cast()?;
            let span = open.to(expr.span);
            return Ok(Expr { kind: ExprKind::Cast { ty: Box::new(ty), expr: Box::new(expr) }, span });
        }
        self.unary()
    }

    pub(super) fn unary(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        let op = match &t.kind {
            TokKind::Punct(p) => match *p {
                "-" => Some(UnaryOp::Neg),
                "+" => Some(UnaryOp::Plus),
                "!" => Some(UnaryOp::Not),
                "~" => Some(UnaryOp::BitNot),
                "*" => Some(UnaryOp::Deref),
                "&" => Some(UnaryOp::AddrOf),
                "++" => Some(UnaryOp::PreInc),
                "--" => Some(UnaryOp::PreDec),
                _ => None,
            },
            TokKind::Ident(w) if w == "__real__" => Some(UnaryOp::Real),
            TokKind::Ident(w) if w == "__imag__" => Some(UnaryOp::Imag),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let operand = if matches!(op, UnaryOp::PreInc | UnaryOp::PreDec) { self.unary_nested()? } else { self.cast()? };
            let span = t.span.to(operand.span);
            return Ok(Expr { kind: ExprKind::Unary { op, operand: Box::new(operand) }, span });
        }
        if t.ident() == Some("sizeof") || t.ident() == Some("_Alignof") || t.ident() == Some("__alignof__") {
            self.bump();
            if self.is_punct("(") && self.paren_opens_type_name() {
                self.bump();
                let ty = self.type_name()?;
                self.expect_punct(")", "to close `sizeof(type)`")?;
                if self.is_punct("{") {
                    // `sizeof (T){...}`: the size of a compound literal.
                    let init = self.initializer()?;
                    let lit_span = t.span.to(self.prev_span());
                    let lit = Expr { kind: ExprKind::CompoundLiteral { ty: Box::new(ty), init: Box::new(init) }, span: lit_span };
                    let e = self.postfix_ops(lit)?;
                    let span = t.span.to(e.span);
                    return Ok(Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span });
                }
                let span = t.span.to(self.prev_span());
                return Ok(Expr { kind: ExprKind::SizeofType(Box::new(ty)), span });
            }
            let e = self.unary_nested()?;
            let span = t.span.to(e.span);
            return Ok(Expr { kind: ExprKind::SizeofExpr(Box::new(e)), span });
        }
        if t.ident() == Some("__extension__") {
            self.bump();
            return self.cast();
        }
        let e = self.primary()?;
        self.postfix_ops(e)
    }

    pub(super) fn unary_nested(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.unary();
        self.leave();
        r
    }

    /// Comma-separated assignment expressions up to (not past) a `)`: a call's arguments.
    pub(super) fn arguments_until_close(&mut self) -> PResult<Vec<Expr>> {
        let mut args = Vec::new();
        if !self.is_punct(")") {
            loop {
                args.push(self.assignment()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        Ok(args)
    }

    pub(super) fn postfix_ops(&mut self, mut e: Expr) -> PResult<Expr> {
        // A chain of postfix operators (`a[i][j]`, `p->next->next`, `f()()`) nests the way a
        // binary chain does: bounded the same way, on its own count.
        let mut chain = 0usize;
        loop {
            if ["[", "(", ".", "->", "++", "--"].iter().any(|p| self.is_punct(p)) {
                chain += 1;
                if chain > MAX_EXPRESSION_OPERATORS {
                    return Err(self
                        .error_here(format!("this expression has more than {MAX_EXPRESSION_OPERATORS} operators"))
                        .with_help("split it into several statements"));
                }
            }
            if self.eat_punct("[") {
                let index = self.expression()?;
                self.expect_punct("]", "to close the subscript")?;
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Index { base: Box::new(e), index: Box::new(index) }, span };
            } else if self.eat_punct("(") {
                let args = self.arguments_until_close()?;
                self.expect_punct(")", "to close the argument list")?;
                let span = e.span.to(self.prev_span());
                if self.in_dialect() {
                    self.dialect_call(&e, span)?;
                }
                e = Expr { kind: ExprKind::Call { callee: Box::new(e), args }, span };
            } else if self.is_punct(".") || self.is_punct("->") {
                let arrow = self.bump().is_punct("->");
                let (field, _) = self.expect_ident(if arrow { "a member name after `->`" } else { "a member name after `.`" })?;
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Member { base: Box::new(e), field, arrow }, span };
            } else if self.is_punct("++") || self.is_punct("--") {
                let op = if self.bump().is_punct("++") { UnaryOp::PostInc } else { UnaryOp::PostDec };
                let span = e.span.to(self.prev_span());
                e = Expr { kind: ExprKind::Unary { op, operand: Box::new(e) }, span };
            } else {
                return Ok(e);
            }
        }
    }

    pub(super) fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        let span = t.span;
        let kind = match t.kind {
            TokKind::Ident(ref s) if matches!(s.as_str(), "__builtin_offsetof" | "__builtin_va_arg" | "__builtin_types_compatible_p") => {
                return self.builtin_with_type_argument(s.clone());
            }
            TokKind::Ident(ref s) if !KEYWORDS.contains(&s.as_str()) => {
                if self.is_typedef_name(s) {
                    return Err(self.error_here(format!("expected expression, found the type name `{s}`")));
                }
                self.bump();
                ExprKind::Ident(s.clone())
            }
            TokKind::Int { value, suffix, radix } => {
                self.bump();
                ExprKind::IntLit { value, suffix, radix }
            }
            TokKind::Float { value, single, long_double } => {
                self.bump();
                ExprKind::FloatLit { value, single, long_double }
            }
            TokKind::Imaginary { value, single, long_double } => {
                self.bump();
                ExprKind::ImagLit { value, single, long_double }
            }
            TokKind::Char(c) => {
                self.bump();
                ExprKind::CharLit(c)
            }
            TokKind::Str(_) => {
                let mut s = String::new();
                let mut end = span;
                while let TokKind::Str(part) = &self.peek().kind {
                    s.push_str(part);
                    end = self.bump().span;
                }
                return Ok(Expr { kind: ExprKind::StringLit(s), span: span.to(end) });
            }
            TokKind::Punct("(") => {
                self.bump();
                if self.is_punct("{") {
                    // GNU statement expression (glibc's `assert` expands to one).
                    self.block()?;
                    self.expect_punct(")", "to close the statement expression")?;
                    let span = span.to(self.prev_span());
                    return Ok(opaque_builtin(STMT_EXPR_CALLEE, Vec::new(), span));
                }
                let inner = self.expression()?;
                self.expect_punct(")", "to close the parenthesised expression")?;
                // The parentheses are part of the span so host code can be copied verbatim.
                return Ok(Expr { kind: inner.kind, span: span.to(self.prev_span()) });
            }
            _ => return Err(self.error_here("expected expression")),
        };
        Ok(Expr { kind, span })
    }
}

/// The callee name standing for a GNU statement expression `({ ... })`: the tree keeps it as
/// a call with no arguments (its span covers the whole expression, so host code copied by span
/// is unchanged; a kernel cannot call it).
pub const STMT_EXPR_CALLEE: &str = "__builtin_stmt_expr";

/// A call to a compiler builtin whose arguments are not all expressions (they take types), kept
/// as a call with the expression arguments only.
fn opaque_builtin(name: &str, args: Vec<Expr>, span: Span) -> Expr {
    let callee = Expr { kind: ExprKind::Ident(name.to_string()), span };
    Expr { kind: ExprKind::Call { callee: Box::new(callee), args }, span }
}

impl Parser<'_> {
    /// `__builtin_offsetof(type, member.designator[i])`, `__builtin_va_arg(ap, type)`,
    /// `__builtin_types_compatible_p(t1, t2)`: what `offsetof`, `va_arg` and friends expand to.
    pub(super) fn builtin_with_type_argument(&mut self, name: String) -> PResult<Expr> {
        let start = self.bump().span;
        self.expect_punct("(", &format!("after `{name}`"))?;
        let mut args = Vec::new();
        match name.as_str() {
            "__builtin_offsetof" => {
                self.type_name()?;
                self.expect_punct(",", "after the type in `offsetof`")?;
                self.expect_ident("a member name")?;
                loop {
                    if self.eat_punct(".") {
                        self.expect_ident("a member name")?;
                    } else if self.eat_punct("[") {
                        args.push(self.expression()?);
                        self.expect_punct("]", "to close the subscript")?;
                    } else {
                        break;
                    }
                }
            }
            "__builtin_va_arg" => {
                args.push(self.assignment()?);
                self.expect_punct(",", "after the `va_list` in `va_arg`")?;
                self.type_name()?;
            }
            _ => {
                self.type_name()?;
                self.expect_punct(",", "between the two types")?;
                self.type_name()?;
            }
        }
        self.expect_punct(")", &format!("to close `{name}(...)`"))?;
        let span = start.to(self.prev_span());
        let e = opaque_builtin(&name, args, span);
        self.postfix_ops(e)
    }
}
