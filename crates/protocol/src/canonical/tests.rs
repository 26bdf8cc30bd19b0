//! Unit tests of the canonical text: numbers, limits and escapes.

use super::*;

fn canon(raw: &str) -> String {
    canonical_text(raw).unwrap_or_else(|e| panic!("{raw:?} refused: {e}"))
}

#[test]
fn numbers_follow_numeric_out() {
    for (input, output) in [
        ("2.50", "2.50"),
        ("0.10", "0.10"),
        ("12.3400", "12.3400"),
        ("1e2", "100"),
        ("1E+2", "100"),
        ("1e02", "100"),
        ("1e-2", "0.01"),
        ("-0", "0"),
        ("-0.0", "0.0"),
        ("-0e-3", "0.000"),
        ("1.0e-7", "0.00000010"),
        ("1.50e1", "15.0"),
        ("100e-2", "1.00"),
        ("0.00001e5", "1"),
        ("0.05e1", "0.5"),
        ("-1.5e0", "-1.5"),
        ("-12e-1", "-1.2"),
        ("0e1073741822", "0"),
        ("1e0000000000000000000002", "100"),
    ] {
        assert_eq!(canon(input), output, "{input}");
    }
}

#[test]
fn number_limits() {
    let ok = format!("1e{}", MAX_NUMBER_CHARS - 1);
    assert_eq!(canon(&ok).len(), MAX_NUMBER_CHARS);
    let too_long = format!("1e{MAX_NUMBER_CHARS}");
    assert!(matches!(
        canonical_text(&too_long),
        Err(CanonicalError::NumberTooLong { .. })
    ));
    let negative = format!("-1e{}", MAX_NUMBER_CHARS - 1);
    assert!(matches!(
        canonical_text(&negative),
        Err(CanonicalError::NumberTooLong { .. })
    ));
    assert!(matches!(
        canonical_text("1e131071"),
        Err(CanonicalError::NumberTooLong { .. })
    ));
    assert!(matches!(
        canonical_text("1e-16384"),
        Err(CanonicalError::NumberTooLong { .. })
    ));
    assert!(matches!(
        canonical_text("0e1073741823"),
        Err(CanonicalError::NumberOutOfRange { .. })
    ));
    assert!(matches!(
        canonical_text("0e-99999999999999999999999"),
        Err(CanonicalError::NumberOutOfRange { .. })
    ));
}

#[test]
fn escapes_match_escape_json() {
    assert_eq!(
        canon(r#""\u0001\u001F\u000B\u0008\/\u007f""#),
        "\"\\u0001\\u001f\\u000b\\b/\u{7f}\""
    );
    assert_eq!(canon(r#""\ud83d\ude00\u00e9""#), "\"😀é\"");
}
