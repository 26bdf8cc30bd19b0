//! The kd-log-head-v1 anchor text (spec "Signed log head"): one anchor per UTC day names the
//! latest event of the global log when it was published.
//!
//! ```text
//! kd-log-head-v1
//! <date>       the UTC day, YYYY-MM-DD
//! <seq>        decimal seq of the latest event (0 for an empty log)
//! <row_hash>   that event's lowercase hex row_hash
//! ```
//!
//! joined by LF (0x0A) with no trailing LF. The signature is Ed25519 by `kd-passport-1` over
//! the text's UTF-8 bytes, base64url. A verifier rebuilds the text from the head's `date`,
//! `seq` and `row_hash` fields, compares it byte for byte with `signed_text`, and checks the
//! signature against the key published in the hub's JWKS.

/// Line 1 of the text: the recipe name.
pub const KD_LOG_HEAD_V1: &str = "kd-log-head-v1";

/// The signed text of a head: `kd-log-head-v1`, `date`, `seq`, `row_hash`, joined by LF.
///
/// `date` is the UTC day as `YYYY-MM-DD`; `row_hash` the lowercase hex SHA-256 of the event at
/// `seq`. The caller passes well-formed values: this function only joins them.
pub fn signed_text(date: &str, seq: i64, row_hash: &str) -> String {
    format!("{KD_LOG_HEAD_V1}\n{date}\n{seq}\n{row_hash}")
}

/// Whether `date` is a UTC day written as `YYYY-MM-DD` (digits and dashes in place; month
/// 01-12, day 01-31). The calendar itself is not checked.
pub fn is_day(date: &str) -> bool {
    let bytes = date.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let number = |at: usize| u32::from(bytes[at] - b'0') * 10 + u32::from(bytes[at + 1] - b'0');
    (1..=12).contains(&number(5)) && (1..=31).contains(&number(8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_four_lines_joined_by_lf_without_a_trailing_lf() {
        let hash = "ab".repeat(32);
        let text = signed_text("2026-10-11", 42, &hash);
        assert_eq!(text, format!("kd-log-head-v1\n2026-10-11\n42\n{hash}"));
        assert_eq!(text.lines().count(), 4);
        assert!(!text.ends_with('\n'));
    }

    #[test]
    fn days_are_yyyy_mm_dd() {
        assert!(is_day("2026-10-11"));
        assert!(is_day("1999-12-31"));
        for bad in [
            "2026-1-11",
            "2026-13-01",
            "2026-00-10",
            "2026-10-32",
            "2026/10/11",
            "2026-10-11T",
            "２026-10-11",
            "",
        ] {
            assert!(!is_day(bad), "{bad}");
        }
    }
}
