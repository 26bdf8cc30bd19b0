//! Key registration checks (spec "Signing a write (kd-mcp-v1)": bring-your-own Ed25519 keys) and
//! the base64 forms the spec accepts.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly on purpose.

use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use kd_protocol::b64::{self, B64Error};
use kd_protocol::keys::{AgentPublicKey, KeyError, verify_strict_raw};

/// The spec's published example key (seed bytes 00 01 02 ... 1f).
const EXAMPLE_PUBLIC_KEY: &str = "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg";

/// A point of order 8 (its canonical encoding, as listed among Ed25519's small-order points).
const ORDER_EIGHT: &str = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a";

fn point(hex_bytes: &str) -> EdwardsPoint {
    let bytes: [u8; 32] = hex::decode(hex_bytes).unwrap().try_into().unwrap();
    CompressedEdwardsY(bytes).decompress().unwrap()
}

fn example_point() -> EdwardsPoint {
    let bytes: [u8; 32] = b64::decode_url(EXAMPLE_PUBLIC_KEY)
        .unwrap()
        .try_into()
        .unwrap();
    CompressedEdwardsY(bytes).decompress().unwrap()
}

/// `y + 2^255 - 19` (that is, y + p) as little-endian bytes, for small y: the same field
/// element as y, written non-canonically.
fn y_plus_p(y: u8) -> [u8; 32] {
    let mut bytes = [0xff; 32];
    bytes[0] = 0xed;
    bytes[31] = 0x7f;
    // p = 2^255 - 19 ends in 0xed; adding y < 19 never carries out of the first byte.
    bytes[0] += y;
    bytes
}

#[test]
fn example_key_is_accepted() {
    let key = AgentPublicKey::parse_b64url(EXAMPLE_PUBLIC_KEY).unwrap();
    assert_eq!(key.to_b64url(), EXAMPLE_PUBLIC_KEY);
    // Padding is optional.
    assert_eq!(
        AgentPublicKey::parse_b64url(&format!("{EXAMPLE_PUBLIC_KEY}=")).unwrap(),
        key
    );
    let reloaded = AgentPublicKey::from_bytes_unchecked_registered(*key.as_bytes()).unwrap();
    assert_eq!(reloaded, key);
}

#[test]
fn small_order_keys_are_refused() {
    let order_eight = point(ORDER_EIGHT);
    assert!(order_eight.is_small_order());
    let identity = {
        let mut bytes = [0u8; 32];
        bytes[0] = 1;
        bytes
    };
    for bytes in [order_eight.compress().to_bytes(), identity] {
        // ed25519-dalek's own word for it, too.
        assert!(VerifyingKey::from_bytes(&bytes).unwrap().is_weak());
        assert_eq!(
            AgentPublicKey::parse_b64url(&b64::encode_url(&bytes)),
            Err(KeyError::WeakKey)
        );
    }
}

#[test]
fn non_canonical_encodings_are_refused() {
    // y ≥ p: every y + p (y < 19) that decodes to a point at all, weak or not.
    let mut decoding = 0;
    let mut not_weak = 0;
    for y in 0..19 {
        for sign in [0u8, 0x80] {
            let mut bytes = y_plus_p(y);
            bytes[31] |= sign;
            let Some(point) = CompressedEdwardsY(bytes).decompress() else {
                continue;
            };
            decoding += 1;
            if !point.is_small_order() {
                not_weak += 1;
            }
            assert_ne!(point.compress().to_bytes(), bytes);
            assert_eq!(
                AgentPublicKey::parse_b64url(&b64::encode_url(&bytes)),
                Err(KeyError::NotCanonical),
                "y = p + {y}, sign {sign:#x}"
            );
        }
    }
    assert!(
        decoding > 0 && not_weak > 0,
        "found {decoding} decoding, {not_weak} not weak"
    );

    // x = 0 with the sign bit set ("-0"): y = 1 and y = p - 1.
    let mut minus_zero = [0u8; 32];
    minus_zero[0] = 1;
    minus_zero[31] = 0x80;
    assert_eq!(
        AgentPublicKey::parse_b64url(&b64::encode_url(&minus_zero)),
        Err(KeyError::NotCanonical)
    );
}

#[test]
fn torsioned_keys_are_refused() {
    let torsioned = example_point() + point(ORDER_EIGHT);
    assert!(!torsioned.is_small_order());
    assert!(!torsioned.is_torsion_free());
    let bytes = torsioned.compress().to_bytes();
    assert_eq!(
        AgentPublicKey::parse_b64url(&b64::encode_url(&bytes)),
        Err(KeyError::Torsion)
    );
    // Loading a stored key skips the registration checks on purpose.
    assert!(AgentPublicKey::from_bytes_unchecked_registered(bytes).is_ok());
}

#[test]
fn wrong_lengths_and_texts_are_refused() {
    let bytes = b64::decode_url(EXAMPLE_PUBLIC_KEY).unwrap();
    assert_eq!(
        AgentPublicKey::parse_b64url(&b64::encode_url(&bytes[..31])),
        Err(KeyError::BadLength { len: 31 })
    );
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        AgentPublicKey::parse_b64url(&b64::encode_url(&long)),
        Err(KeyError::BadLength { len: 33 })
    );
    assert!(matches!(
        AgentPublicKey::parse_b64url(""),
        Err(KeyError::BadLength { len: 0 })
    ));
    // Standard base64 is not accepted for keys, nor whitespace.
    let standard = EXAMPLE_PUBLIC_KEY.replace('_', "/");
    assert!(matches!(
        AgentPublicKey::parse_b64url(&standard),
        Err(KeyError::NotBase64(_))
    ));
    assert!(matches!(
        AgentPublicKey::parse_b64url(&format!(" {EXAMPLE_PUBLIC_KEY}")),
        Err(KeyError::NotBase64(_))
    ));
}

#[test]
fn bytes_that_are_no_point_are_refused() {
    // Find an encoding that does not decompress (about half of all y values).
    let bytes = (2u8..)
        .map(|y| {
            let mut bytes = [0u8; 32];
            bytes[0] = y;
            bytes
        })
        .find(|bytes| CompressedEdwardsY(*bytes).decompress().is_none())
        .unwrap();
    assert_eq!(
        AgentPublicKey::parse_b64url(&b64::encode_url(&bytes)),
        Err(KeyError::NotOnCurve)
    );
    assert_eq!(
        AgentPublicKey::from_bytes_unchecked_registered(bytes),
        Err(KeyError::NotOnCurve)
    );
    assert_eq!(
        verify_strict_raw(&bytes, b"m", &[0; 64]),
        Err(KeyError::NotOnCurve)
    );
}

#[test]
fn verify_strict_checks_length_and_content() {
    let signing_key = SigningKey::from_bytes(&[7; 32]);
    let key =
        AgentPublicKey::parse_b64url(&b64::encode_url(signing_key.verifying_key().as_bytes()))
            .unwrap();
    let signature = signing_key.sign(b"message").to_bytes();
    key.verify_strict(b"message", &signature).unwrap();
    verify_strict_raw(key.as_bytes(), b"message", &signature).unwrap();
    assert_eq!(
        key.verify_strict(b"messagE", &signature),
        Err(KeyError::BadSignature)
    );
    assert_eq!(
        key.verify_strict(b"message", &signature[..63]),
        Err(KeyError::BadSignatureLength { len: 63 })
    );
    let mut long = signature.to_vec();
    long.push(0);
    assert_eq!(
        key.verify_strict(b"message", &long),
        Err(KeyError::BadSignatureLength { len: 65 })
    );

    // s + L: the same signature with a non-canonical scalar, which verify_strict refuses.
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let mut malleated = signature;
    let mut carry = 0u16;
    for i in 0..32 {
        let sum = u16::from(malleated[32 + i]) + u16::from(L[i]) + carry;
        malleated[32 + i] = sum as u8;
        carry = sum >> 8;
    }
    // s < L < 2^253, so s + L < 2^254 fits the 32 bytes.
    assert_eq!(carry, 0);
    assert_eq!(
        key.verify_strict(b"message", &malleated),
        Err(KeyError::BadSignature)
    );
}

#[test]
fn base64url_round_trips_and_refuses_garbage() {
    for len in 0..70 {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
        let text = b64::encode_url(&bytes);
        assert!(!text.contains(['=', '+', '/']));
        assert_eq!(b64::decode_url(&text).unwrap(), bytes);
        assert_eq!(b64::decode_signature(&text).unwrap(), bytes);
        let padded = format!("{text}{}", "=".repeat((4 - text.len() % 4) % 4));
        assert_eq!(b64::decode_url(&padded).unwrap(), bytes);
        assert_eq!(b64::decode_signature(&padded).unwrap(), bytes);
    }
    assert_eq!(b64::encode_url(&[0xfb, 0xff]), "-_8");
    for bad in [
        "-_8 ", " -_8", "-_\n8", "+/8", "-_9", "-_8==", "-_8===", "a", "ab=c", "é", "-_8\0",
    ] {
        assert!(b64::decode_url(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn signature_decoding_accepts_both_alphabets_but_not_a_mixture() {
    assert_eq!(b64::decode_signature("-_8").unwrap(), vec![0xfb, 0xff]);
    assert_eq!(b64::decode_signature("+/8").unwrap(), vec![0xfb, 0xff]);
    assert_eq!(b64::decode_signature("+/8=").unwrap(), vec![0xfb, 0xff]);
    assert_eq!(b64::decode_signature("-/8"), Err(B64Error::MixedAlphabets));
    assert_eq!(b64::decode_signature("+_8="), Err(B64Error::MixedAlphabets));
    for bad in ["+/9", "+/8 ", "+/8==", "-_8\t", "%%%%", "ab=c"] {
        assert!(b64::decode_signature(bad).is_err(), "{bad:?} accepted");
    }
}
