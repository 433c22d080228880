//! Helpers emitted before the kernels of a CUDA translation unit, only those the kernels use:
//! `max`/`min` of integers, the atomics CUDA has no instruction for (compare-and-swap loops),
//! and the host's `long double` format with its conversions to and from `double`.

use std::fmt::Write as _;

use super::{convert, cuda_type, type_suffix};
use crate::ir::{AtomicOp, ScalarType};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Helper {
    /// The host's `long double` (`ScalarType::F80`): the struct `yosegi_f80` and its
    /// conversions. First, so that kernels' parameters can name the struct.
    LongDouble,
    /// `max`/`min` of two integers (`true` = max).
    IntMax(TypeKey),
    IntMin(TypeKey),
    /// An atomic read-modify-write done with a compare-and-swap loop: the operation, the
    /// element's type and the operand's.
    Atomic(AtomicKey, TypeKey, TypeKey),
}

/// `ScalarType` with an order, for a sorted helper set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct TypeKey(u8);

impl TypeKey {
    const ALL: [ScalarType; 11] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::F32,
        ScalarType::F64,
    ];
    pub(super) fn of(ty: ScalarType) -> TypeKey {
        TypeKey(Self::ALL.iter().position(|&t| t == ty).unwrap_or(0) as u8)
    }
    fn ty(self) -> ScalarType {
        Self::ALL[self.0 as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct AtomicKey(u8);

impl AtomicKey {
    const ALL: [AtomicOp; 18] = [
        AtomicOp::Write,
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Mul,
        AtomicOp::Div,
        AtomicOp::Max,
        AtomicOp::Min,
        AtomicOp::BitAnd,
        AtomicOp::BitOr,
        AtomicOp::BitXor,
        AtomicOp::Shl,
        AtomicOp::Shr,
        AtomicOp::SubRev,
        AtomicOp::DivRev,
        AtomicOp::ShlRev,
        AtomicOp::ShrRev,
        AtomicOp::LogAnd,
        AtomicOp::LogOr,
    ];
    pub(super) fn of(op: AtomicOp) -> AtomicKey {
        AtomicKey(Self::ALL.iter().position(|&o| o == op).unwrap_or(0) as u8)
    }
    fn op(self) -> AtomicOp {
        Self::ALL[self.0 as usize]
    }
}

fn atomic_op_name(op: AtomicOp) -> &'static str {
    match op {
        AtomicOp::Write => "write",
        AtomicOp::Add => "add",
        AtomicOp::Sub => "sub",
        AtomicOp::Mul => "mul",
        AtomicOp::Max => "max",
        AtomicOp::Min => "min",
        AtomicOp::BitAnd => "and",
        AtomicOp::BitOr => "or",
        AtomicOp::BitXor => "xor",
        AtomicOp::Div => "div",
        AtomicOp::Shl => "shl",
        AtomicOp::Shr => "shr",
        AtomicOp::SubRev => "rsub",
        AtomicOp::DivRev => "rdiv",
        AtomicOp::ShlRev => "rshl",
        AtomicOp::ShrRev => "rshr",
        AtomicOp::LogAnd => "land",
        AtomicOp::LogOr => "lor",
    }
}

pub(super) fn helper_name(h: Helper) -> String {
    match h {
        Helper::LongDouble => "yosegi_f80".to_string(),
        Helper::IntMax(t) => format!("yosegi_max_{}", type_suffix(t.ty())),
        Helper::IntMin(t) => format!("yosegi_min_{}", type_suffix(t.ty())),
        Helper::Atomic(op, t, v) if t == v => format!("yosegi_atomic_{}_{}", atomic_op_name(op.op()), type_suffix(t.ty())),
        Helper::Atomic(op, t, v) => {
            format!("yosegi_atomic_{}_{}_{}", atomic_op_name(op.op()), type_suffix(t.ty()), type_suffix(v.ty()))
        }
    }
}

/// The new value of an element of type `ty` holding `cur` after atomic `op` with operand `v`
/// of type `vty`, as the simulator computes it (`value::atomic_update`): C's own conversions
/// bring both sides to the operation's type, the cast brings the result back.
pub(super) fn combine(op: AtomicOp, ty: ScalarType, vty: ScalarType, cur: &str, v: &str) -> String {
    let t = cuda_type(ty);
    let ct = op.compute_type(ty, vty);
    let f = if ct == ScalarType::F32 { "f" } else { "" };
    let cast_back = |e: String| if ct == ty { e } else { format!("({t})({e})") };
    match op {
        AtomicOp::Write => convert(v.to_string(), vty, ty),
        AtomicOp::Add => format!("({t})({cur} + {v})"),
        AtomicOp::Sub => format!("({t})({cur} - {v})"),
        AtomicOp::Mul => format!("({t})({cur} * {v})"),
        AtomicOp::Div => format!("({t})({cur} / {v})"),
        AtomicOp::SubRev => format!("({t})({v} - {cur})"),
        AtomicOp::DivRev => format!("({t})({v} / {cur})"),
        // Both sides in the computing type, so that the one `fmax` overload applies.
        AtomicOp::Max | AtomicOp::Min if ct.is_float() => {
            let name = if op == AtomicOp::Max { "fmax" } else { "fmin" };
            let (a, b) = (convert(cur.to_string(), ty, ct), convert(v.to_string(), vty, ct));
            cast_back(format!("{name}{f}({a}, {b})"))
        }
        AtomicOp::Max => cast_back(format!("({cur} >= {v} ? {cur} : {v})")),
        AtomicOp::Min => cast_back(format!("({cur} <= {v} ? {cur} : {v})")),
        // Bit operations on floats are refused by lowering (and by the verifier).
        AtomicOp::BitAnd | AtomicOp::BitOr | AtomicOp::BitXor | AtomicOp::Shl | AtomicOp::Shr | AtomicOp::ShlRev | AtomicOp::ShrRev
            if ty.is_float() || vty.is_float() =>
        {
            cur.to_string()
        }
        AtomicOp::BitAnd => format!("({t})({cur} & {v})"),
        AtomicOp::BitOr => format!("({t})({cur} | {v})"),
        AtomicOp::BitXor => format!("({t})({cur} ^ {v})"),
        AtomicOp::Shl => format!("({t})({cur} << {v})"),
        AtomicOp::Shr => format!("({t})({cur} >> {v})"),
        AtomicOp::ShlRev => format!("({t})({v} << {cur})"),
        AtomicOp::ShrRev => format!("({t})({v} >> {cur})"),
        AtomicOp::LogAnd => format!("({t})({cur} && {v})"),
        AtomicOp::LogOr => format!("({t})({cur} || {v})"),
    }
}

pub(super) fn helper_definition(h: Helper) -> String {
    let name = helper_name(h);
    match h {
        Helper::LongDouble => LONG_DOUBLE.to_string(),
        Helper::IntMax(t) | Helper::IntMin(t) => {
            let ty = cuda_type(t.ty());
            let cmp = if matches!(h, Helper::IntMax(_)) { ">=" } else { "<=" };
            format!("__device__ static {ty} {name}({ty} a, {ty} b)\n{{\n    return a {cmp} b ? a : b;\n}}\n")
        }
        Helper::Atomic(op, t, v) => {
            let ty = t.ty();
            let vty = v.ty();
            let vn = cuda_type(vty);
            let op = op.op();
            let tn = cuda_type(ty);
            let mut s = String::new();
            if ty.size_bytes() >= 4 {
                let (bits, from_bits, to_bits) = match ty {
                    ScalarType::F32 => ("unsigned int", "__uint_as_float(old)".to_string(), "__float_as_uint".to_string()),
                    ScalarType::F64 => (
                        "unsigned long long",
                        "__longlong_as_double((long long)old)".to_string(),
                        "(unsigned long long)__double_as_longlong".to_string(),
                    ),
                    _ if ty.size_bytes() == 4 => ("unsigned int", format!("({tn})old"), "(unsigned int)".to_string()),
                    _ => ("unsigned long long", format!("({tn})old"), "(unsigned long long)".to_string()),
                };
                let current = from_bits.replace("old", "assumed");
                let next = combine(op, ty, vty, "current", "operand");
                let _ = write!(
                    s,
                    "__device__ static {tn} {name}({tn} *address, {vn} operand)\n{{\n    \
                     {bits} *word = ({bits} *)address;\n    \
                     {bits} old = *word;\n    \
                     {bits} assumed;\n    \
                     do {{\n        \
                     assumed = old;\n        \
                     {tn} current = {current};\n        \
                     old = atomicCAS(word, assumed, {to_bits}({next}));\n    \
                     }} while (assumed != old);\n    \
                     return {from_bits};\n}}\n"
                );
            } else {
                // One- and two-byte elements: compare-and-swap the aligned 32-bit word holding
                // them (the GPU is little-endian).
                let mask = if ty.size_bytes() == 1 { "0xffu" } else { "0xffffu" };
                let unsigned = if ty.size_bytes() == 1 { "unsigned char" } else { "unsigned short" };
                let next = combine(op, ty, vty, "current", "operand");
                let _ = write!(
                    s,
                    "__device__ static {tn} {name}({tn} *address, {vn} operand)\n{{\n    \
                     unsigned int *word = (unsigned int *)((unsigned long long)address & ~3ull);\n    \
                     unsigned int shift = (unsigned int)((unsigned long long)address & 3ull) * 8u;\n    \
                     unsigned int mask = {mask} << shift;\n    \
                     unsigned int old = *word;\n    \
                     unsigned int assumed;\n    \
                     do {{\n        \
                     assumed = old;\n        \
                     {tn} current = ({tn})((assumed & mask) >> shift);\n        \
                     {tn} next = {next};\n        \
                     unsigned int bits = ((unsigned int)({unsigned})next << shift) & mask;\n        \
                     old = atomicCAS(word, assumed, (assumed & ~mask) | bits);\n    \
                     }} while (assumed != old);\n    \
                     return ({tn})((old & mask) >> shift);\n}}\n"
                );
            }
            s
        }
    }
}

/// The x87 extended format of the host's `long double` (16 bytes: a 64-bit significand with an
/// explicit integer bit, then the sign and the 15-bit exponent biased by 16383, then padding),
/// and its conversions, as `ir::value::f80` computes them: to `double` rounds the
/// significand once (`__ull2double_rn`) and scales it exactly, from `double` is exact. The
/// struct is 16 bytes with 8-byte alignment, which the host's 16-byte aligned arrays satisfy;
/// it names no alignment attribute, so that it needs nothing beyond what NVRTC predefines.
const LONG_DOUBLE: &str = r#"typedef struct yosegi_f80
{
    unsigned long long significand;
    unsigned short sign_exponent;
    unsigned short padding[3];
} yosegi_f80;

__device__ static double yosegi_f80_to_double(yosegi_f80 v)
{
    int e = v.sign_exponent & 0x7fff;
    double m;
    if (e == 0x7fff) {
        m = (v.significand << 1) != 0ull ? __longlong_as_double(0x7ff8000000000000ll) : __longlong_as_double(0x7ff0000000000000ll);
    } else {
        m = ldexp(__ull2double_rn(v.significand), (e == 0 ? 1 : e) - 16383 - 63);
    }
    return (v.sign_exponent & 0x8000) ? -m : m;
}

__device__ static yosegi_f80 yosegi_f80_from_double(double v)
{
    unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    unsigned long long fraction = bits & 0xfffffffffffffull;
    int exponent = (int)((bits >> 52) & 0x7ffull);
    unsigned short sign = (unsigned short)((bits >> 48) & 0x8000ull);
    yosegi_f80 r;
    r.padding[0] = 0;
    r.padding[1] = 0;
    r.padding[2] = 0;
    if (exponent == 0x7ff) {
        r.significand = (1ull << 63) | (fraction << 11);
        r.sign_exponent = (unsigned short)(sign | 0x7fff);
    } else if (exponent == 0 && fraction == 0ull) {
        r.significand = 0ull;
        r.sign_exponent = sign;
    } else if (exponent == 0) {
        int shift = __clzll((long long)fraction);
        r.significand = fraction << shift;
        r.sign_exponent = (unsigned short)(sign | (16383 + 63 - 1074 - shift));
    } else {
        r.significand = (1ull << 63) | (fraction << 11);
        r.sign_exponent = (unsigned short)(sign | (exponent - 1023 + 16383));
    }
    return r;
}
"#;
