//! Evaluation of *uniform* expressions: those made only of constants and scalar params, the same
//! for every thread of a launch (trip counts, starts, array dimensions, grid sizes). The runtime
//! evaluates them with the launch's [`ParamValue`]s before it starts a kernel.
//!
//! The arithmetic is C's at the node's [`ScalarType`]: integers wrap to their width, `F32`
//! values are rounded to single precision after every operation, integer division truncates
//! toward zero. What C leaves undefined (division by zero, shifts by the width or more,
//! out-of-range float-to-int conversion) is an `Err`, as is anything that is not uniform
//! (locals, loads, thread indices, calls).
//!
//! Values: integers and `Bool` are `ParamValue::Int`, holding the value sign-extended (signed
//! types) or zero-extended (unsigned types) — `U64` holds its bit pattern; floats are
//! `ParamValue::Float`.

use crate::ir::{BinaryOp, Body, Expr, ExprKind, Handle, MathFn, ParamValue, ScalarType, UnaryOp};

/// Evaluates `expr` (an expression of `body`'s arena) with the launch's param values.
pub fn eval_uniform(body: &Body, expr: Handle<Expr>, params: &[ParamValue]) -> Result<ParamValue, String> {
    Evaluator { body, params }.eval(expr)
}

/// Evaluates a uniform integer expression to an `i64` (floats are an error).
pub fn eval_uniform_int(body: &Body, expr: Handle<Expr>, params: &[ParamValue]) -> Result<i64, String> {
    match eval_uniform(body, expr, params)? {
        ParamValue::Int(v) => Ok(v),
        other => Err(format!("expected an integer value, got {other:?}")),
    }
}

/// Truncates/extends `v` to the width and signedness of the integer type `ty`.
pub fn wrap_int(v: i64, ty: ScalarType) -> i64 {
    match ty {
        ScalarType::Bool => (v != 0) as i64,
        ScalarType::I8 => v as i8 as i64,
        ScalarType::U8 => v as u8 as i64,
        ScalarType::I16 => v as i16 as i64,
        ScalarType::U16 => v as u16 as i64,
        ScalarType::I32 => v as i32 as i64,
        ScalarType::U32 => v as u32 as i64,
        ScalarType::I64 | ScalarType::U64 | ScalarType::F32 | ScalarType::F64 | ScalarType::F80 => v,
    }
}

fn round_float(v: f64, ty: ScalarType) -> f64 {
    if ty == ScalarType::F32 { v as f32 as f64 } else { v }
}

fn truthy(v: ParamValue) -> Result<bool, String> {
    match v {
        ParamValue::Int(i) => Ok(i != 0),
        ParamValue::Float(f) => Ok(f != 0.0),
        ParamValue::Pointer(_) => Err("a pointer is not a uniform scalar".to_string()),
    }
}

/// C's conversion of `v` (of type `from`) to type `to`.
fn convert(v: ParamValue, from: ScalarType, to: ScalarType) -> Result<ParamValue, String> {
    match v {
        ParamValue::Pointer(_) => Err("a pointer is not a uniform scalar".to_string()),
        ParamValue::Int(i) => {
            if to.is_float() {
                let f = if from.is_signed() || from == ScalarType::Bool || from.is_float() {
                    i as f64
                } else {
                    i as u64 as f64
                };
                Ok(ParamValue::Float(round_float(f, to)))
            } else {
                Ok(ParamValue::Int(wrap_int(i, to)))
            }
        }
        ParamValue::Float(f) => {
            if to.is_float() {
                Ok(ParamValue::Float(round_float(f, to)))
            } else if to == ScalarType::Bool {
                Ok(ParamValue::Int((f != 0.0) as i64))
            } else {
                let t = f.trunc();
                let in_range = if to.is_signed() {
                    let bits = to.size_bytes() * 8;
                    let lim = 2f64.powi(bits as i32 - 1);
                    t >= -lim && t < lim
                } else {
                    let bits = to.size_bytes() * 8;
                    t >= 0.0 && t < 2f64.powi(bits as i32)
                };
                if !in_range || f.is_nan() {
                    return Err(format!("{f} does not fit in {}", to.c_name()));
                }
                let i = if to.is_signed() { t as i64 } else { t as u64 as i64 };
                Ok(ParamValue::Int(wrap_int(i, to)))
            }
        }
    }
}

struct Evaluator<'a> {
    body: &'a Body,
    params: &'a [ParamValue],
}

impl Evaluator<'_> {
    fn eval(&self, h: Handle<Expr>) -> Result<ParamValue, String> {
        if h.index() >= self.body.exprs.len() {
            return Err(format!("expression {h:?} is out of range"));
        }
        let e = &self.body.exprs[h];
        let ty = e.ty;
        match &e.kind {
            ExprKind::ConstInt(v) => convert(ParamValue::Int(*v), ScalarType::I64, ty).map(|v| match v {
                ParamValue::Int(i) => ParamValue::Int(wrap_int(i, ty)),
                other => other,
            }),
            ExprKind::ConstFloat(f) => {
                if ty.is_float() {
                    Ok(ParamValue::Float(round_float(*f, ty)))
                } else {
                    convert(ParamValue::Float(*f), ScalarType::F64, ty)
                }
            }
            ExprKind::Param(n) => {
                let v = *self.params.get(*n as usize).ok_or_else(|| format!("param {n} has no value"))?;
                let from = match v {
                    ParamValue::Int(_) => ScalarType::I64,
                    ParamValue::Float(_) => ScalarType::F64,
                    ParamValue::Pointer(_) => return Err(format!("param {n} is a pointer, not a scalar")),
                };
                convert(v, from, ty)
            }
            ExprKind::Local(_) => Err("a local variable is not uniform".to_string()),
            ExprKind::Load { .. } => Err("a load from memory is not uniform".to_string()),
            ExprKind::Call { .. } => Err("a function call is not uniform".to_string()),
            ExprKind::ThreadIdx(_) | ExprKind::BlockIdx(_) | ExprKind::BlockDim(_) | ExprKind::GridDim(_) => {
                Err("a thread or block index is not uniform".to_string())
            }
            ExprKind::Cast { arg } => {
                let from = self.body.exprs[*arg].ty;
                convert(self.eval(*arg)?, from, ty)
            }
            ExprKind::Select { cond, then, otherwise } => {
                let pick = if truthy(self.eval(*cond)?)? { *then } else { *otherwise };
                let from = self.body.exprs[pick].ty;
                convert(self.eval(pick)?, from, ty)
            }
            ExprKind::Unary { op, arg } => {
                let v = self.eval(*arg)?;
                let arg_ty = self.body.exprs[*arg].ty;
                match op {
                    UnaryOp::Not => Ok(ParamValue::Int(!truthy(v)? as i64)),
                    UnaryOp::Neg => match v {
                        ParamValue::Int(i) => Ok(ParamValue::Int(wrap_int(i.wrapping_neg(), ty))),
                        ParamValue::Float(f) => Ok(ParamValue::Float(round_float(-f, ty))),
                        ParamValue::Pointer(_) => Err("a pointer is not a uniform scalar".to_string()),
                    },
                    UnaryOp::BitNot => match v {
                        ParamValue::Int(i) if !arg_ty.is_float() => Ok(ParamValue::Int(wrap_int(!i, ty))),
                        _ => Err("`~` needs an integer operand".to_string()),
                    },
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs, ty),
            ExprKind::Math { func, args } => self.math(*func, args, ty),
        }
    }

    fn binary(&self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>, ty: ScalarType) -> Result<ParamValue, String> {
        // Short circuit first: the right operand may be undefined where the left decides.
        if matches!(op, BinaryOp::LogAnd | BinaryOp::LogOr) {
            let l = truthy(self.eval(lhs)?)?;
            if (op == BinaryOp::LogAnd && !l) || (op == BinaryOp::LogOr && l) {
                return Ok(ParamValue::Int(l as i64));
            }
            return Ok(ParamValue::Int(truthy(self.eval(rhs)?)? as i64));
        }
        let operand_ty = self.body.exprs[lhs].ty;
        let l = self.eval(lhs)?;
        let r = self.eval(rhs)?;
        let is_cmp = matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne);
        match (l, r) {
            (ParamValue::Float(a), ParamValue::Float(b)) => {
                if is_cmp {
                    return Ok(ParamValue::Int(compare(op, a.partial_cmp(&b)) as i64));
                }
                let v = match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    BinaryOp::Div => a / b,
                    BinaryOp::Max => a.max(b),
                    BinaryOp::Min => a.min(b),
                    other => return Err(format!("{other:?} is not defined on floating-point operands")),
                };
                Ok(ParamValue::Float(round_float(v, ty)))
            }
            (ParamValue::Int(a), ParamValue::Int(b)) => {
                let unsigned = !operand_ty.is_signed() && operand_ty != ScalarType::Bool;
                if is_cmp {
                    let ord = if unsigned { (a as u64).partial_cmp(&(b as u64)) } else { a.partial_cmp(&b) };
                    return Ok(ParamValue::Int(compare(op, ord) as i64));
                }
                let width = operand_ty.size_bytes() * 8;
                let v = match op {
                    BinaryOp::Add => a.wrapping_add(b),
                    BinaryOp::Sub => a.wrapping_sub(b),
                    BinaryOp::Mul => a.wrapping_mul(b),
                    BinaryOp::Div | BinaryOp::Rem => {
                        if b == 0 {
                            return Err("division by zero".to_string());
                        }
                        match (op, unsigned) {
                            (BinaryOp::Div, true) => ((a as u64) / (b as u64)) as i64,
                            (BinaryOp::Div, false) => a.wrapping_div(b),
                            (_, true) => ((a as u64) % (b as u64)) as i64,
                            (_, false) => a.wrapping_rem(b),
                        }
                    }
                    BinaryOp::Shl | BinaryOp::Shr => {
                        if b < 0 || b >= width as i64 {
                            return Err(format!("shift by {b} is undefined for a {width}-bit operand"));
                        }
                        match (op, unsigned) {
                            (BinaryOp::Shl, _) => a.wrapping_shl(b as u32),
                            (_, true) => ((a as u64) >> b) as i64,
                            (_, false) => a >> b,
                        }
                    }
                    BinaryOp::BitAnd => a & b,
                    BinaryOp::BitOr => a | b,
                    BinaryOp::BitXor => a ^ b,
                    BinaryOp::Max => {
                        if unsigned { (a as u64).max(b as u64) as i64 } else { a.max(b) }
                    }
                    BinaryOp::Min => {
                        if unsigned { (a as u64).min(b as u64) as i64 } else { a.min(b) }
                    }
                    _ => unreachable_binary(op)?,
                };
                Ok(ParamValue::Int(wrap_int(v, ty)))
            }
            _ => Err(format!("operands of {op:?} have different kinds")),
        }
    }

    fn math(&self, func: MathFn, args: &[Handle<Expr>], ty: ScalarType) -> Result<ParamValue, String> {
        let vals = args.iter().map(|a| self.eval(*a)).collect::<Result<Vec<_>, _>>()?;
        if func == MathFn::Abs {
            return match vals.as_slice() {
                [ParamValue::Int(i)] => Ok(ParamValue::Int(wrap_int(i.wrapping_abs(), ty))),
                _ => Err("abs needs one integer argument".to_string()),
            };
        }
        let fs = vals
            .iter()
            .map(|v| match v {
                ParamValue::Float(f) => Ok(*f),
                ParamValue::Int(i) => Ok(*i as f64),
                ParamValue::Pointer(_) => Err("a pointer is not a uniform scalar".to_string()),
            })
            .collect::<Result<Vec<f64>, String>>()?;
        let one = |f: fn(f64) -> f64| -> Result<f64, String> {
            match fs.as_slice() {
                [x] => Ok(f(*x)),
                _ => Err(format!("{func:?} takes one argument")),
            }
        };
        let two = |f: fn(f64, f64) -> f64| -> Result<f64, String> {
            match fs.as_slice() {
                [x, y] => Ok(f(*x, *y)),
                _ => Err(format!("{func:?} takes two arguments")),
            }
        };
        let v = match func {
            MathFn::Sqrt => one(f64::sqrt)?,
            MathFn::Cbrt => one(f64::cbrt)?,
            MathFn::Exp => one(f64::exp)?,
            MathFn::Exp2 => one(f64::exp2)?,
            MathFn::Expm1 => one(f64::exp_m1)?,
            MathFn::Log => one(f64::ln)?,
            MathFn::Log2 => one(f64::log2)?,
            MathFn::Log10 => one(f64::log10)?,
            MathFn::Log1p => one(f64::ln_1p)?,
            MathFn::Pow => two(f64::powf)?,
            MathFn::Sin => one(f64::sin)?,
            MathFn::Cos => one(f64::cos)?,
            MathFn::Tan => one(f64::tan)?,
            MathFn::Asin => one(f64::asin)?,
            MathFn::Acos => one(f64::acos)?,
            MathFn::Atan => one(f64::atan)?,
            MathFn::Atan2 => two(f64::atan2)?,
            MathFn::Sinh => one(f64::sinh)?,
            MathFn::Cosh => one(f64::cosh)?,
            MathFn::Tanh => one(f64::tanh)?,
            MathFn::Fabs => one(f64::abs)?,
            MathFn::Floor => one(f64::floor)?,
            MathFn::Ceil => one(f64::ceil)?,
            MathFn::Round => one(f64::round)?,
            MathFn::Trunc => one(f64::trunc)?,
            MathFn::Fmod => two(|x, y| x % y)?,
            MathFn::Fmin => two(f64::min)?,
            MathFn::Fmax => two(f64::max)?,
            MathFn::Hypot => two(f64::hypot)?,
            MathFn::Copysign => two(f64::copysign)?,
            MathFn::Erf | MathFn::Abs => return Err(format!("{func:?} is not evaluated at launch")),
        };
        Ok(ParamValue::Float(round_float(v, ty)))
    }
}

fn unreachable_binary(op: BinaryOp) -> Result<i64, String> {
    Err(format!("{op:?} is not an arithmetic operator"))
}

fn compare(op: BinaryOp, ord: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    match (op, ord) {
        (BinaryOp::Ne, None) => true,
        (_, None) => false,
        (BinaryOp::Lt, Some(o)) => o == Less,
        (BinaryOp::Le, Some(o)) => o != Greater,
        (BinaryOp::Gt, Some(o)) => o == Greater,
        (BinaryOp::Ge, Some(o)) => o != Less,
        (BinaryOp::Eq, Some(o)) => o == Equal,
        (BinaryOp::Ne, Some(o)) => o != Equal,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::B;

    #[test]
    fn int_arithmetic_wraps_at_the_node_width() {
        let mut b = B::new();
        let big = b.int(i32::MAX as i64);
        let one = b.int(1);
        let sum = b.bin(BinaryOp::Add, big, one);
        assert_eq!(eval_uniform(&b.body, sum, &[]), Ok(ParamValue::Int(i32::MIN as i64)));
    }

    #[test]
    fn division_truncates_toward_zero_and_zero_divisor_is_an_error() {
        let mut b = B::new();
        let m7 = b.int(-7);
        let two = b.int(2);
        let q = b.bin(BinaryOp::Div, m7, two);
        let r = b.bin(BinaryOp::Rem, m7, two);
        assert_eq!(eval_uniform(&b.body, q, &[]), Ok(ParamValue::Int(-3)));
        assert_eq!(eval_uniform(&b.body, r, &[]), Ok(ParamValue::Int(-1)));
        let zero = b.int(0);
        let bad = b.bin(BinaryOp::Div, m7, zero);
        assert!(eval_uniform(&b.body, bad, &[]).unwrap_err().contains("division by zero"));
    }

    #[test]
    fn params_casts_and_select() {
        let mut b = B::new();
        let n = b.param(0);
        let one = b.int(1);
        let nm1 = b.bin(BinaryOp::Sub, n, one);
        let zero = b.int(0);
        let pos = b.bin(BinaryOp::Gt, nm1, zero);
        let sel = b.select(pos, nm1, zero);
        let f = b.cast(sel, ScalarType::F32);
        let third = b.float(1.0 / 3.0, ScalarType::F32);
        let sum = b.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: f, rhs: third }, ScalarType::F32);
        assert_eq!(eval_uniform(&b.body, sel, &[ParamValue::Int(10)]), Ok(ParamValue::Int(9)));
        assert_eq!(eval_uniform(&b.body, sel, &[ParamValue::Int(0)]), Ok(ParamValue::Int(0)));
        let expected = (9.0f32 + (1.0f64 / 3.0) as f32) as f64;
        assert_eq!(eval_uniform(&b.body, sum, &[ParamValue::Int(10)]), Ok(ParamValue::Float(expected)));
    }

    #[test]
    fn unsigned_comparison_and_shift() {
        let mut b = B::new();
        let m1 = b.add_expr(ExprKind::ConstInt(-1), ScalarType::U32);
        let one = b.add_expr(ExprKind::ConstInt(1), ScalarType::U32);
        let gt = b.add_expr(ExprKind::Binary { op: BinaryOp::Gt, lhs: m1, rhs: one }, ScalarType::Bool);
        let shr = b.add_expr(ExprKind::Binary { op: BinaryOp::Shr, lhs: m1, rhs: one }, ScalarType::U32);
        assert_eq!(eval_uniform(&b.body, gt, &[]), Ok(ParamValue::Int(1)));
        assert_eq!(eval_uniform(&b.body, shr, &[]), Ok(ParamValue::Int(0x7fff_ffff)));
    }

    #[test]
    fn non_uniform_expressions_are_errors() {
        let mut b = B::new();
        let i = b.loop_var("i");
        let ie = b.local(i);
        assert!(eval_uniform(&b.body, ie, &[]).is_err());
        let t = b.add_expr(ExprKind::ThreadIdx(crate::ir::Axis::X), ScalarType::I32);
        assert!(eval_uniform(&b.body, t, &[]).is_err());
    }

    mod agrees_with_the_simulator {
        use super::*;
        use crate::ir::value;
        use proptest::prelude::*;

        const OPS: [BinaryOp; 17] = [
            BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Rem, BinaryOp::Shl, BinaryOp::Shr,
            BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt,
            BinaryOp::Ge, BinaryOp::Eq, BinaryOp::Max, BinaryOp::Min,
        ];
        const TYPES: [ScalarType; 4] = [ScalarType::I32, ScalarType::U32, ScalarType::I64, ScalarType::U64];

        proptest! {
            /// Trip counts are evaluated here (sections) and in the simulator (grid sizes): the
            /// two must agree wherever C defines the result.
            #[test]
            fn integer_binary_ops(op in 0usize..OPS.len(), ty in 0usize..TYPES.len(),
                                  a in prop_oneof![-40i64..40, any::<i64>()], b in prop_oneof![-40i64..40, 0i64..64, any::<i64>()]) {
                let (op, ty) = (OPS[op], TYPES[ty]);
                let mut bld = B::new();
                let lhs = bld.add_expr(ExprKind::ConstInt(wrap_int(a, ty)), ty);
                let rhs = bld.add_expr(ExprKind::ConstInt(wrap_int(b, ty)), ty);
                let is_cmp = matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq);
                let result_ty = if is_cmp { ScalarType::Bool } else { ty };
                let e = bld.add_expr(ExprKind::Binary { op, lhs, rhs }, result_ty);
                let ours = eval_uniform(&bld.body, e, &[]);
                let theirs = value::binary(op, ty, result_ty, value::wrap_int(ty, a), value::wrap_int(ty, b));
                if let (Ok(ParamValue::Int(v)), Ok(raw)) = (ours.clone(), theirs) {
                    prop_assert_eq!(value::wrap_int(result_ty, v), raw, "{:?} {:?}", op, ty);
                }
                // Where one side refuses (division by zero, an oversized shift), so must the other.
                if matches!(op, BinaryOp::Div | BinaryOp::Rem) && wrap_int(b, ty) == 0 {
                    prop_assert!(ours.is_err());
                    prop_assert!(theirs.is_err());
                }
            }
        }
    }
}
