//! Generic walks over the syntax tree the host back end needs: every expression of a block,
//! statement, declaration, initializer or expression, in source order.

use super::*;

pub(super) fn visit_block_exprs(block: &ast::Block, f: &mut dyn FnMut(&ast::Expr)) {
    for s in &block.stmts {
        visit_stmt_exprs(s, f);
    }
}

pub(super) fn visit_stmt_exprs(stmt: &ast::Stmt, f: &mut dyn FnMut(&ast::Expr)) {
    match &stmt.kind {
        StmtKind::Compound(b) => visit_block_exprs(b, f),
        StmtKind::Expr(e) => {
            if let Some(e) = e {
                visit_expr(e, f)
            }
        }
        StmtKind::Decl(d) => visit_decl_exprs(d, f),
        StmtKind::If { cond, then, otherwise } => {
            visit_expr(cond, f);
            visit_stmt_exprs(then, f);
            if let Some(o) = otherwise {
                visit_stmt_exprs(o, f);
            }
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } | StmtKind::Switch { cond, body } => {
            visit_expr(cond, f);
            visit_stmt_exprs(body, f);
        }
        StmtKind::For { init, cond, step, body } => {
            match init {
                Some(ForInit::Decl(d)) => visit_decl_exprs(d, f),
                Some(ForInit::Expr(e)) => visit_expr(e, f),
                None => {}
            }
            for e in [cond, step].into_iter().flatten() {
                visit_expr(e, f);
            }
            visit_stmt_exprs(body, f);
        }
        StmtKind::Case { value, body } => {
            visit_expr(value, f);
            visit_stmt_exprs(body, f);
        }
        StmtKind::Default { body } | StmtKind::Labeled { body, .. } => visit_stmt_exprs(body, f),
        StmtKind::Return(Some(e)) => visit_expr(e, f),
        StmtKind::Acc { body: Some(b), .. } => visit_stmt_exprs(b, f),
        StmtKind::Goto(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::Acc { .. } => {}
    }
}

pub(super) fn visit_decl_exprs(d: &Declaration, f: &mut dyn FnMut(&ast::Expr)) {
    for init in &d.declarators {
        if let Some(i) = &init.init {
            visit_init_exprs(i, f);
        }
    }
}

pub(super) fn visit_init_exprs(i: &Initializer, f: &mut dyn FnMut(&ast::Expr)) {
    match i {
        Initializer::Expr(e) => visit_expr(e, f),
        Initializer::List(items, _) => {
            for (_, i) in items {
                visit_init_exprs(i, f);
            }
        }
    }
}

/// Every expression of a translation unit's function bodies and file-scope initialisers, in
/// order of the text (pre-order).
pub(crate) fn visit_unit_exprs(unit: &TranslationUnit, f: &mut dyn FnMut(&ast::Expr)) {
    for item in &unit.items {
        match item {
            ExternalDecl::Function(function) => visit_block_exprs(&function.body, f),
            ExternalDecl::Declaration(d) => visit_decl_exprs(d, f),
            ExternalDecl::Directive(_) => {}
        }
    }
}

/// Pre-order walk of an expression and its subexpressions.
pub(super) fn visit_expr(e: &ast::Expr, f: &mut dyn FnMut(&ast::Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { operand, .. } => visit_expr(operand, f),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Assign { lhs, rhs, .. } => {
            visit_expr(lhs, f);
            visit_expr(rhs, f);
        }
        ExprKind::Conditional { cond, then, otherwise } => {
            visit_expr(cond, f);
            visit_expr(then, f);
            visit_expr(otherwise, f);
        }
        ExprKind::Cast { expr, .. } | ExprKind::SizeofExpr(expr) => visit_expr(expr, f),
        ExprKind::Call { callee, args } => {
            visit_expr(callee, f);
            for a in args {
                visit_expr(a, f);
            }
        }
        ExprKind::Index { base, index } => {
            visit_expr(base, f);
            visit_expr(index, f);
        }
        ExprKind::Member { base, .. } => visit_expr(base, f),
        ExprKind::CompoundLiteral { init, .. } => visit_init_exprs(init, f),
        ExprKind::Ident(_)
        | ExprKind::IntLit { .. }
        | ExprKind::FloatLit { .. }
        | ExprKind::ImagLit { .. }
        | ExprKind::CharLit(_)
        | ExprKind::StringLit(_)
        | ExprKind::SizeofType(_) => {}
    }
}
