//! Scalar values with C semantics, shared by constant folding (the CUDA writer's literals), the
//! simulator and the runtime's reduction fold.
//! A value is a raw `u64`: integers are kept normalised to their type's width (signed ones
//! sign-extended, unsigned ones zero-extended, `Bool` is 0 or 1), floating values are `f64`
//! bits (an `F32` value is an `f64` holding an exactly representable `f32`; an `F80` value, the
//! host's `long double`, is an `f64` too: only its memory format differs, see [`f80`]).

pub mod f80;

use crate::ir::{AtomicOp, BinaryOp, ComplexPart, MathFn, ParamValue, ReductionOp, ScalarType, UnaryOp};

/// Wraps an integer to `ty`'s width (C's conversion to an integer type).
#[inline]
pub fn wrap_int(ty: ScalarType, v: i64) -> u64 {
    match ty {
        ScalarType::Bool => (v != 0) as u64,
        ScalarType::I8 => v as i8 as i64 as u64,
        ScalarType::U8 => v as u8 as u64,
        ScalarType::I16 => v as i16 as i64 as u64,
        ScalarType::U16 => v as u16 as u64,
        ScalarType::I32 => v as i32 as i64 as u64,
        ScalarType::U32 => v as u32 as u64,
        ScalarType::I64 | ScalarType::U64 => v as u64,
        ScalarType::F32 => from_f64(ScalarType::F32, v as f64),
        ScalarType::F64 | ScalarType::F80 => (v as f64).to_bits(),
    }
}

#[inline]
pub fn from_f64(ty: ScalarType, f: f64) -> u64 {
    match ty {
        ScalarType::F32 => (f as f32 as f64).to_bits(),
        ScalarType::F64 | ScalarType::F80 => f.to_bits(),
        _ => cast(ScalarType::F64, ty, f.to_bits()),
    }
}

#[inline]
pub fn as_f64(raw: u64) -> f64 {
    f64::from_bits(raw)
}

/// The raw value of a launch parameter of type `ty`.
pub fn from_param(ty: ScalarType, v: ParamValue) -> u64 {
    match v {
        ParamValue::Int(i) => wrap_int(ty, i),
        ParamValue::Float(f) => from_f64(ty, f),
        ParamValue::Pointer(p) => wrap_int(ty, p as i64),
    }
}

/// C's conversion of `raw` (of type `from`) to type `to`: float to int truncates.
#[inline]
pub fn cast(from: ScalarType, to: ScalarType, raw: u64) -> u64 {
    if from.is_float() {
        let f = as_f64(raw);
        match to {
            ScalarType::F32 | ScalarType::F64 | ScalarType::F80 => from_f64(to, f),
            ScalarType::Bool => (f != 0.0) as u64,
            ScalarType::U64 => f as u64,
            ScalarType::U32 => f as i64 as u32 as u64,
            t if t.is_signed() => wrap_int(t, f as i64),
            t => wrap_int(t, f as i64),
        }
    } else if to.is_float() {
        let f = if from == ScalarType::U64 { raw as f64 } else { raw as i64 as f64 };
        if to == ScalarType::F32 {
            // Round once, directly to f32 (going through f64 could round twice for 64-bit ints).
            let f32v = if from == ScalarType::U64 { raw as f32 } else { raw as i64 as f32 };
            (f32v as f64).to_bits()
        } else {
            f.to_bits()
        }
    } else {
        wrap_int(to, raw as i64)
    }
}

pub fn is_true(ty: ScalarType, raw: u64) -> bool {
    if ty.is_float() { as_f64(raw) != 0.0 } else { raw != 0 }
}

pub fn unary(op: UnaryOp, ty: ScalarType, arg_ty: ScalarType, a: u64) -> u64 {
    match op {
        UnaryOp::Not => (!is_true(arg_ty, a)) as u64,
        UnaryOp::Neg if ty.is_float() => from_f64(ty, -as_f64(a)),
        UnaryOp::Neg => wrap_int(ty, (a as i64).wrapping_neg()),
        UnaryOp::BitNot => wrap_int(ty, !(a as i64)),
    }
}

/// Why a binary operation has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithError {
    DivisionByZero,
    /// The most negative value divided by -1 (or its remainder): undefined in C, and a trap
    /// (SIGFPE) on x86, as gcc's build of the program shows.
    DivisionOverflow,
}

fn shift_amount(ty: ScalarType, b: u64) -> u32 {
    (b as u32) & (ty.size_bytes() * 8 - 1)
}

/// `a op b` where both operands have type `operand` and the result has type `result`
/// (`Bool` for comparisons). `LogAnd`/`LogOr` here see both values (short circuit is the
/// evaluator's business).
#[inline]
pub fn binary(op: BinaryOp, operand: ScalarType, result: ScalarType, a: u64, b: u64) -> Result<u64, ArithError> {
    use BinaryOp::*;
    if operand.is_float() {
        let (x, y) = (as_f64(a), as_f64(b));
        if operand == ScalarType::F32 && !matches!(op, Lt | Le | Gt | Ge | Eq | Ne | LogAnd | LogOr) {
            let (x, y) = (x as f32, y as f32);
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                Rem => x % y,
                Max => x.max(y),
                Min => x.min(y),
                _ => return Ok(cast(ScalarType::F32, result, binary(op, ScalarType::F64, ScalarType::F64, a, b)?)),
            };
            return Ok((r as f64).to_bits());
        }
        let r = match op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            Rem => x % y,
            Max => x.max(y),
            Min => x.min(y),
            Lt => return Ok((x < y) as u64),
            Le => return Ok((x <= y) as u64),
            Gt => return Ok((x > y) as u64),
            Ge => return Ok((x >= y) as u64),
            Eq => return Ok((x == y) as u64),
            Ne => return Ok((x != y) as u64),
            LogAnd => return Ok((x != 0.0 && y != 0.0) as u64),
            LogOr => return Ok((x != 0.0 || y != 0.0) as u64),
            // Bit operations on floats are refused by lowering; give the bits' combination.
            BitAnd | BitOr | BitXor | Shl | Shr => return Ok(a),
        };
        return Ok(from_f64(result, r));
    }
    let signed = operand.is_signed();
    let (sa, sb) = (a as i64, b as i64);
    let r: i64 = match op {
        Add => sa.wrapping_add(sb),
        Sub => sa.wrapping_sub(sb),
        Mul => sa.wrapping_mul(sb),
        Div | Rem => {
            if b == 0 {
                return Err(ArithError::DivisionByZero);
            }
            if signed && sb == -1 && sa == i64::MIN >> (64 - 8 * operand.size_bytes()) {
                return Err(ArithError::DivisionOverflow);
            }
            match (op, signed) {
                (Div, true) => sa.wrapping_div(sb),
                (Rem, true) => sa.wrapping_rem(sb),
                (Div, false) => (a / b) as i64,
                _ => (a % b) as i64,
            }
        }
        Shl => sa.wrapping_shl(shift_amount(operand, b)),
        Shr if signed => sa >> shift_amount(operand, b),
        Shr => (a >> shift_amount(operand, b)) as i64,
        BitAnd => sa & sb,
        BitOr => sa | sb,
        BitXor => sa ^ sb,
        Lt => return Ok(if signed { sa < sb } else { a < b } as u64),
        Le => return Ok(if signed { sa <= sb } else { a <= b } as u64),
        Gt => return Ok(if signed { sa > sb } else { a > b } as u64),
        Ge => return Ok(if signed { sa >= sb } else { a >= b } as u64),
        Eq => return Ok((a == b) as u64),
        Ne => return Ok((a != b) as u64),
        LogAnd => return Ok((a != 0 && b != 0) as u64),
        LogOr => return Ok((a != 0 || b != 0) as u64),
        Max => return Ok(if (signed && sa >= sb) || (!signed && a >= b) { a } else { b }),
        Min => return Ok(if (signed && sa <= sb) || (!signed && a <= b) { a } else { b }),
    };
    Ok(wrap_int(result, r))
}

unsafe extern "C" {
    fn erf(x: f64) -> f64;
    fn erff(x: f32) -> f32;
}

/// A `math.h` function at type `ty` (`sqrtf` for `F32`), through the system libm as the gcc
/// build of the program does.
pub fn math(func: MathFn, ty: ScalarType, args: &[u64]) -> u64 {
    if func == MathFn::Abs && !ty.is_float() {
        return wrap_int(ty, (args[0] as i64).wrapping_abs());
    }
    if ty == ScalarType::F32 {
        let x = as_f64(args[0]) as f32;
        let y = args.get(1).map(|&r| as_f64(r) as f32).unwrap_or(0.0);
        let r = match func {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Cbrt => x.cbrt(),
            MathFn::Exp => x.exp(),
            MathFn::Exp2 => x.exp2(),
            MathFn::Expm1 => x.exp_m1(),
            MathFn::Log => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Log10 => x.log10(),
            MathFn::Log1p => x.ln_1p(),
            MathFn::Pow => x.powf(y),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Asin => x.asin(),
            MathFn::Acos => x.acos(),
            MathFn::Atan => x.atan(),
            MathFn::Atan2 => x.atan2(y),
            MathFn::Sinh => x.sinh(),
            MathFn::Cosh => x.cosh(),
            MathFn::Tanh => x.tanh(),
            MathFn::Fabs | MathFn::Abs => x.abs(),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Round => x.round(),
            MathFn::Trunc => x.trunc(),
            MathFn::Fmod => x % y,
            MathFn::Fmin => x.min(y),
            MathFn::Fmax => x.max(y),
            MathFn::Hypot => x.hypot(y),
            MathFn::Copysign => x.copysign(y),
            // SAFETY: a pure libm function.
            MathFn::Erf => unsafe { erff(x) },
        };
        return (r as f64).to_bits();
    }
    let x = as_f64(args[0]);
    let y = args.get(1).map(|&r| as_f64(r)).unwrap_or(0.0);
    let r = match func {
        MathFn::Sqrt => x.sqrt(),
        MathFn::Cbrt => x.cbrt(),
        MathFn::Exp => x.exp(),
        MathFn::Exp2 => x.exp2(),
        MathFn::Expm1 => x.exp_m1(),
        MathFn::Log => x.ln(),
        MathFn::Log2 => x.log2(),
        MathFn::Log10 => x.log10(),
        MathFn::Log1p => x.ln_1p(),
        MathFn::Pow => x.powf(y),
        MathFn::Sin => x.sin(),
        MathFn::Cos => x.cos(),
        MathFn::Tan => x.tan(),
        MathFn::Asin => x.asin(),
        MathFn::Acos => x.acos(),
        MathFn::Atan => x.atan(),
        MathFn::Atan2 => x.atan2(y),
        MathFn::Sinh => x.sinh(),
        MathFn::Cosh => x.cosh(),
        MathFn::Tanh => x.tanh(),
        MathFn::Fabs | MathFn::Abs => x.abs(),
        MathFn::Floor => x.floor(),
        MathFn::Ceil => x.ceil(),
        MathFn::Round => x.round(),
        MathFn::Trunc => x.trunc(),
        MathFn::Fmod => x % y,
        MathFn::Fmin => x.min(y),
        MathFn::Fmax => x.max(y),
        MathFn::Hypot => x.hypot(y),
        MathFn::Copysign => x.copysign(y),
        // SAFETY: a pure libm function.
        MathFn::Erf => unsafe { erf(x) },
    };
    from_f64(ty, r)
}

/// The value an atomic update `op` leaves in an element of type `elem` that held `old`, for an
/// operand `v` of type `operand` (see `AtomicOp`: C's conversions, the result converted back).
pub fn atomic_update(op: AtomicOp, elem: ScalarType, operand: ScalarType, old: u64, v: u64) -> Result<u64, ArithError> {
    let Some(bin) = op.binary() else {
        return Ok(cast(operand, elem, v));
    };
    if matches!(bin, BinaryOp::LogAnd | BinaryOp::LogOr) {
        let (a, b) = (is_true(elem, old), is_true(operand, v));
        let r = if bin == BinaryOp::LogAnd { a && b } else { a || b };
        return Ok(cast(ScalarType::Bool, elem, r as u64));
    }
    let ct = op.compute_type(elem, operand);
    let (x, y) = (cast(elem, ct, old), cast(operand, ct, v));
    let (x, y) = if op.reversed() { (y, x) } else { (x, y) };
    Ok(cast(ct, elem, binary(bin, ct, ct, x, y)?))
}

/// Combines two values the way reduction `op` does.
pub fn reduce(op: ReductionOp, ty: ScalarType, a: u64, b: u64) -> u64 {
    let bin = match crate::ir::reduction_combiner(op) {
        BinaryOp::LogAnd => return cast(ScalarType::Bool, ty, (is_true(ty, a) && is_true(ty, b)) as u64),
        BinaryOp::LogOr => return cast(ScalarType::Bool, ty, (is_true(ty, a) || is_true(ty, b)) as u64),
        bin => bin,
    };
    binary(bin, ty, ty, a, b).unwrap_or(a)
}

/// The complex product `(a + bi)(c + di)` of parts of type `ty`: `(ac - bd) + (ad + bc)i`, each
/// operation rounded to `ty`, as kernels compute it (and as C does for finite values).
pub fn complex_mul(ty: ScalarType, (a, b): (u64, u64), (c, d): (u64, u64)) -> (u64, u64) {
    let op = |op: BinaryOp, x: u64, y: u64| binary(op, ty, ty, x, y).unwrap_or(x);
    let re = op(BinaryOp::Sub, op(BinaryOp::Mul, a, c), op(BinaryOp::Mul, b, d));
    let im = op(BinaryOp::Add, op(BinaryOp::Mul, a, d), op(BinaryOp::Mul, b, c));
    (re, im)
}

/// The identity of reduction `op` at type `ty` for a reduction or, `part`, one part of a
/// complex reduction: `1 + 0i` for a product, so its imaginary part starts at 0.
pub fn part_identity(op: ReductionOp, ty: ScalarType, part: Option<ComplexPart>) -> u64 {
    if op == ReductionOp::Mul && part == Some(ComplexPart::Imag) {
        return from_f64(ty, 0.0);
    }
    reduction_identity(op, ty)
}

/// The identity of reduction `op` at type `ty` (what each thread's accumulator starts at).
pub fn reduction_identity(op: ReductionOp, ty: ScalarType) -> u64 {
    match op {
        // -0.0 leaves every value unchanged, negative zero included.
        ReductionOp::Add if ty.is_float() => (-0.0f64).to_bits(),
        ReductionOp::Add | ReductionOp::BitOr | ReductionOp::BitXor | ReductionOp::LogOr => wrap_int(ty, 0),
        ReductionOp::Mul | ReductionOp::LogAnd => wrap_int(ty, 1),
        ReductionOp::BitAnd => wrap_int(ty, -1),
        ReductionOp::Max => match ty {
            ScalarType::F32 => (f32::MIN as f64).to_bits(),
            ScalarType::F64 | ScalarType::F80 => f64::MIN.to_bits(),
            t if t.is_signed() => wrap_int(t, i64::MIN >> (64 - 8 * t.size_bytes())),
            t => wrap_int(t, 0),
        },
        ReductionOp::Min => match ty {
            ScalarType::F32 => (f32::MAX as f64).to_bits(),
            ScalarType::F64 | ScalarType::F80 => f64::MAX.to_bits(),
            t if t.is_signed() => wrap_int(t, i64::MAX >> (64 - 8 * t.size_bytes())),
            t => wrap_int(t, -1),
        },
    }
}

/// Reads a value of type `ty` from `size_bytes(ty)` little-endian bytes.
pub fn from_bytes(ty: ScalarType, bytes: &[u8]) -> u64 {
    if ty == ScalarType::F80 {
        return f80::to_f64(bytes).to_bits();
    }
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    from_memory(ty, u64::from_le_bytes(buf))
}

/// The memory representation of a value of type `ty`: its first `size_bytes(ty)` bytes.
pub fn to_bytes(ty: ScalarType, raw: u64) -> [u8; f80::BYTES] {
    if ty == ScalarType::F80 {
        return f80::from_f64(as_f64(raw));
    }
    let mut out = [0u8; f80::BYTES];
    out[..8].copy_from_slice(&to_memory(ty, raw).to_le_bytes());
    out
}

/// The value of type `ty` whose memory representation is the low bytes of `bits` (`ty` of at
/// most 8 bytes: an `F80` goes through [`from_bytes`]).
#[inline]
pub fn from_memory(ty: ScalarType, bits: u64) -> u64 {
    debug_assert!(ty != ScalarType::F80, "an F80 value is 16 bytes");
    match ty {
        ScalarType::F32 => (f32::from_bits(bits as u32) as f64).to_bits(),
        ScalarType::F64 => bits,
        ScalarType::Bool => (bits as u8 != 0) as u64,
        t => wrap_int(t, bits as i64),
    }
}

/// The memory representation (low `size_bytes(ty)` bytes) of a value of type `ty` (at most 8
/// bytes: an `F80` goes through [`to_bytes`]).
#[inline]
pub fn to_memory(ty: ScalarType, raw: u64) -> u64 {
    debug_assert!(ty != ScalarType::F80, "an F80 value is 16 bytes");
    match ty {
        ScalarType::F32 => (as_f64(raw) as f32).to_bits() as u64,
        _ => raw,
    }
}

/// `a[l] = a[l] op b[l]` on every lane, for the operations that cannot fault, with the type
/// dispatch hoisted out of the lane loop (the simulator's hot path). Returns `false` when
/// `op` at this type has no fast path; the caller then goes lane by lane with [`binary`].
/// Inactive lanes compute garbage that nobody reads, which is harmless for these operations.
pub fn binary_lanes(op: BinaryOp, operand: ScalarType, result: ScalarType, a: &mut [u64], b: &[u64]) -> bool {
    use BinaryOp::*;
    macro_rules! lanes {
        (|$x:ident, $y:ident| $e:expr) => {{
            for (slot, &$y) in a.iter_mut().zip(b) {
                let $x = *slot;
                *slot = $e;
            }
            true
        }};
    }
    let f = |r: u64| f64::from_bits(r);
    let f32v = |r: u64| f64::from_bits(r) as f32;
    match operand {
        ScalarType::F64 if result == ScalarType::F64 || result == ScalarType::Bool => match op {
            Add => lanes!(|x, y| (f(x) + f(y)).to_bits()),
            Sub => lanes!(|x, y| (f(x) - f(y)).to_bits()),
            Mul => lanes!(|x, y| (f(x) * f(y)).to_bits()),
            Div => lanes!(|x, y| (f(x) / f(y)).to_bits()),
            Lt => lanes!(|x, y| (f(x) < f(y)) as u64),
            Le => lanes!(|x, y| (f(x) <= f(y)) as u64),
            Gt => lanes!(|x, y| (f(x) > f(y)) as u64),
            Ge => lanes!(|x, y| (f(x) >= f(y)) as u64),
            Eq => lanes!(|x, y| (f(x) == f(y)) as u64),
            Ne => lanes!(|x, y| (f(x) != f(y)) as u64),
            _ => false,
        },
        ScalarType::F32 if result == ScalarType::F32 || result == ScalarType::Bool => match op {
            Add => lanes!(|x, y| ((f32v(x) + f32v(y)) as f64).to_bits()),
            Sub => lanes!(|x, y| ((f32v(x) - f32v(y)) as f64).to_bits()),
            Mul => lanes!(|x, y| ((f32v(x) * f32v(y)) as f64).to_bits()),
            Div => lanes!(|x, y| ((f32v(x) / f32v(y)) as f64).to_bits()),
            Lt => lanes!(|x, y| (f(x) < f(y)) as u64),
            Le => lanes!(|x, y| (f(x) <= f(y)) as u64),
            Gt => lanes!(|x, y| (f(x) > f(y)) as u64),
            Ge => lanes!(|x, y| (f(x) >= f(y)) as u64),
            Eq => lanes!(|x, y| (f(x) == f(y)) as u64),
            Ne => lanes!(|x, y| (f(x) != f(y)) as u64),
            _ => false,
        },
        ScalarType::I32 if result == ScalarType::I32 || result == ScalarType::Bool => {
            let w = |v: i64| v as i32 as i64 as u64;
            match op {
                Add => lanes!(|x, y| w((x as i64).wrapping_add(y as i64))),
                Sub => lanes!(|x, y| w((x as i64).wrapping_sub(y as i64))),
                Mul => lanes!(|x, y| w((x as i64).wrapping_mul(y as i64))),
                BitAnd => lanes!(|x, y| x & y),
                BitOr => lanes!(|x, y| x | y),
                BitXor => lanes!(|x, y| x ^ y),
                Lt => lanes!(|x, y| ((x as i64) < (y as i64)) as u64),
                Le => lanes!(|x, y| ((x as i64) <= (y as i64)) as u64),
                Gt => lanes!(|x, y| ((x as i64) > (y as i64)) as u64),
                Ge => lanes!(|x, y| ((x as i64) >= (y as i64)) as u64),
                Eq => lanes!(|x, y| (x == y) as u64),
                Ne => lanes!(|x, y| (x != y) as u64),
                _ => false,
            }
        }
        ScalarType::I64 if result == ScalarType::I64 || result == ScalarType::Bool => match op {
            Add => lanes!(|x, y| (x as i64).wrapping_add(y as i64) as u64),
            Sub => lanes!(|x, y| (x as i64).wrapping_sub(y as i64) as u64),
            Mul => lanes!(|x, y| (x as i64).wrapping_mul(y as i64) as u64),
            Lt => lanes!(|x, y| ((x as i64) < (y as i64)) as u64),
            Le => lanes!(|x, y| ((x as i64) <= (y as i64)) as u64),
            Gt => lanes!(|x, y| ((x as i64) > (y as i64)) as u64),
            Ge => lanes!(|x, y| ((x as i64) >= (y as i64)) as u64),
            Eq => lanes!(|x, y| (x == y) as u64),
            Ne => lanes!(|x, y| (x != y) as u64),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_arithmetic_wraps_at_width() {
        let max = wrap_int(ScalarType::I32, i32::MAX as i64);
        let one = wrap_int(ScalarType::I32, 1);
        let r = binary(BinaryOp::Add, ScalarType::I32, ScalarType::I32, max, one).unwrap();
        assert_eq!(r as i64, i32::MIN as i64);
        let u = binary(BinaryOp::Sub, ScalarType::U32, ScalarType::U32, 0, 1).unwrap();
        assert_eq!(u, u32::MAX as u64);
        // Unsigned compare: 0xffffffff > 1; signed: -1 < 1.
        assert_eq!(binary(BinaryOp::Gt, ScalarType::U32, ScalarType::Bool, u, 1), Ok(1));
        let m1 = wrap_int(ScalarType::I32, -1);
        assert_eq!(binary(BinaryOp::Gt, ScalarType::I32, ScalarType::Bool, m1, 1), Ok(0));
        assert_eq!(
            binary(BinaryOp::Div, ScalarType::I32, ScalarType::I32, wrap_int(ScalarType::I32, -7), 2).unwrap() as i64,
            -3
        );
        assert_eq!(
            binary(BinaryOp::Rem, ScalarType::I32, ScalarType::I32, wrap_int(ScalarType::I32, -7), 2).unwrap() as i64,
            -1
        );
        assert_eq!(binary(BinaryOp::Shr, ScalarType::I32, ScalarType::I32, m1, 4).unwrap() as i64, -1);
        // The most negative value by -1: C's undefined overflow (x86 traps), as for each width.
        let int_min = wrap_int(ScalarType::I32, i32::MIN as i64);
        assert_eq!(binary(BinaryOp::Div, ScalarType::I32, ScalarType::I32, int_min, m1), Err(ArithError::DivisionOverflow));
        assert_eq!(binary(BinaryOp::Rem, ScalarType::I32, ScalarType::I32, int_min, m1), Err(ArithError::DivisionOverflow));
        let long_min = wrap_int(ScalarType::I64, i64::MIN);
        assert_eq!(binary(BinaryOp::Div, ScalarType::I64, ScalarType::I64, long_min, wrap_int(ScalarType::I64, -1)), Err(ArithError::DivisionOverflow));
        // One above the minimum, or an unsigned operand, divides as usual.
        let above = wrap_int(ScalarType::I32, i32::MIN as i64 + 1);
        assert_eq!(binary(BinaryOp::Div, ScalarType::I32, ScalarType::I32, above, m1).unwrap() as i64, i32::MAX as i64);
        assert!(binary(BinaryOp::Div, ScalarType::U32, ScalarType::U32, 0x8000_0000, 0xffff_ffff).is_ok());
        assert_eq!(binary(BinaryOp::Shr, ScalarType::U32, ScalarType::U32, u, 28).unwrap(), 15);
        assert_eq!(binary(BinaryOp::Div, ScalarType::I32, ScalarType::I32, one, 0), Err(ArithError::DivisionByZero));
        assert_eq!(wrap_int(ScalarType::U8, 300), 44);
    }

    #[test]
    fn f32_rounds_after_every_operation() {
        let a = from_f64(ScalarType::F32, 16777216.0);
        let one = from_f64(ScalarType::F32, 1.0);
        let r = binary(BinaryOp::Add, ScalarType::F32, ScalarType::F32, a, one).unwrap();
        assert_eq!(as_f64(r), 16777216.0);
        let r64 = binary(BinaryOp::Add, ScalarType::F64, ScalarType::F64, a, one).unwrap();
        assert_eq!(as_f64(r64), 16777217.0);
        assert_eq!(as_f64(from_f64(ScalarType::F32, 0.1)), 0.1f32 as f64);
    }

    #[test]
    fn casts_follow_c() {
        assert_eq!(cast(ScalarType::F64, ScalarType::I32, (-2.7f64).to_bits()) as i64, -2);
        assert_eq!(as_f64(cast(ScalarType::U32, ScalarType::F64, u32::MAX as u64)), 4294967295.0);
        assert_eq!(as_f64(cast(ScalarType::I32, ScalarType::F64, wrap_int(ScalarType::I32, -5))), -5.0);
        assert_eq!(cast(ScalarType::I32, ScalarType::I8, 200), wrap_int(ScalarType::I8, -56));
    }

    #[test]
    fn complex_products_and_identities() {
        let f = |v: f64| from_f64(ScalarType::F64, v);
        // (1 + 2i)(3 - i) = 5 + 5i
        let (re, im) = complex_mul(ScalarType::F64, (f(1.0), f(2.0)), (f(3.0), f(-1.0)));
        assert_eq!((as_f64(re), as_f64(im)), (5.0, 5.0));
        // Each operation rounds to float: (1 + 2^-24 i)^2 keeps the 1.
        let g = |v: f32| from_f64(ScalarType::F32, v as f64);
        let (re, _) = complex_mul(ScalarType::F32, (g(1.0), g(2f32.powi(-24))), (g(1.0), g(2f32.powi(-24))));
        assert_eq!(as_f64(re), 1.0);
        // A complex product starts at 1 + 0i; a sum's parts at -0.0, which keeps -0.0.
        assert_eq!(as_f64(part_identity(ReductionOp::Mul, ScalarType::F64, Some(ComplexPart::Real))), 1.0);
        assert_eq!(as_f64(part_identity(ReductionOp::Mul, ScalarType::F64, Some(ComplexPart::Imag))), 0.0);
        let zero = part_identity(ReductionOp::Add, ScalarType::F32, None);
        let neg = from_f64(ScalarType::F32, -0.0);
        assert!(as_f64(reduce(ReductionOp::Add, ScalarType::F32, neg, zero)).is_sign_negative());
    }

    #[test]
    fn long_double_memory_goes_through_its_own_format() {
        let bytes = to_bytes(ScalarType::F80, from_f64(ScalarType::F80, 2.5));
        assert_eq!(as_f64(from_bytes(ScalarType::F80, &bytes)), 2.5);
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 0x4000);
        // An F80 value converts like an F64 one.
        assert_eq!(cast(ScalarType::F80, ScalarType::I32, from_f64(ScalarType::F80, -7.9)) as i64, -7);
    }

    #[test]
    fn reductions_have_identities() {
        assert_eq!(reduction_identity(ReductionOp::Max, ScalarType::I32) as i64, i32::MIN as i64);
        assert_eq!(reduction_identity(ReductionOp::Min, ScalarType::U8), 255);
        assert_eq!(reduce(ReductionOp::Max, ScalarType::I32, wrap_int(ScalarType::I32, -3), 2), 2);
    }
}
