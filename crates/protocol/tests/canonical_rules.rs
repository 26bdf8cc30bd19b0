//! The rules of the canonical arguments text one by one (spec "Signing a write (kd-mcp-v1)";
//! DECISIONS 11): what prints how, what is refused, and which field a refusal names.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly on purpose.

use kd_protocol::canonical::{
    CanonicalError, MAX_DEPTH, MAX_NUMBER_CHARS, arguments_hash, canonical_text,
    canonical_value_text,
};
use serde_json::json;

fn canon(raw: &str) -> String {
    canonical_text(raw).unwrap_or_else(|e| panic!("{raw:?} refused: {e}"))
}

fn refusal(raw: &str) -> CanonicalError {
    match canonical_text(raw) {
        Ok(text) => panic!("{raw:?} accepted as {text:?}"),
        Err(error) => error,
    }
}

#[test]
fn keys_sort_by_byte_length_then_bytes() {
    assert_eq!(
        canon(r#"{"b":1,"a":2,"aa":3,"B":4,"é":5,"z":6,"ab":7,"aaa":8}"#),
        r#"{"B": 4, "a": 2, "b": 1, "z": 6, "aa": 3, "ab": 7, "é": 5, "aaa": 8}"#
    );
    // € is three bytes, like "aaa", and 0xE2 sorts after 'a'; 😀 is four bytes.
    assert_eq!(
        canon(r#"{"😀":1,"€":2,"aaa":3,"aaaa":4,"":5}"#),
        r#"{"": 5, "aaa": 3, "€": 2, "aaaa": 4, "😀": 1}"#
    );
    // Bytewise, not by code point or UTF-16 unit: U+FFFF (EF BF BF) sorts before U+10000
    // (F0 90 80 80) only because it is shorter.
    assert_eq!(
        canon("{\"\u{10000}\":1,\"\u{ffff}\":2}"),
        "{\"\u{ffff}\": 2, \"\u{10000}\": 1}"
    );
    // No Unicode normalisation: é and e + combining acute are different keys.
    assert_eq!(
        canon("{\"e\u{301}\":1,\"é\":2}"),
        "{\"é\": 2, \"e\u{301}\": 1}"
    );
    // Nested objects, inside arrays too.
    assert_eq!(
        canon(r#"[{"b":1,"a":2}, {"a":[{"d":1,"c":2}]}]"#),
        r#"[{"a": 2, "b": 1}, {"a": [{"c": 2, "d": 1}]}]"#
    );
}

#[test]
fn separators_and_whitespace() {
    assert_eq!(canon("  { \"a\" : [ 1 , 2 ] }  "), r#"{"a": [1, 2]}"#);
    assert_eq!(canon("\t\r\n[\n1,\r2\t]\n"), "[1, 2]");
    assert_eq!(canon("{}"), "{}");
    assert_eq!(canon("[ ]"), "[]");
    assert_eq!(canon("[1,2,[3,{}],[]]"), "[1, 2, [3, {}], []]");
    assert_eq!(canon("[true,false,null]"), "[true, false, null]");
    // Only space, TAB, LF and CR are whitespace.
    for bad in [
        "\u{c}1",
        "1\u{b}",
        "\u{a0}1",
        "\u{feff}{}",
        "\u{2028}1",
        "[1,\u{85}2]",
    ] {
        assert!(
            matches!(refusal(bad), CanonicalError::Syntax { .. }),
            "{bad:?}"
        );
    }
}

#[test]
fn top_level_scalars_print_as_themselves() {
    assert_eq!(canon(" \"a\" "), "\"a\"");
    assert_eq!(canon("1.50"), "1.50");
    assert_eq!(canon("null"), "null");
    assert_eq!(canon("true"), "true");
    assert_eq!(canon("false\n"), "false");
}

#[test]
fn strings_print_with_escape_json() {
    assert_eq!(canon(r#""\b\f\n\r\t""#), r#""\b\f\n\r\t""#);
    assert_eq!(
        canon(r#""\u0001\u001F\u000B\u0008""#),
        r#""\u0001\u001f\u000b\b""#
    );
    assert_eq!(canon(r#""\u007f""#), "\"\u{7f}\"");
    assert_eq!(canon("\"\u{7f}\""), "\"\u{7f}\"");
    assert_eq!(
        canon(r#""\u2028\u2029\uFEFF\uffff\u0080""#),
        "\"\u{2028}\u{2029}\u{feff}\u{ffff}\u{80}\""
    );
    assert_eq!(canon(r#""\/""#), r#""/""#);
    assert_eq!(canon(r#""\u00e9é""#), "\"éé\"");
    assert_eq!(canon(r#""\ud83d\ude00""#), "\"😀\"");
    assert_eq!(canon(r#""\uD83D\uDE00""#), "\"😀\"");
    assert_eq!(canon(r#""\"\\""#), r#""\"\\""#);
    assert_eq!(canon(r#""\u0022\u005c""#), r#""\"\\""#);
    assert_eq!(canon(r#""<\u003e&'""#), r#""<>&'""#);
    // Every control byte: the seven short forms, the rest lowercase \u00xx.
    for byte in 1u8..0x20 {
        let expected = match byte {
            0x08 => "\\b".to_owned(),
            0x09 => "\\t".to_owned(),
            0x0a => "\\n".to_owned(),
            0x0c => "\\f".to_owned(),
            0x0d => "\\r".to_owned(),
            _ => format!("\\u{byte:04x}"),
        };
        assert_eq!(
            canon(&format!("\"\\u{byte:04X}\"")),
            format!("\"{expected}\"")
        );
    }
}

#[test]
fn numbers_print_like_numeric_out() {
    for (input, output) in [
        ("2.50", "2.50"),
        ("1.000", "1.000"),
        ("0.10", "0.10"),
        ("12.3400", "12.3400"),
        ("1e2", "100"),
        ("1E+2", "100"),
        ("1e02", "100"),
        ("1e-2", "0.01"),
        ("1e-6", "0.000001"),
        ("-0", "0"),
        ("-0.0", "0.0"),
        ("-0.00", "0.00"),
        ("-0e-3", "0.000"),
        ("1.0e-7", "0.00000010"),
        ("1.50e1", "15.0"),
        ("100e-2", "1.00"),
        ("0.00001e5", "1"),
        ("-1.5e3", "-1500"),
        ("-1.5e-3", "-0.0015"),
        ("123.456e1", "1234.56"),
        ("123.456e-1", "12.3456"),
        ("123.456e3", "123456"),
        ("123.456e4", "1234560"),
        ("0e0", "0"),
        ("0E-0", "0"),
        ("0.0e1", "0"),
        ("0.00e1", "0.0"),
        ("9007199254740993", "9007199254740993"),
        ("-9223372036854775809", "-9223372036854775809"),
        (
            "123456789012345678901234567890123456789012345678901234567890",
            "123456789012345678901234567890123456789012345678901234567890",
        ),
    ] {
        assert_eq!(canon(input), output, "{input}");
    }
}

#[test]
fn number_grammar_is_postgres_json() {
    for bad in [
        "01",
        "-01",
        "00",
        "+1",
        ".5",
        "1.",
        "1.e5",
        "1e",
        "1e+",
        "1e-",
        "-",
        "--1",
        "1.5.2",
        "0x10",
        "1_000",
        "NaN",
        "Infinity",
        "-Infinity",
        "1e5.5",
        "1ee5",
        "[01]",
        "[1.]",
    ] {
        assert!(
            matches!(refusal(bad), CanonicalError::Syntax { .. }),
            "{bad:?}"
        );
    }
}

#[test]
fn long_numbers_are_refused_before_expansion() {
    let max = MAX_NUMBER_CHARS;
    // Exactly 100 characters is fine, whether typed out or produced by an exponent.
    assert_eq!(canon(&format!("1e{}", max - 1)).len(), max);
    assert_eq!(canon(&"9".repeat(max)).len(), max);
    assert_eq!(canon(&format!("-{}", "9".repeat(max - 1))).len(), max);
    assert_eq!(canon(&format!("1e-{}", max - 2)).len(), max);
    assert_eq!(canon(&format!("0.{}", "0".repeat(max - 2))).len(), max);
    assert_eq!(canon(&format!("-0e-{}", max - 2)).len(), max);
    assert_eq!(canon(&format!("-1.5e{}", max - 2)).len(), max);
    // One more is refused, with the field named.
    for raw in [
        format!("1e{max}"),
        "9".repeat(max + 1),
        format!("-{}", "9".repeat(max)),
        format!("1e-{}", max - 1),
        format!("0.{}", "0".repeat(max - 1)),
        format!("0e-{}", max - 1),
        format!("-1.5e{}", max - 1),
    ] {
        let error = refusal(&format!("{{\"n\": {raw}}}"));
        assert!(
            matches!(error, CanonicalError::NumberTooLong { .. }),
            "{raw}: {error:?}"
        );
        assert_eq!(error.field(), Some("n"));
        assert!(
            error
                .to_string()
                .starts_with("number prints longer than 100 characters")
        );
    }
    // What PostgreSQL would print as 131,072 digits, or refuse as out of range: refused at once.
    for raw in [
        "1e131071",
        "1e131072",
        "1e-16383",
        "1e-16384",
        "1e999999999",
        "-1e-1073741822",
    ] {
        assert!(
            matches!(refusal(raw), CanonicalError::NumberTooLong { .. }),
            "{raw}"
        );
    }
}

#[test]
fn exponents_postgres_finds_out_of_range_are_refused() {
    // PostgreSQL refuses |exponent| ≥ INT_MAX / 2 even for a zero, which would print short.
    assert_eq!(canon("0e1073741822"), "0");
    for raw in [
        "0e1073741823",
        "0E+1073741823",
        "1e1073741823",
        "0e-1073741823",
        "0e99999999999999999999",
    ] {
        assert!(
            matches!(refusal(raw), CanonicalError::NumberOutOfRange { .. }),
            "{raw}"
        );
    }
    // Leading zeros in the exponent do not count.
    assert_eq!(canon("1e0000000000000000000000000002"), "100");
}

#[test]
fn repeated_keys_are_refused_after_unescaping() {
    for (raw, key) in [
        (r#"{"a":1,"a":2}"#, "a"),
        (r#"{"a":1,"a":1}"#, "a"),
        (r#"{"\u0061":1,"a":2}"#, "a"),
        (r#"{"é":1,"\u00E9":2}"#, "é"),
        (r#"{"😀":1,"\ud83d\ude00":2}"#, "😀"),
        (r#"{"\/":1,"/":2}"#, "/"),
        (r#"{"\n":1,"\u000a":2}"#, "\n"),
        (r#"{"":1,"":2}"#, ""),
        (r#"{"b":1,"a":2,"c":3,"a":4}"#, "a"),
    ] {
        assert_eq!(
            canonical_text(raw),
            Err(CanonicalError::RepeatedKey {
                key: key.to_owned(),
                field: Some(key.to_owned())
            }),
            "{raw}"
        );
    }
    let nested = refusal(r#"{"a":{"b":1,"b":2}}"#);
    assert_eq!(
        nested,
        CanonicalError::RepeatedKey {
            key: "b".into(),
            field: Some("a".into())
        }
    );
    assert_eq!(nested.to_string(), r#"repeated key "b""#);
    assert_eq!(nested.field(), Some("a"));
    let deeper = refusal(r#"{"ok":1,"list":[{"x":[{"k":1,"k":2}]}]}"#);
    assert_eq!(deeper.field(), Some("list"));
    let in_array = refusal(r#"[{"a":1,"a":2}]"#);
    assert_eq!(in_array.field(), None);
    // Keys that only look alike are fine.
    assert_eq!(
        canon(r#"{"a":1,"A":2,"a ":3}"#),
        r#"{"A": 2, "a": 1, "a ": 3}"#
    );
    // The message escapes the key like JSON.
    assert_eq!(
        refusal(r#"{"\n\"":1,"\n\"":2}"#).to_string(),
        r#"repeated key "\n\"""#
    );
}

#[test]
fn nul_and_lone_surrogates_are_refused() {
    let nul = refusal(r#"{"k":"a\u0000b"}"#);
    assert!(
        matches!(nul, CanonicalError::NulCharacter { offset: 7, .. }),
        "{nul:?}"
    );
    assert_eq!(nul.field(), Some("k"));
    assert!(nul.to_string().starts_with("\\u0000 is not allowed"));
    assert!(matches!(
        refusal(r#"{"\u0000":1}"#),
        CanonicalError::NulCharacter { field: None, .. }
    ));

    for raw in [
        r#""\ud83d""#,
        r#""\ude00""#,
        r#""\ud83dx""#,
        r#""\ud83d\ud83d""#,
        r#""\ud83d\u0041""#,
        r#""\ud83d\n""#,
        r#""\udbff\u0000""#,
        r#""\ud83d\u""#,
        r#""a\udfff\ud800""#,
    ] {
        let error = refusal(raw);
        assert!(
            matches!(error, CanonicalError::LoneSurrogate { .. }),
            "{raw}: {error:?}"
        );
        assert!(error.to_string().starts_with("lone surrogate"));
    }
}

#[test]
fn raw_control_characters_and_bad_escapes_are_refused() {
    for byte in 0u8..0x20 {
        let raw = format!("{{\"k\": \"a{}b\"}}", char::from(byte));
        let error = refusal(&raw);
        assert_eq!(
            error,
            CanonicalError::ControlCharacter {
                offset: 8,
                byte,
                field: Some("k".into())
            }
        );
        assert_eq!(
            error.to_string(),
            format!("invalid JSON at byte 8: character 0x{byte:02x} must be escaped")
        );
    }
    for (raw, escape) in [
        (r#""\x41""#, r"\x"),
        (r#""\'""#, r"\'"),
        (r#""\a""#, r"\a"),
        (r#""\U0041""#, r"\U"),
        (r#""\u12""#, r#"\u12""#),
        (r#""\u12g4""#, r"\u12g4"),
        ("\"\\é\"", "\\é"),
    ] {
        assert_eq!(
            canonical_text(raw),
            Err(CanonicalError::InvalidEscape {
                offset: 1,
                escape: escape.to_owned(),
                field: None
            }),
            "{raw}"
        );
    }
    assert!(matches!(refusal("\"\\"), CanonicalError::Syntax { .. }));
}

#[test]
fn syntax_errors_name_their_byte_and_field() {
    let error = refusal(r#"{"a": [1,}"#);
    assert_eq!(
        error,
        CanonicalError::Syntax {
            offset: 9,
            reason: "expected a JSON value",
            field: Some("a".into())
        }
    );
    assert_eq!(
        error.to_string(),
        "invalid JSON at byte 9: expected a JSON value"
    );
    assert_eq!(refusal(r#"{"a":1 "b":2}"#).field(), None);
    assert_eq!(refusal(r#"{"a":1,}"#).field(), None);
    for bad in [
        "",
        " ",
        "{",
        "}",
        "[",
        "[1",
        "{\"a\"",
        "{\"a\":",
        "{\"a\" 1}",
        "{1:2}",
        "{,}",
        "[,1]",
        "[1 2]",
        "{} {}",
        "1 2",
        "{}x",
        "'a'",
        "TRUE",
        "True",
        "nul",
        "truex",
        "[true false]",
        "\"unterminated",
        "{\"a\":1,}",
        "[1,]",
        "undefined",
    ] {
        assert!(
            matches!(refusal(bad), CanonicalError::Syntax { .. }),
            "{bad:?}"
        );
    }
}

#[test]
fn nesting_is_capped_at_64() {
    let arrays = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(canon(&arrays(MAX_DEPTH)), arrays(MAX_DEPTH));
    assert!(matches!(
        refusal(&arrays(MAX_DEPTH + 1)),
        CanonicalError::TooDeep { offset: 64, .. }
    ));
    // Far deeper input is refused without exhausting the stack.
    assert!(matches!(
        refusal(&arrays(1_000_000)),
        CanonicalError::TooDeep { .. }
    ));
    assert!(matches!(
        refusal(&"[".repeat(1_000_000)),
        CanonicalError::TooDeep { .. }
    ));

    let objects = |depth: usize| format!("{}1{}", "{\"k\":".repeat(depth), "}".repeat(depth));
    assert!(canonical_text(&objects(MAX_DEPTH)).is_ok());
    let error = refusal(&objects(MAX_DEPTH + 1));
    assert!(matches!(error, CanonicalError::TooDeep { .. }));
    assert_eq!(error.field(), Some("k"));
    assert_eq!(
        error.to_string(),
        format!("nesting deeper than 64 levels (byte {})", 5 * 64)
    );
}

#[test]
fn value_printer_matches_the_text_printer() {
    let value = json!({
        "reason": "tab\there \u{0}nul \u{7f} /",
        "n": [1, -1, 0, 2.5, -0.0, 1e20, 1e-7, 0.1, u64::MAX, i64::MIN, 1.7976931348623157e308],
        "é": {"b": true, "a": null, "aa": []},
    });
    let text = canonical_value_text(&value);
    let expected_numbers = format!(
        "[1, -1, 0, 2.5, 0.0, 100000000000000000000, 0.0000001, 0.1, 18446744073709551615, \
         -9223372036854775808, 17976931348623157{}]",
        "0".repeat(292)
    );
    assert_eq!(
        text,
        format!(
            "{{\"n\": {expected_numbers}, \"é\": {{\"a\": null, \"b\": true, \"aa\": []}}, \
             \"reason\": \"tab\\there \\u0000nul \u{7f} /\"}}"
        )
    );
    // Without the NUL and the 309-digit number, the text printer says the same.
    let value = json!({"a": [2.5, -0.0, 1e20, 1e-7], "b": "x\u{1}y"});
    assert_eq!(canonical_value_text(&value), canon(&value.to_string()));
    assert_eq!(canonical_value_text(&json!("plain")), "\"plain\"");
}

#[test]
fn arguments_hash_is_lowercase_hex_sha256() {
    assert_eq!(
        arguments_hash(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        arguments_hash("{}"),
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
}
