//! The host's `long double` on x86-64 ([`ScalarType::F80`](crate::ir::ScalarType::F80)): the x87
//! 80-bit extended format (a 64-bit significand with an explicit integer bit, a 15-bit exponent
//! biased by 16383, a sign bit), stored in the low 10 of 16 bytes. Kernels compute such values
//! as `f64`: a load rounds the significand to 53 bits once (to nearest, ties to even; a result
//! in `f64`'s subnormal range may round a second time), a store is exact.

/// Bytes of memory one `long double` takes (the 6 above the first 10 are padding).
pub const BYTES: usize = 16;

/// The value of the x87 extended number in `bytes[..10]`, rounded to `f64`.
pub fn to_f64(bytes: &[u8]) -> f64 {
    let mut m = [0u8; 8];
    m.copy_from_slice(&bytes[..8]);
    let mantissa = u64::from_le_bytes(m);
    let se = u16::from_le_bytes([bytes[8], bytes[9]]);
    let negative = se & 0x8000 != 0;
    let exponent = (se & 0x7fff) as i32;
    let magnitude = if exponent == 0x7fff {
        // The fraction below the explicit integer bit tells infinity from NaN.
        if mantissa << 1 == 0 { f64::INFINITY } else { f64::NAN }
    } else {
        // value = mantissa * 2^(e - 16383 - 63), with e = 1 for denormals.
        let e = exponent.max(1) - 16383 - 63;
        scale(mantissa as f64, e)
    };
    if negative { -magnitude } else { magnitude }
}

/// `x * 2^e` for `1 <= x < 2^64`, rounded once.
fn scale(x: f64, e: i32) -> f64 {
    if e > 0 {
        // Exact steps; past f64's range the product overflows to infinity, as it should.
        let (mut x, mut e) = (x, e);
        while e > 1000 {
            x *= 2f64.powi(1000);
            e -= 1000;
        }
        return x * 2f64.powi(e);
    }
    if e < -1200 {
        // Below half the smallest subnormal, whatever the significand.
        return 0.0;
    }
    if e < -1000 {
        // 2^e itself is no f64: an exact step first, then the one rounding.
        return x * 2f64.powi(-200) * 2f64.powi(e + 200);
    }
    x * 2f64.powi(e)
}

/// The x87 extended representation of `v` (exact: every `f64` is an 80-bit value), padded
/// with zeros to 16 bytes.
pub fn from_f64(v: f64) -> [u8; BYTES] {
    let bits = v.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (e80, mantissa) = if exponent == 0x7ff {
        // Infinity or NaN (the payload kept, the quiet bit landing on the x87 quiet bit).
        (0x7fff, (1u64 << 63) | (fraction << 11))
    } else if exponent == 0 {
        if fraction == 0 {
            (0, 0)
        } else {
            // An f64 subnormal is a normal x87 number: shift the top set bit to bit 63.
            let shift = fraction.leading_zeros();
            (16383 + 63 - 1074 - shift as i32, fraction << shift)
        }
    } else {
        (exponent - 1023 + 16383, (1u64 << 63) | (fraction << 11))
    };
    let mut out = [0u8; BYTES];
    out[..8].copy_from_slice(&mantissa.to_le_bytes());
    out[8..10].copy_from_slice(&(sign | e80 as u16).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_kind_of_f64() {
        for v in [0.0, -0.0, 1.0, -2.5, 0.1, 1e300, -1e-300, f64::MAX, f64::MIN_POSITIVE, 5e-324, 1.5e-310, f64::INFINITY, f64::NEG_INFINITY] {
            let back = to_f64(&from_f64(v));
            assert_eq!(back.to_bits(), v.to_bits(), "{v:e}");
        }
        assert!(to_f64(&from_f64(f64::NAN)).is_nan());
    }

    #[test]
    fn matches_the_hardware_format() {
        // 1.0L: significand 0x8000000000000000, exponent 0x3fff; -3.0L: 0xc000..., 0xc000.
        let one = from_f64(1.0);
        assert_eq!(u64::from_le_bytes(one[..8].try_into().unwrap()), 1u64 << 63);
        assert_eq!(u16::from_le_bytes([one[8], one[9]]), 0x3fff);
        let m3 = from_f64(-3.0);
        assert_eq!(u64::from_le_bytes(m3[..8].try_into().unwrap()), 0xc000_0000_0000_0000);
        assert_eq!(u16::from_le_bytes([m3[8], m3[9]]), 0xc000);
        assert_eq!(&one[10..], &[0u8; 6]);
    }

    #[test]
    fn rounds_extra_precision_to_nearest() {
        // 1 + 2^-60 (exactly representable in 80 bits) rounds to 1.0; 1 + 2^-52 + 2^-53 (a tie
        // broken upward by a lower bit) rounds up.
        let mut b = [0u8; BYTES];
        b[..8].copy_from_slice(&((1u64 << 63) | (1 << 3)).to_le_bytes());
        b[8..10].copy_from_slice(&0x3fffu16.to_le_bytes());
        assert_eq!(to_f64(&b), 1.0);
        b[..8].copy_from_slice(&((1u64 << 63) | (1 << 11) | (1 << 10) | 1).to_le_bytes());
        assert_eq!(to_f64(&b), 1.0 + 2f64.powi(-51));
        // Beyond f64's range: infinity; far below it: zero.
        b[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
        b[8..10].copy_from_slice(&(0x3fff + 2000u16).to_le_bytes());
        assert_eq!(to_f64(&b), f64::INFINITY);
        b[8..10].copy_from_slice(&(0x3fff - 2000u16).to_le_bytes());
        assert_eq!(to_f64(&b), 0.0);
        // A small x87 number that is an f64 subnormal.
        b[8..10].copy_from_slice(&(0x3fff - 1070u16).to_le_bytes());
        // (2^-1070 written by its bits: `powi(-1070)` may compute 1 / 2^1070, which overflows.)
        assert_eq!(to_f64(&b), f64::from_bits(1 << 4));
    }
}
