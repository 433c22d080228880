//! Test-only builder for hand-made bodies and kernels (the analyses, the mapping pass, the
//! verifier and the IR text tests share it), so tests read like the C they stand for.

use crate::diag::Span;
use crate::ir::*;

/// A body under construction. Integer helpers build `I32` nodes, like C's `int`.
#[derive(Default)]
pub struct B {
    pub body: Body,
}

impl B {
    pub fn new() -> B {
        B { body: Body::default() }
    }
    pub fn add_expr(&mut self, kind: ExprKind, ty: ScalarType) -> Handle<Expr> {
        self.body.add_expr(kind, ty, Span::default())
    }
    pub fn int(&mut self, v: i64) -> Handle<Expr> {
        self.add_expr(ExprKind::ConstInt(v), ScalarType::I32)
    }
    pub fn float(&mut self, v: f64, ty: ScalarType) -> Handle<Expr> {
        self.add_expr(ExprKind::ConstFloat(v), ty)
    }
    pub fn param(&mut self, n: u32) -> Handle<Expr> {
        self.add_expr(ExprKind::Param(n), ScalarType::I32)
    }
    pub fn new_local(&mut self, name: &str, ty: ScalarType, kind: LocalKind) -> Handle<Local> {
        self.body.locals.append(Local { name: name.to_string(), ty, array_dims: None, kind, span: Span::default() })
    }
    pub fn loop_var(&mut self, name: &str) -> Handle<Local> {
        self.new_local(name, ScalarType::I32, LocalKind::LoopIndex)
    }
    pub fn local(&mut self, l: Handle<Local>) -> Handle<Expr> {
        let ty = self.body.locals[l].ty;
        self.add_expr(ExprKind::Local(l), ty)
    }
    pub fn bin(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        let ty = match op {
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
            | BinaryOp::LogAnd | BinaryOp::LogOr => ScalarType::Bool,
            _ => self.body.exprs[lhs].ty,
        };
        self.add_expr(ExprKind::Binary { op, lhs, rhs }, ty)
    }
    pub fn add(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.bin(BinaryOp::Add, lhs, rhs)
    }
    pub fn mul(&mut self, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.bin(BinaryOp::Mul, lhs, rhs)
    }
    /// `local + c` (or just the local when `c == 0`).
    pub fn var_plus(&mut self, l: Handle<Local>, c: i64) -> Handle<Expr> {
        let v = self.local(l);
        if c == 0 {
            return v;
        }
        let k = self.int(c.abs());
        self.bin(if c > 0 { BinaryOp::Add } else { BinaryOp::Sub }, v, k)
    }
    pub fn select(&mut self, cond: Handle<Expr>, then: Handle<Expr>, otherwise: Handle<Expr>) -> Handle<Expr> {
        let ty = self.body.exprs[then].ty;
        self.add_expr(ExprKind::Select { cond, then, otherwise }, ty)
    }
    pub fn cast(&mut self, arg: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        self.add_expr(ExprKind::Cast { arg }, ty)
    }
    pub fn load(&mut self, param: u32, indices: Vec<Handle<Expr>>) -> Handle<Expr> {
        self.add_expr(ExprKind::Load { array: ArrayRef::Param(param), indices }, ScalarType::F64)
    }
    pub fn store(&mut self, param: u32, indices: Vec<Handle<Expr>>, value: Handle<Expr>) -> Stmt {
        Stmt::Store { array: ArrayRef::Param(param), indices, value, span: Span::default() }
    }
    /// A counted loop `for (var = start; var < end; var += step) body` with its range.
    pub fn counted_loop(&mut self, var: Handle<Local>, start: Handle<Expr>, end: Handle<Expr>, body: Block) -> Vec<Stmt> {
        let v = self.local(var);
        let cond = self.bin(BinaryOp::Lt, v, end);
        let one = self.int(1);
        let next = self.add(v, one);
        vec![
            Stmt::Assign { local: var, value: start },
            Stmt::Loop {
                cond: Some(cond),
                test_first: true,
                body,
                continuing: vec![Stmt::Assign { local: var, value: next }],
                range: Some(LoopRange { var, start, end, step: 1 }),
            },
        ]
    }
    /// A parallel dim `var` in `start..start+trip`, step 1.
    pub fn dim(&mut self, var: Handle<Local>, start: Handle<Expr>, trip: Handle<Expr>) -> ParallelDim {
        ParallelDim { var, start, trip_count: trip, step: 1, level: LoopLevel::Auto, size_hint: None, gang_dim: None, span: Span::default() }
    }
}

pub fn scalar_param(name: &str, arg: u32) -> Param {
    Param { name: name.to_string(), kind: ParamKind::Scalar(ScalarType::I32), arg }
}

pub fn array_param(name: &str, dims: Vec<Option<Handle<Expr>>>, arg: u32) -> Param {
    Param {
        name: name.to_string(),
        kind: ParamKind::Array { elem: ScalarType::F64, dims, restrict: false, read_only: false },
        arg,
    }
}

pub fn kernel(name: &str, params: Vec<Param>, space: Vec<ParallelDim>, body: Body) -> Kernel {
    Kernel {
        name: name.to_string(),
        span: Span::default(),
        params,
        space,
        body,
        reductions: Vec::new(),
        scalar_outputs: Vec::new(),
        sequential_reason: None,
        auto_private: Vec::new(),
        implicit: Vec::new(),
        inner_sequential: Vec::new(),
        num_gangs: Vec::new(),
        partitions: Vec::new(),
        explicit_grid: None,
    }
}
