//! Every case of `vectors/wycheproof-ed25519.json` (C2SP/wycheproof `ed25519_test.json`, 151
//! EdDSA verify tests: 88 valid, 63 invalid; provenance in `vectors/SOURCES.md`).
//!
//! Each case goes through `verify_strict_raw` (no registration checks) and, since every public
//! key in the file also passes registration, through `AgentPublicKey::verify_strict`. ed25519-dalek's
//! `verify_strict` agrees with every expected result: no 'valid' case is refused (the file has
//! no small-order public keys and no small-order R among its valid cases) and every 'invalid'
//! one (truncated or padded signatures, s ≥ L, non-canonical R or s encodings, malleability,
//! wrong signatures) is refused. So no case needs an exception.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly on purpose.

use std::collections::BTreeMap;

use kd_protocol::b64;
use kd_protocol::keys::{AgentPublicKey, verify_strict_raw};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "numberOfTests")]
    number_of_tests: usize,
    #[serde(rename = "testGroups")]
    test_groups: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    #[serde(rename = "publicKey")]
    public_key: PublicKey,
    tests: Vec<Case>,
}

#[derive(Deserialize)]
struct PublicKey {
    pk: String,
}

#[derive(Deserialize)]
struct Case {
    #[serde(rename = "tcId")]
    tc_id: u32,
    comment: String,
    flags: Vec<String>,
    msg: String,
    sig: String,
    result: String,
}

#[test]
fn every_wycheproof_case() {
    let file: File = serde_json::from_str(include_str!("vectors/wycheproof-ed25519.json")).unwrap();
    let mut checked = 0;
    let mut by_result: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_flag: BTreeMap<String, usize> = BTreeMap::new();
    for group in &file.test_groups {
        let public_key: [u8; 32] = hex::decode(&group.public_key.pk)
            .unwrap()
            .try_into()
            .unwrap();
        let registered = AgentPublicKey::parse_b64url(&b64::encode_url(&public_key))
            .unwrap_or_else(|e| panic!("wycheproof key {} refused: {e}", group.public_key.pk));
        for case in &group.tests {
            let message = hex::decode(&case.msg).unwrap();
            let signature = hex::decode(&case.sig).unwrap();
            let raw = verify_strict_raw(&public_key, &message, &signature);
            let via_registered = registered.verify_strict(&message, &signature);
            assert_eq!(raw, via_registered, "tcId {}", case.tc_id);
            let expected_valid = match case.result.as_str() {
                "valid" => true,
                "invalid" => false,
                other => panic!("tcId {}: unexpected result {other:?}", case.tc_id),
            };
            assert_eq!(
                raw.is_ok(),
                expected_valid,
                "tcId {} ({}; flags {:?}): expected {}, verify_strict gave {raw:?}",
                case.tc_id,
                case.comment,
                case.flags,
                case.result
            );
            *by_result.entry(case.result.clone()).or_default() += 1;
            for flag in &case.flags {
                *by_flag.entry(flag.clone()).or_default() += 1;
            }
            checked += 1;
        }
    }
    assert_eq!(checked, file.number_of_tests);
    assert_eq!(checked, 151);
    assert_eq!(by_result.get("valid"), Some(&88));
    assert_eq!(by_result.get("invalid"), Some(&63));
    eprintln!("wycheproof: {checked} cases agree with verify_strict; by flag: {by_flag:?}");
}
