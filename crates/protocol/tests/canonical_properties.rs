//! Property tests of the canonical text over generated documents (seeded, so reproducible):
//! nested objects and arrays, keys of equal byte length, every escape, control characters,
//! astral characters raw and as surrogate-pair escapes, exponents, `-0`, leading and trailing
//! zeros, long digit strings, nesting up to the 64 limit, odd whitespace.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly on purpose.

mod common;

use std::fmt;

use common::{Generator, INVALID_VALUES, embed, mutate};
use kd_protocol::canonical::{CanonicalError, canonical_text, canonical_value_text};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

const DOCUMENTS: usize = 20_000;
const MUTATIONS: usize = 20_000;

/// A JSON value that keeps object members in document order, to check the printed order.
enum Ordered {
    Scalar,
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor;
        impl<'de> Visitor<'de> for OrderedVisitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Ordered>()? {
                    members.push(member);
                }
                Ok(Ordered::Object(members))
            }
        }
        deserializer.deserialize_any(OrderedVisitor)
    }
}

/// Every object's keys strictly increase by (byte length, bytes): sorted and unique.
fn assert_keys_sorted(value: &Ordered, doc: &str) {
    match value {
        Ordered::Scalar => {}
        Ordered::Array(items) => items.iter().for_each(|item| assert_keys_sorted(item, doc)),
        Ordered::Object(members) => {
            for pair in members.windows(2) {
                let (a, b) = (&pair[0].0, &pair[1].0);
                assert!(
                    (a.len(), a.as_bytes()) < (b.len(), b.as_bytes()),
                    "keys {a:?}, {b:?} out of order for {doc:?}"
                );
            }
            members
                .iter()
                .for_each(|(_, value)| assert_keys_sorted(value, doc));
        }
    }
}

/// Escapes in the output are exactly escape_json's: the seven short forms and lowercase
/// `\u00xx` for the other bytes below 0x20; no raw byte below 0x20 anywhere.
fn assert_escapes_are_postgres(canonical: &str) {
    let bytes = canonical.as_bytes();
    assert!(
        bytes.iter().all(|&b| b >= 0x20),
        "raw control byte in {canonical:?}"
    );
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let hex = &canonical[i + 2..i + 6];
                    let unit = u8::from_str_radix(hex, 16).unwrap();
                    assert!(
                        hex.starts_with("00") && hex == hex.to_lowercase(),
                        "{canonical:?}"
                    );
                    assert!(unit < 0x20 && ![0x08, 0x09, 0x0a, 0x0c, 0x0d].contains(&unit));
                    i += 6;
                }
                other => panic!("escape {other:?} in {canonical:?}"),
            }
        } else {
            i += 1;
        }
    }
}

#[test]
fn generated_documents_keep_the_invariants() {
    let mut generator = Generator::new(0x6b64_2d6d_6370_2d31);
    let mut serde_compared = 0;
    for _ in 0..DOCUMENTS {
        let doc = generator.document();
        let canonical = canonical_text(&doc.text)
            .unwrap_or_else(|e| panic!("generated document refused ({e}): {:?}", doc.text));

        assert_eq!(
            canonical_text(&canonical).as_ref(),
            Ok(&canonical),
            "not idempotent"
        );
        assert_escapes_are_postgres(&canonical);
        let ordered: Ordered = serde_json::from_str(&canonical)
            .unwrap_or_else(|e| panic!("serde_json cannot read {canonical:?}: {e}"));
        assert_keys_sorted(&ordered, &doc.text);

        // The two printers agree on one value, whatever its numbers. (serde_json may read a
        // float one unit in the last place off, `-1e-97` as `-9.999999999999999e-98`, whose
        // expansion can pass 100 characters; canonical_text refuses that text, skip it.)
        let input: serde_json::Value = serde_json::from_str(&doc.text).unwrap();
        let serde_text = serde_json::to_string(&input).unwrap();
        match canonical_text(&serde_text) {
            Ok(text) => assert_eq!(canonical_value_text(&input), text),
            Err(CanonicalError::NumberTooLong { .. }) => {}
            Err(error) => panic!("{serde_text:?}: {error}"),
        }

        // Where serde_json keeps every number's literal, they agree on the raw text as well.
        if doc.serde_stable {
            let output: serde_json::Value = serde_json::from_str(&canonical).unwrap();
            assert_eq!(output, input, "{:?}", doc.text);
            assert_eq!(canonical_value_text(&input), canonical, "{:?}", doc.text);
            serde_compared += 1;
        }
    }
    assert!(
        serde_compared > DOCUMENTS / 4,
        "only {serde_compared} serde-stable documents"
    );
    eprintln!(
        "properties: {DOCUMENTS} documents, {serde_compared} also compared with canonical_value_text on the raw text"
    );
}

#[test]
fn invalid_fragments_are_refused_under_the_right_field() {
    let mut generator = Generator::new(7);
    let mut checked = 0;
    for fragment in INVALID_VALUES {
        for _ in 0..10 {
            let (doc, field) = embed(generator.rng(), fragment);
            let error = canonical_text(&doc)
                .err()
                .unwrap_or_else(|| panic!("accepted invalid document {doc:?}"));
            assert_eq!(error.field(), field, "{doc:?}: {error}");
            assert!(!error.to_string().is_empty());
            checked += 1;
        }
    }
    eprintln!("properties: {checked} documents with an invalid fragment refused");
}

#[test]
fn damaged_documents_never_panic_and_stay_consistent() {
    let mut generator = Generator::new(0x6d75_7461_7465);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..MUTATIONS {
        let doc = generator.document();
        let damaged = mutate(generator.rng(), &doc.text);
        match canonical_text(&damaged) {
            Ok(canonical) => {
                assert_eq!(canonical_text(&canonical).as_ref(), Ok(&canonical));
                accepted += 1;
            }
            Err(error) => {
                // Whatever serde_json makes of it, it is never a value we would have printed
                // differently: if serde_json accepts it, the refusal is one of our own rules or
                // one serde_json does not apply (\u0000, raw DEL is fine in both).
                if serde_json::from_str::<serde_json::Value>(&damaged).is_ok() {
                    assert!(
                        matches!(
                            error,
                            CanonicalError::RepeatedKey { .. }
                                | CanonicalError::NulCharacter { .. }
                                | CanonicalError::NumberTooLong { .. }
                                | CanonicalError::NumberOutOfRange { .. }
                                | CanonicalError::TooDeep { .. }
                        ),
                        "serde_json accepts {damaged:?} but we say {error}"
                    );
                }
                refused += 1;
            }
        }
    }
    assert!(accepted > 0 && refused > 0);
    eprintln!(
        "properties: {MUTATIONS} damaged documents, {accepted} still valid, {refused} refused"
    );
}
