//! Constant folding: every expression whose operands are all constants becomes a constant.
//! Lowering and mapping build trip counts and grid sizes generically (`max(0, (64 - 1) - 1)`);
//! folding makes the IR listing, `explain` and the emitted CUDA read like what the user wrote,
//! and gives the CUDA compiler literal bounds. Values follow C's rules at each node's type
//! (the evaluator is the one the runtime uses for launch sizes), so folding never changes a
//! result. Calls of math functions are left alone: the device's library decides those.

use crate::analysis::uniform::eval_uniform;
use crate::ir::{Body, ExprKind, Handle, Module, ParamValue};

/// Folds the bodies of every kernel, grid kernel and device function.
pub fn fold_module(module: &mut Module) {
    let kernels: Vec<_> = module.kernels.iter().map(|(h, _)| h).collect();
    for h in kernels {
        fold_body(&mut module.kernels[h].body);
    }
    let grids: Vec<_> = module.grid_kernels.iter().map(|(h, _)| h).collect();
    for h in grids {
        fold_body(&mut module.grid_kernels[h].body);
    }
    let functions: Vec<_> = module.functions.iter().map(|(h, _)| h).collect();
    for h in functions {
        fold_body(&mut module.functions[h].body);
    }
}

/// Replaces, in place, each foldable expression by its constant. Handles stay valid; operands
/// that became unused stay in the arena (nothing refers to them).
pub fn fold_body(body: &mut Body) {
    // Operands are usually appended before their users, so one pass in arena order folds most
    // trees; repeat until nothing changes for the rest.
    loop {
        let mut changed = false;
        let handles: Vec<Handle<crate::ir::Expr>> = body.exprs.iter().map(|(h, _)| h).collect();
        for h in handles {
            if !operands_constant(body, h) {
                continue;
            }
            let kind = match eval_uniform(body, h, &[]) {
                Ok(ParamValue::Int(v)) => ExprKind::ConstInt(v),
                Ok(ParamValue::Float(v)) => ExprKind::ConstFloat(v),
                _ => continue,
            };
            body.exprs[h].kind = kind;
            changed = true;
        }
        if !changed {
            return;
        }
    }
}

/// An operator node all of whose operands are constants (constants themselves are not
/// "foldable": they are done).
fn operands_constant(body: &Body, h: Handle<crate::ir::Expr>) -> bool {
    let is_const = |e: Handle<crate::ir::Expr>| matches!(body.exprs[e].kind, ExprKind::ConstInt(_) | ExprKind::ConstFloat(_));
    match &body.exprs[h].kind {
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => is_const(*arg),
        ExprKind::Binary { lhs, rhs, .. } => is_const(*lhs) && is_const(*rhs),
        ExprKind::Select { cond, then, otherwise } => is_const(*cond) && is_const(*then) && is_const(*otherwise),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::ir::{BinaryOp, ScalarType};

    fn int(body: &mut Body, v: i64, ty: ScalarType) -> Handle<crate::ir::Expr> {
        body.add_expr(ExprKind::ConstInt(v), ty, Span::default())
    }

    #[test]
    fn nested_constant_trip_count_folds_to_one_literal() {
        // max(0, (long long)(64 - 1) - 1)
        let mut body = Body::default();
        let a = int(&mut body, 64, ScalarType::I32);
        let b = int(&mut body, 1, ScalarType::I32);
        let sub = body.add_expr(ExprKind::Binary { op: BinaryOp::Sub, lhs: a, rhs: b }, ScalarType::I32, Span::default());
        let cast = body.add_expr(ExprKind::Cast { arg: sub }, ScalarType::I64, Span::default());
        let one = int(&mut body, 1, ScalarType::I64);
        let sub2 = body.add_expr(ExprKind::Binary { op: BinaryOp::Sub, lhs: cast, rhs: one }, ScalarType::I64, Span::default());
        let zero = int(&mut body, 0, ScalarType::I64);
        let max = body.add_expr(ExprKind::Binary { op: BinaryOp::Max, lhs: zero, rhs: sub2 }, ScalarType::I64, Span::default());
        fold_body(&mut body);
        assert_eq!(body.exprs[max].kind, ExprKind::ConstInt(62));
    }

    #[test]
    fn folding_keeps_c_semantics_and_leaves_params_and_errors_alone() {
        let mut body = Body::default();
        // (int)2147483647 + 1 wraps to INT_MIN at type int.
        let big = int(&mut body, i32::MAX as i64, ScalarType::I32);
        let one = int(&mut body, 1, ScalarType::I32);
        let wrap = body.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: big, rhs: one }, ScalarType::I32, Span::default());
        // 1 / 0 is not folded (the program faults at run time, as the sequential one does).
        let zero = int(&mut body, 0, ScalarType::I32);
        let div = body.add_expr(ExprKind::Binary { op: BinaryOp::Div, lhs: one, rhs: zero }, ScalarType::I32, Span::default());
        // n + 1 (n a param) stays.
        let n = body.add_expr(ExprKind::Param(0), ScalarType::I32, Span::default());
        let add = body.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: n, rhs: one }, ScalarType::I32, Span::default());
        // 0.1f * 3.0f rounds at float.
        let a = body.add_expr(ExprKind::ConstFloat(0.1f32 as f64), ScalarType::F32, Span::default());
        let b = body.add_expr(ExprKind::ConstFloat(3.0), ScalarType::F32, Span::default());
        let mul = body.add_expr(ExprKind::Binary { op: BinaryOp::Mul, lhs: a, rhs: b }, ScalarType::F32, Span::default());
        fold_body(&mut body);
        assert_eq!(body.exprs[wrap].kind, ExprKind::ConstInt(i32::MIN as i64));
        assert!(matches!(body.exprs[div].kind, ExprKind::Binary { .. }));
        assert!(matches!(body.exprs[add].kind, ExprKind::Binary { .. }));
        assert_eq!(body.exprs[mul].kind, ExprKind::ConstFloat((0.1f32 * 3.0f32) as f64));
    }
}
