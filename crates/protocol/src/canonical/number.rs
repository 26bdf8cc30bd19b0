//! Numbers as PostgreSQL's `numeric_out` prints them (src/backend/utils/adt/numeric.c): the
//! lexer's token bytes, a number literal's parts, and its printed form for [`super`]'s
//! canonical text.

/// PostgreSQL's `set_var_from_str` refuses exponents whose magnitude reaches `INT_MAX / 2`
/// ("value overflows numeric format"), even for a zero mantissa such as `0e1073741823`, which
/// would otherwise print as a short `0`.
const PG_MAX_EXPONENT: u64 = (i32::MAX / 2) as u64;

/// Bytes PostgreSQL's lexer counts as part of a number or keyword token
/// (`JSON_ALPHANUMERIC_CHAR`): letters, digits, `_`, `$` and every non-ASCII byte.
pub(super) fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// The parts of a JSON number literal, as slices of the input.
pub(super) struct NumberLiteral<'a> {
    negative: bool,
    integer: &'a [u8],
    fraction: &'a [u8],
    exponent_negative: bool,
    exponent: &'a [u8],
    /// Bytes the literal occupies.
    pub(super) len: usize,
}

/// Lexes the JSON number grammar at the start of `bytes`; `None` when it does not start with a
/// complete number. What follows the number is the caller's business (`01` lexes as `0`, and the
/// `1` after it is then a syntax error, as in PostgreSQL).
pub(super) fn lex_number(bytes: &[u8]) -> Option<NumberLiteral<'_>> {
    let digits_from = |from: usize| {
        bytes[from.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut pos = 0;
    let negative = bytes.first() == Some(&b'-');
    if negative {
        pos += 1;
    }
    let integer_start = pos;
    match bytes.get(pos) {
        Some(b'0') => pos += 1,
        Some(b'1'..=b'9') => pos += digits_from(pos),
        _ => return None,
    }
    let integer = &bytes[integer_start..pos];
    let mut fraction: &[u8] = &[];
    if bytes.get(pos) == Some(&b'.') {
        let count = digits_from(pos + 1);
        if count == 0 {
            return None;
        }
        fraction = &bytes[pos + 1..pos + 1 + count];
        pos += 1 + count;
    }
    let mut exponent: &[u8] = &[];
    let mut exponent_negative = false;
    if let Some(b'e' | b'E') = bytes.get(pos) {
        pos += 1;
        match bytes.get(pos) {
            Some(b'+') => pos += 1,
            Some(b'-') => {
                exponent_negative = true;
                pos += 1;
            }
            _ => {}
        }
        let count = digits_from(pos);
        if count == 0 {
            return None;
        }
        exponent = &bytes[pos..pos + count];
        pos += count;
    }
    Some(NumberLiteral {
        negative,
        integer,
        fraction,
        exponent_negative,
        exponent,
        len: pos,
    })
}

pub(super) enum NumberError {
    TooLong,
    OutOfRange,
}

/// Prints a number literal as PostgreSQL's `numeric_in` then `numeric_out` do, refusing results
/// longer than `max_chars` before building them.
///
/// With all digits `D` (integer and fraction, `f` of them fractional) and exponent `e`, the value
/// is `D × 10^(e − f)`, printed exactly with `dscale = max(0, f − e)` fractional digits, the
/// integer part without leading zeros, and a minus sign only when the value is not zero
/// (numeric.c `set_var_from_str`, `get_str_from_var`). No rounding can occur.
pub(super) fn print_number(
    literal: &NumberLiteral<'_>,
    max_chars: usize,
) -> Result<String, NumberError> {
    let exponent_digits = {
        let first_nonzero = literal.exponent.iter().position(|&b| b != b'0');
        first_nonzero.map_or(&[][..], |i| &literal.exponent[i..])
    };
    // Ten digits hold every exponent below PG_MAX_EXPONENT; more are out of range anyway.
    if exponent_digits.len() > 10 {
        return Err(NumberError::OutOfRange);
    }
    let magnitude = exponent_digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    if magnitude >= PG_MAX_EXPONENT {
        return Err(NumberError::OutOfRange);
    }
    // Both fit easily: the magnitude is below 2^30, the digit count below the input length.
    let exponent = if literal.exponent_negative {
        -(magnitude as i64)
    } else {
        magnitude as i64
    };
    let fraction_len = literal.fraction.len() as i64;
    // Digits after the decimal point in the exact value; negative means trailing zeros to add.
    let shift = fraction_len - exponent;
    let dscale = shift.max(0);

    let digits = || {
        literal
            .integer
            .iter()
            .chain(literal.fraction.iter())
            .copied()
    };
    let leading_zeros = digits().take_while(|&d| d == b'0').count();
    let significant = digits().count() - leading_zeros;
    let max_chars = max_chars as i64;

    if significant == 0 {
        let len = if dscale > 0 { 2 + dscale } else { 1 };
        if len > max_chars {
            return Err(NumberError::TooLong);
        }
        let mut out = String::from("0");
        if dscale > 0 {
            out.push('.');
            out.extend(std::iter::repeat_n('0', dscale as usize));
        }
        return Ok(out);
    }

    let significant_len = significant as i64;
    let sign_len = i64::from(literal.negative);
    let len = sign_len
        + if shift <= 0 {
            significant_len - shift
        } else if significant_len > shift {
            significant_len + 1
        } else {
            2 + shift
        };
    if len > max_chars {
        return Err(NumberError::TooLong);
    }

    // From here on every quantity is at most `max_chars`, so the casts cannot truncate.
    let mut out = String::with_capacity(len as usize);
    if literal.negative {
        out.push('-');
    }
    let sig = digits().skip(leading_zeros).map(char::from);
    if shift <= 0 {
        out.extend(sig);
        out.extend(std::iter::repeat_n('0', (-shift) as usize));
    } else if significant_len > shift {
        let integer_len = (significant_len - shift) as usize;
        let mut sig = sig;
        out.extend(sig.by_ref().take(integer_len));
        out.push('.');
        out.extend(sig);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (shift - significant_len) as usize));
        out.extend(sig);
    }
    Ok(out)
}
