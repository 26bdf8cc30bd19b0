//! The CSRF token of the forms shown before sign-in (`/signup`, `/signin`; docs/decisions.md
//! 140).
//!
//! A token is `<issued_ms>-<nonce>-<mac>`: the time it was made, 16 random bytes in hex, and
//! HMAC-SHA-256 (RFC 2104) over `kd-form-v1\n<issued_ms>\n<nonce>` keyed with a secret of
//! this hub ([`derive_key`]: HMAC-SHA-256 of `kd-form-key-v1` under kd-passport-1's seed). The
//! form page sets it as the `kd_form` cookie and as the form's `csrf` field; a POST is
//! accepted only when the two are equal **and** the token is one this hub made in the last
//! hour. A client can copy a token it was given, but cannot make one up, so a cookie planted
//! by a sibling site with a value of its choosing no longer passes.

use sha2::{Digest, Sha256};

/// How long a form token is accepted after it was made (the `kd_form` cookie's lifetime).
pub const FORM_TOKEN_TTL_MS: i64 = 3_600_000;
/// How far in the future a token's time may be (clock steps between hub processes).
const FUTURE_SLACK_MS: i64 = 60_000;
/// The label the form key is derived under.
const KEY_LABEL: &[u8] = b"kd-form-key-v1";
const BLOCK: usize = 64;

/// The form tokens' key of a hub whose kd-passport-1 seed is `passport_seed`: HMAC-SHA-256
/// of a fixed label under the seed, so it is as secret as the passport key, the same in every
/// process of the hub, and tells nothing about the seed.
pub fn derive_key(passport_seed: &[u8; 32]) -> [u8; 32] {
    hmac_sha256(passport_seed, KEY_LABEL)
}

/// Makes and checks form tokens with this hub's secret.
pub struct FormTokens {
    key: [u8; 32],
}

impl std::fmt::Debug for FormTokens {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("FormTokens([redacted])")
    }
}

impl FormTokens {
    /// Tokens keyed with `key` (the hub's [`derive_key`]).
    pub fn new(key: [u8; 32]) -> Self {
        Self { key }
    }

    /// A new token made at `now_ms` around `nonce` (random bytes).
    pub fn mint(&self, now_ms: i64, nonce: [u8; 16]) -> String {
        let nonce = hex::encode(nonce);
        let mac = hex::encode(self.mac(now_ms, &nonce));
        format!("{now_ms}-{nonce}-{mac}")
    }

    /// Whether `token` is one this hub made no more than [`FORM_TOKEN_TTL_MS`] before `now_ms`.
    pub fn is_valid(&self, token: &str, now_ms: i64) -> bool {
        let mut parts = token.split('-');
        let (Some(issued), Some(nonce), Some(mac), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let Ok(issued_ms) = issued.parse::<i64>() else {
            return false;
        };
        if issued != issued_ms.to_string()
            || nonce.len() != 32
            || !nonce.bytes().all(|byte| byte.is_ascii_hexdigit())
        {
            return false;
        }
        let age = now_ms.saturating_sub(issued_ms);
        if !(-FUTURE_SLACK_MS..=FORM_TOKEN_TTL_MS).contains(&age) {
            return false;
        }
        let Ok(given) = hex::decode(mac) else {
            return false;
        };
        let expected = self.mac(issued_ms, nonce);
        given.len() == expected.len()
            && given
                .iter()
                .zip(expected.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    fn mac(&self, issued_ms: i64, nonce: &str) -> [u8; 32] {
        hmac_sha256(
            &self.key,
            format!("kd-form-v1\n{issued_ms}\n{nonce}").as_bytes(),
        )
    }
}

/// HMAC-SHA-256 (RFC 2104) of `message` under `key` (at most one block long, as every key
/// here is).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_cases_1_and_6() {
        assert_eq!(
            hex::encode(hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn the_form_key_is_derived_apart_from_the_seed() {
        let key = derive_key(&[5; 32]);
        assert_eq!(key, derive_key(&[5; 32]));
        assert_ne!(key, derive_key(&[6; 32]));
        assert_ne!(key, [5; 32]);
    }

    #[test]
    fn only_this_hub_s_recent_tokens_pass() {
        let tokens = FormTokens::new([7; 32]);
        let token = tokens.mint(1_000_000, [1; 16]);
        assert!(tokens.is_valid(&token, 1_000_000));
        assert!(tokens.is_valid(&token, 1_000_000 + FORM_TOKEN_TTL_MS));
        assert!(!tokens.is_valid(&token, 1_000_001 + FORM_TOKEN_TTL_MS));
        assert!(!tokens.is_valid(&token, 1_000_000 - FUTURE_SLACK_MS - 1));
        assert!(!FormTokens::new([8; 32]).is_valid(&token, 1_000_000));
        let (head, _) = token.rsplit_once('-').unwrap();
        assert!(!tokens.is_valid(&format!("{head}-{}", "0".repeat(64)), 1_000_000));
        let moved = token.replacen("1000000", "1000001", 1);
        assert!(!tokens.is_valid(&moved, 1_000_001));
        for junk in ["", "abc", "1-2-3", "abc-def", &format!("{token}-x")] {
            assert!(!tokens.is_valid(junk, 1_000_000), "{junk}");
        }
    }
}
