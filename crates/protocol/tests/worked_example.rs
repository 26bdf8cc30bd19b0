//! The worked example of spec "Signing a write (kd-mcp-v1)", byte for byte. Every constant below
//! is copied from the spec text.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly on purpose.

use ed25519_dalek::{Signer, SigningKey};
use kd_protocol::b64;
use kd_protocol::canonical::{arguments_hash, canonical_text, canonical_value_text};
use kd_protocol::keys::AgentPublicKey;
use kd_protocol::signing::{Nonce, parse_timestamp_header, text_to_sign};

const PUBLIC_KEY: &str = "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg";
const TOOL: &str = "withdraw_finding";
const AGENT_ID: &str = "00000000-0000-4000-8000-000000000001";
const ARGUMENTS: &str = r#"{"agent_id": "00000000-0000-4000-8000-000000000001", "finding_id": "11111111-2222-4333-8444-555555555555", "reason": "test, café"}"#;
const TIMESTAMP: &str = "1791700000";
const NONCE: &str = "n-3f9a1c2e7b5d4f60";
const CANONICAL: &str = r#"{"reason": "test, café", "agent_id": "00000000-0000-4000-8000-000000000001", "finding_id": "11111111-2222-4333-8444-555555555555"}"#;
const HASH: &str = "d4c5d794a6ebcfd92cbc37b0ac8119475e5ab7ed85bbe522d9aebf730eb96498";
const TEXT_TO_SIGN_WITH_LF_SHOWN: &str = r"kd-mcp-v1\nwithdraw_finding\n00000000-0000-4000-8000-000000000001\n1791700000\nn-3f9a1c2e7b5d4f60\nd4c5d794a6ebcfd92cbc37b0ac8119475e5ab7ed85bbe522d9aebf730eb96498";
const SIGNATURE: &str =
    "tfqegxIsYOO_QAOBGLjyFrP3IrWX-PHqWUEaDXjDRvi76ikl7lwt7eCRMfEa10vwYdLaeO8QaYck1X4YFOpuBA";

/// "The key is a published example key (seed bytes 00 01 02 ... 1f)."
fn example_signing_key() -> SigningKey {
    let seed: [u8; 32] = std::array::from_fn(|i| i as u8);
    SigningKey::from_bytes(&seed)
}

fn example_text_to_sign() -> String {
    let timestamp = parse_timestamp_header(TIMESTAMP).unwrap();
    let nonce = Nonce::parse(NONCE).unwrap();
    let hash = arguments_hash(&canonical_text(ARGUMENTS).unwrap());
    text_to_sign(TOOL, AGENT_ID, timestamp, nonce.as_str(), &hash)
}

#[test]
fn canonical_text_and_hash_match_the_spec() {
    let canonical = canonical_text(ARGUMENTS).unwrap();
    assert_eq!(canonical, CANONICAL);
    assert_eq!(canonical.as_bytes(), CANONICAL.as_bytes());
    assert_eq!(arguments_hash(&canonical), HASH);
    let value: serde_json::Value = serde_json::from_str(ARGUMENTS).unwrap();
    assert_eq!(canonical_value_text(&value), CANONICAL);
}

#[test]
fn text_to_sign_matches_the_spec() {
    let expected = TEXT_TO_SIGN_WITH_LF_SHOWN.replace(r"\n", "\n");
    let text = example_text_to_sign();
    assert_eq!(text, expected);
    assert_eq!(text.lines().count(), 6);
    assert!(!text.ends_with('\n'));
}

#[test]
fn example_key_signs_the_spec_signature() {
    let signing_key = example_signing_key();
    let public_key = AgentPublicKey::parse_b64url(PUBLIC_KEY).unwrap();
    assert_eq!(
        public_key.as_bytes(),
        signing_key.verifying_key().as_bytes()
    );
    assert_eq!(public_key.to_b64url(), PUBLIC_KEY);

    let text = example_text_to_sign();
    let signature = signing_key.sign(text.as_bytes()).to_bytes();
    assert_eq!(b64::encode_url(&signature), SIGNATURE);

    let decoded = b64::decode_signature(SIGNATURE).unwrap();
    assert_eq!(decoded, signature);
    public_key.verify_strict(text.as_bytes(), &decoded).unwrap();
}

#[test]
fn example_signature_verifies_in_every_accepted_spelling_and_nowhere_else() {
    let public_key = AgentPublicKey::parse_b64url(PUBLIC_KEY).unwrap();
    let text = example_text_to_sign();
    let standard = SIGNATURE.replace('-', "+").replace('_', "/");
    for spelling in [
        SIGNATURE.to_owned(),
        format!("{SIGNATURE}=="),
        standard.clone(),
        format!("{standard}=="),
    ] {
        let bytes = b64::decode_signature(&spelling).unwrap();
        public_key.verify_strict(text.as_bytes(), &bytes).unwrap();
    }

    // One changed byte anywhere in the signed text breaks the signature.
    let signature = b64::decode_signature(SIGNATURE).unwrap();
    for (tool, agent, timestamp, nonce, hash) in [
        ("withdraw_findinG", AGENT_ID, 1_791_700_000, NONCE, HASH),
        (
            TOOL,
            "00000000-0000-4000-8000-000000000002",
            1_791_700_000,
            NONCE,
            HASH,
        ),
        (TOOL, AGENT_ID, 1_791_700_001, NONCE, HASH),
        (TOOL, AGENT_ID, 1_791_700_000, "n-3f9a1c2e7b5d4f61", HASH),
        (
            TOOL,
            AGENT_ID,
            1_791_700_000,
            NONCE,
            &HASH.replace('d', "e"),
        ),
    ] {
        let other = text_to_sign(tool, agent, timestamp, nonce, hash);
        assert!(
            public_key
                .verify_strict(other.as_bytes(), &signature)
                .is_err()
        );
    }
    // A trailing newline is a different text.
    assert!(
        public_key
            .verify_strict(format!("{text}\n").as_bytes(), &signature)
            .is_err()
    );
}

#[test]
fn reordered_or_respaced_arguments_give_the_same_canonical_text() {
    let compact = r#"{"reason":"test, caf\u00e9","finding_id":"11111111-2222-4333-8444-555555555555","agent_id":"00000000-0000-4000-8000-000000000001"}"#;
    let spaced = "\n{ \"finding_id\" :\t\"11111111-2222-4333-8444-555555555555\" ,\r\n \"agent_id\": \"00000000-0000-4000-8000-000000000001\", \"reason\" : \"test, café\" }\n";
    assert_eq!(canonical_text(compact).unwrap(), CANONICAL);
    assert_eq!(canonical_text(spaced).unwrap(), CANONICAL);
}
