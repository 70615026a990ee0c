//! Checking and converting a number literal's text: digits per base, `_`
//! only between digits, no decimal leading zeros, integers exactly into
//! `i128` (too large is an error, never a wrap), decimal floats through the
//! standard library's correctly rounded parser, hex floats by hand.

use crate::value::ValueKind;

fn base_name(base: u32) -> &'static str {
    match base {
        2 => "binary",
        8 => "octal",
        16 => "hexadecimal",
        _ => "decimal",
    }
}

/// Checks a run of digits with `_` separators.
fn check_digits(s: &str, base: u32) -> Result<(), String> {
    if s.is_empty() {
        return Err("missing digits".to_owned());
    }
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let between = i > 0 && i + 1 < b.len() && b[i - 1] != b'_' && b[i + 1] != b'_';
            if !between {
                return Err("`_` must sit between two digits".to_owned());
            }
        } else if !(c as char).is_digit(base) {
            return Err(format!(
                "invalid digit `{}` for a {} literal",
                c as char,
                base_name(base)
            ));
        }
    }
    Ok(())
}

pub(super) fn number_value(text: &str, base: u32, negative: bool) -> Result<ValueKind, String> {
    let body = if base == 10 { text } else { &text[2..] };
    let exp_at = match base {
        10 => body.find(['e', 'E']),
        16 => body.find(['p', 'P']),
        _ => None,
    };
    let (mantissa, exponent) = match exp_at {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    if frac.is_some() && (base == 2 || base == 8) {
        return Err(format!(
            "a {} literal is an integer: it has no fraction",
            base_name(base)
        ));
    }
    check_digits(int_part, base)?;
    if let Some(f) = frac {
        check_digits(f, base)?;
    }
    if base == 10 && int_part.len() > 1 && int_part.starts_with('0') {
        return Err("leading zeros are not allowed (write 0o for octal)".to_owned());
    }
    let exp_value = match exponent {
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            check_digits(digits, 10).map_err(|m| format!("{m} in the exponent"))?;
            let magnitude = digits
                .bytes()
                .filter(u8::is_ascii_digit)
                .fold(0i64, |n, d| (n * 10 + i64::from(d - b'0')).min(1_000_000));
            Some(if e.starts_with('-') {
                -magnitude
            } else {
                magnitude
            })
        }
        None => None,
    };
    if frac.is_none() && exp_value.is_none() {
        return integer(int_part, base, negative);
    }
    let f = if base == 10 {
        let cleaned: String = mantissa.chars().filter(|&c| c != '_').collect();
        let cleaned = match exp_value {
            Some(e) => format!("{cleaned}e{e}"),
            None => cleaned,
        };
        cleaned
            .parse::<f64>()
            .map_err(|_| "not a number".to_owned())?
    } else {
        hex_float(int_part, frac.unwrap_or(""), exp_value.unwrap_or(0))
    };
    if !f.is_finite() {
        return Err("float literal out of range: it does not fit in an f64".to_owned());
    }
    Ok(ValueKind::Float(if negative { -f } else { f }))
}

fn integer(digits: &str, base: u32, negative: bool) -> Result<ValueKind, String> {
    let too_large =
        || "integer literal too large: it does not fit in a 128-bit signed integer".to_owned();
    let mut n: u128 = 0;
    for c in digits.chars().filter(|&c| c != '_') {
        let d = c
            .to_digit(base)
            .ok_or_else(|| format!("invalid digit `{c}`"))?;
        n = n
            .checked_mul(u128::from(base))
            .and_then(|n| n.checked_add(u128::from(d)))
            .ok_or_else(too_large)?;
    }
    let value = if negative {
        0i128.checked_sub_unsigned(n).ok_or_else(too_large)?
    } else {
        i128::try_from(n).map_err(|_| too_large())?
    };
    Ok(ValueKind::Int(value))
}

/// A hexadecimal float `0xM.Fp±E`: the mantissa's digits are gathered into
/// an integer (dropping digits past 124 bits, which cannot change an f64
/// beyond one rounding) and scaled by a power of two in two halves so the
/// scale itself never overflows before the product is known.
fn hex_float(int_part: &str, frac: &str, exp: i64) -> f64 {
    let mut m: u128 = 0;
    let mut scale = exp;
    let mut sticky = false;
    for c in int_part.chars().filter(|&c| c != '_') {
        let d = u128::from(c.to_digit(16).unwrap_or(0));
        if m >> 120 == 0 {
            m = m * 16 + d;
        } else {
            scale += 4;
            sticky |= d != 0;
        }
    }
    for c in frac.chars().filter(|&c| c != '_') {
        let d = u128::from(c.to_digit(16).unwrap_or(0));
        if m >> 120 == 0 {
            m = m * 16 + d;
            scale -= 4;
        } else {
            sticky |= d != 0;
        }
    }
    if sticky {
        m |= 1;
    }
    let scale = scale.clamp(-4000, 4000) as i32;
    let half = scale / 2;
    (m as f64) * 2f64.powi(half) * 2f64.powi(scale - half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_floats_scale_by_powers_of_two() {
        assert_eq!(hex_float("1", "8", 1), 3.0);
        assert_eq!(hex_float("1", "", -1074), 5e-324);
        assert_eq!(hex_float("1", "fffffffffffff", 1023), f64::MAX);
        assert!(hex_float("1", "", 1024).is_infinite());
        // Digits past what an f64 can hold still round, not truncate to zero.
        let long = "1".repeat(40);
        let want = (0..40).map(|k| 16f64.powi(k)).sum::<f64>();
        assert!((hex_float(&long, "", 0) / want - 1.0).abs() < 1e-12);
    }

    #[test]
    fn digit_runs() {
        assert!(check_digits("1_0", 10).is_ok());
        assert!(check_digits("_1", 10).is_err());
        assert!(check_digits("1__0", 10).is_err());
        assert!(check_digits("", 10).is_err());
        assert!(check_digits("fF", 16).is_ok());
        assert_eq!(
            check_digits("2", 2),
            Err("invalid digit `2` for a binary literal".to_owned())
        );
    }

    #[test]
    fn integers_and_floats_by_shape() {
        assert_eq!(number_value("10", 10, true), Ok(ValueKind::Int(-10)));
        assert_eq!(number_value("0x1f", 16, false), Ok(ValueKind::Int(31)));
        assert_eq!(number_value("1e2", 10, false), Ok(ValueKind::Float(100.0)));
        assert_eq!(number_value("0x1p4", 16, true), Ok(ValueKind::Float(-16.0)));
        assert!(number_value("0o1.5", 8, false).is_err());
    }
}
