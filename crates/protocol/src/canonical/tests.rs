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

/// Found by the canonical_text fuzz target: serde_json reads `{"$serde_json::private::Number":
/// "1"}` as the number 1 (arbitrary_precision) and a `$serde_json::private::RawValue` key as raw
/// text, so a handler would act on a value the signed text does not show. Such keys are refused
/// at any depth, naming the top-level field (docs/decisions.md 496).
#[test]
fn serde_json_s_reserved_keys_are_refused_naming_the_field() {
    for (raw, key, field) in [
        (
            r#"{"$serde_json::private::Number": "1"}"#,
            "$serde_json::private::Number",
            "$serde_json::private::Number",
        ),
        (
            r#"{"terms": {"$serde_json::private::RawValue": {"a": true}}}"#,
            "$serde_json::private::RawValue",
            "terms",
        ),
        (
            r#"{"a": [{"$serde_json::private::Other": 1}]}"#,
            "$serde_json::private::Other",
            "a",
        ),
    ] {
        let refused = canonical_text(raw).unwrap_err();
        assert_eq!(
            refused,
            CanonicalError::ReservedKey {
                key: key.to_owned(),
                field: Some(field.to_owned())
            },
            "{raw}"
        );
        assert_eq!(refused.field(), Some(field), "{raw}");
    }
    // The prefix alone inside a longer key that does not start with it is an ordinary key.
    assert_eq!(
        canon(r#"{"x$serde_json::private::Number": 1}"#),
        r#"{"x$serde_json::private::Number": 1}"#
    );
}
