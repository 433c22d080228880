//! Walks over the syntax tree the host back end needs: every expression of a block,
//! statement, declaration, initializer or expression, in source order (pre-order). They are the
//! front end's walks (`front::lower::walk`), taken at the shapes the emitter holds.

use super::*;
use crate::front::lower::walk;

pub(super) fn visit_block_exprs(block: &ast::Block, f: &mut dyn FnMut(&ast::Expr)) {
    for s in &block.stmts {
        visit_stmt_exprs(s, f);
    }
}

pub(super) fn visit_stmt_exprs(stmt: &ast::Stmt, f: &mut dyn FnMut(&ast::Expr)) {
    walk::each_expr(stmt, &mut |e| f(e));
}

pub(super) fn visit_decl_exprs(d: &Declaration, f: &mut dyn FnMut(&ast::Expr)) {
    for init in &d.declarators {
        if let Some(i) = &init.init {
            visit_init_exprs(i, f);
        }
    }
}

pub(super) fn visit_init_exprs(i: &Initializer, f: &mut dyn FnMut(&ast::Expr)) {
    walk::init_tree(i, &mut |e| f(e));
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
    walk::expr_tree(e, &mut |e| f(e));
}
