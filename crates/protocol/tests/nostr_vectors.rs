//! `kd_protocol::nostr` against published vectors (tests/vectors/SOURCES.md): the 19 BIP-340
//! vectors, 31 NIP-01 events with published ids (26 valid, 5 that must be refused), and 13
//! serialization edge cases generated with nostr-tools (exact preimages and deterministic
//! signatures).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use kd_protocol::nostr::{self, Event, EventError};
use serde_json::Value;

fn hex32(text: &str) -> [u8; 32] {
    hex::decode(text).unwrap().try_into().unwrap()
}

#[test]
fn bip340_vectors_sign_and_verify_as_published() {
    let csv = include_str!("vectors/bip340-test-vectors.csv");
    let mut rows = 0;
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.splitn(8, ',').collect();
        let [
            index,
            secret,
            public,
            aux,
            message,
            signature,
            result,
            _comment,
        ] = cells[..]
        else {
            panic!("{line}");
        };
        let message = hex::decode(message).unwrap();
        let signature: [u8; 64] = hex::decode(signature).unwrap().try_into().unwrap();
        let public_bytes: [u8; 32] = hex32(public);
        let expected = result == "TRUE";
        let verified = nostr::verify_schnorr(&public_bytes, &message, &signature);
        assert_eq!(verified.is_ok(), expected, "vector {index}: {verified:?}");
        if !secret.is_empty() {
            let secret = hex32(secret);
            assert_eq!(
                nostr::public_key_hex(&secret).unwrap(),
                public.to_lowercase(),
                "vector {index}"
            );
            let signed = nostr::sign_schnorr(&secret, &message, &hex32(aux)).unwrap();
            assert_eq!(signed, signature, "vector {index}: signature bytes");
        }
        rows += 1;
    }
    assert_eq!(rows, 19);
}

#[test]
fn published_events_verify_or_are_refused_as_their_vectors_say() {
    let file: Value = serde_json::from_str(include_str!("vectors/nostr-events.json")).unwrap();
    let entries = file["events"].as_array().unwrap();
    assert_eq!(entries.len(), 31);
    let mut valid = 0;
    for entry in entries {
        let event = Event::from_value(entry["event"].clone())
            .unwrap_or_else(|error| panic!("{}: {error}", entry["note"]));
        let verdict = event.verify();
        match entry["expect"].as_str().unwrap() {
            "valid" => {
                assert_eq!(verdict, Ok(()), "{}", entry["note"]);
                valid += 1;
            }
            "invalid_id_sig_ok_over_claimed_id" => {
                assert_eq!(verdict, Err(EventError::IdMismatch), "{}", entry["note"]);
                // The trap: the signature is good over the claimed id. Only recomputing the
                // id catches it.
                let sig: [u8; 64] = hex::decode(&event.sig).unwrap().try_into().unwrap();
                assert!(
                    nostr::verify_schnorr(&hex32(&event.pubkey), &hex32(&event.id), &sig).is_ok()
                );
            }
            "invalid_id_and_sig" => {
                assert_eq!(verdict, Err(EventError::IdMismatch), "{}", entry["note"]);
            }
            other => panic!("unknown expectation {other}"),
        }
    }
    assert_eq!(valid, 26);
}

#[test]
fn escaping_edge_cases_hash_the_exact_preimage_and_sign_deterministically() {
    let file: Value =
        serde_json::from_str(include_str!("vectors/nostr-escaping-events.json")).unwrap();
    let secret = hex32(file["test_secret_key_hex"].as_str().unwrap());
    let cases = file["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 13);
    let mut refused = 0;
    for case in cases {
        let description = case["description"].as_str().unwrap();
        if case["expect"] == "valid" {
            let event = Event::from_value(case["event"].clone()).unwrap();
            let preimage = nostr::serialize_for_id(
                &event.pubkey,
                event.created_at,
                event.kind,
                &event.tags,
                &event.content,
            );
            assert_eq!(
                preimage,
                case["serialized_preimage"].as_str().unwrap(),
                "{description}"
            );
            assert_eq!(event.verify(), Ok(()), "{description}");
            // Signing the same fields with the same key and zero aux_rand gives the same bytes
            // nostr-tools (@noble/curves) gave.
            let signed = nostr::sign_event(
                &secret,
                event.created_at,
                event.kind,
                event.tags.clone(),
                event.content.clone(),
                &[0; 32],
            )
            .unwrap();
            assert_eq!(signed, event, "{description}");
        } else {
            // A lone surrogate is not Unicode: the JSON reader refuses it.
            let raw = case["raw_event_json"].as_str().unwrap();
            assert!(
                matches!(Event::parse(raw), Err(EventError::Shape(_))),
                "{description}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 1);
}
