//! Checkpoints: C2SP `tlog-checkpoint` text in a C2SP `signed-note`, Ed25519.
//!
//! The checkpoint body is three lines, each ending in LF:
//!
//! ```text
//! <origin>                 e.g. hub.example/kd-log: the public URL's host[:port] + "/kd-log"
//! <tree size>              decimal: the seq of the last event the tree holds
//! <root hash>              standard base64 of the 32-byte RFC 6962 root
//! ```
//!
//! The note is the body, an empty line, and one signature line per signer:
//! `— <key name> <base64(key hash || signature)>` (an em dash, U+2014), where the key name is
//! the origin, the key hash is the first 4 bytes of SHA-256(key name || 0x0A || 0x01 ||
//! public key) and the signature is Ed25519 over the body's bytes, by the hub's server key
//! `kd-passport-1` (the key of its JWKS). Any C2SP note verifier (Go's
//! `golang.org/x/mod/sumdb/note` with the verifier key `<name>+<hex key hash>+<base64(0x01 ||
//! public key)>`) checks it.

use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};

use super::{Hash, b64, parse_b64};
use crate::keys::ServerKey;

/// The signature line's prefix: an em dash and a space.
const DASH: &str = "\u{2014} ";

/// Ed25519's signature type byte in a C2SP note key.
const ED25519: u8 = 0x01;

/// A checkpoint's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's origin line.
    pub origin: String,
    /// Leaves in the tree.
    pub size: u64,
    /// The tree's root hash.
    pub root: Hash,
}

impl Checkpoint {
    /// The checkpoint body: origin, size and base64 root, each line ending in LF.
    pub fn body(&self) -> String {
        format!("{}\n{}\n{}\n", self.origin, self.size, b64(&self.root))
    }

    /// Parses a checkpoint body (extension lines after the third are allowed and ignored).
    ///
    /// # Errors
    /// What is malformed.
    pub fn parse(body: &str) -> Result<Self, String> {
        let mut lines = body.split('\n');
        let origin = lines.next().filter(|line| !line.is_empty());
        let size = lines.next().and_then(|line| line.parse::<u64>().ok());
        let root = lines.next().map(parse_b64);
        match (origin, size, root) {
            (Some(origin), Some(size), Some(Ok(root))) if body.ends_with('\n') => Ok(Self {
                origin: origin.to_owned(),
                size,
                root,
            }),
            _ => Err("not a tlog-checkpoint: origin, size and base64 root lines".into()),
        }
    }
}

/// The origin of the hub whose public URL is `public_url`: its host (and port, when given)
/// followed by `/kd-log`, e.g. `https://hub.example` → `hub.example/kd-log`.
pub fn origin_of(public_url: &str) -> String {
    let rest = public_url
        .split_once("://")
        .map_or(public_url, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    format!("{}/kd-log", host.to_ascii_lowercase())
}

/// The C2SP key hash of an Ed25519 key named `name`.
pub fn key_hash(name: &str, public_key: &[u8; 32]) -> [u8; 4] {
    let mut hasher = Sha256::new();
    hasher.update(name.as_bytes());
    hasher.update([b'\n', ED25519]);
    hasher.update(public_key);
    let digest = hasher.finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The C2SP verifier key text of `name`'s Ed25519 key: `<name>+<hex key hash>+<base64(0x01
/// || public key)>`, what Go's `note.NewVerifier` reads.
pub fn verifier_key(name: &str, public_key: &[u8; 32]) -> String {
    let mut typed = vec![ED25519];
    typed.extend_from_slice(public_key);
    format!(
        "{name}+{}+{}",
        hex::encode(key_hash(name, public_key)),
        b64(&typed)
    )
}

/// The signed note of `checkpoint`, signed by `key` under the checkpoint's origin.
pub fn sign(checkpoint: &Checkpoint, key: &ServerKey) -> String {
    sign_note(&checkpoint.body(), &checkpoint.origin, key)
}

/// The C2SP signed note of `body` (text ending in LF), signed by `key` under `name`.
pub fn sign_note(body: &str, name: &str, key: &ServerKey) -> String {
    let mut signature = key_hash(name, &key.public_key_bytes()).to_vec();
    signature.extend_from_slice(&key.sign_bytes(body.as_bytes()));
    format!("{body}\n{DASH}{name} {}\n", b64(&signature))
}

/// Checks a signed note of a checkpoint: it has a signature line by `name` with `public_key`
/// whose key hash matches and whose Ed25519 signature verifies over the body, and the body
/// is a checkpoint whose origin is `name`. Returns the checkpoint.
///
/// # Errors
/// What does not verify, in plain words.
pub fn verify(note: &str, name: &str, public_key: &[u8; 32]) -> Result<Checkpoint, String> {
    let body = verify_note(note, name, public_key)?;
    let checkpoint = Checkpoint::parse(&body)?;
    if checkpoint.origin != name {
        return Err(format!(
            "the checkpoint's origin {:?} is not {name:?}",
            checkpoint.origin
        ));
    }
    Ok(checkpoint)
}

/// Checks a C2SP signed note has a valid Ed25519 signature by `name` with `public_key`, and
/// returns its body.
///
/// # Errors
/// What does not verify, in plain words.
pub fn verify_note(note: &str, name: &str, public_key: &[u8; 32]) -> Result<String, String> {
    let Some((body, signatures)) = note.split_once("\n\n") else {
        return Err("not a signed note: no empty line before the signatures".into());
    };
    let body = format!("{body}\n");
    let key = VerifyingKey::from_bytes(public_key).map_err(|error| error.to_string())?;
    let want = key_hash(name, public_key);
    let mut signed = false;
    for line in signatures.split('\n').filter(|line| !line.is_empty()) {
        let Some((signer, blob)) = line
            .strip_prefix(DASH)
            .and_then(|rest| rest.rsplit_once(' '))
        else {
            return Err(format!("malformed signature line {line:?}"));
        };
        let Ok(bytes) = kd_protocol::b64::decode_signature(blob) else {
            return Err(format!("signature of {signer:?} is not base64"));
        };
        if signer != name || bytes.len() != 68 || bytes[..4] != want {
            continue;
        }
        let signature = Signature::from_slice(&bytes[4..]).map_err(|error| error.to_string())?;
        if key.verify_strict(body.as_bytes(), &signature).is_err() {
            return Err(format!("the signature of {name} does not verify"));
        }
        signed = true;
    }
    if !signed {
        return Err(format!("no signature by {name} with the hub's key"));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Go's `golang.org/x/mod/sumdb/note` documentation (BSD-style licence):
    /// its signer key `PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz`
    /// (type byte 0x01, then the Ed25519 seed), its verifier key and its signed note.
    #[test]
    fn notes_match_gos_reference_example_byte_for_byte() {
        use base64::Engine as _;
        let typed = base64::engine::general_purpose::STANDARD
            .decode("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")
            .unwrap();
        let key = ServerKey::from_seed("kd-passport-1", typed[1..].try_into().unwrap());
        let text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
        let note = sign_note(text, "PeterNeumann", &key);
        assert_eq!(
            note,
            format!(
                "{text}\n\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
            )
        );
        assert_eq!(
            verifier_key("PeterNeumann", &key.public_key_bytes()),
            "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
        );
        assert_eq!(
            verify_note(&note, "PeterNeumann", &key.public_key_bytes()).as_deref(),
            Ok(text)
        );
    }

    #[test]
    fn origins_come_from_the_public_urls_host() {
        assert_eq!(origin_of("https://Hub.Example"), "hub.example/kd-log");
        assert_eq!(
            origin_of("http://127.0.0.1:8080/x"),
            "127.0.0.1:8080/kd-log"
        );
    }

    #[test]
    fn a_signed_checkpoint_verifies_and_a_changed_one_does_not() {
        let key = ServerKey::from_seed("kd-passport-1", [7; 32]);
        let checkpoint = Checkpoint {
            origin: "hub.example/kd-log".into(),
            size: 8,
            root: [3; 32],
        };
        let note = sign(&checkpoint, &key);
        assert!(note.starts_with("hub.example/kd-log\n8\nAwMD"));
        assert!(note.contains("\n\n\u{2014} hub.example/kd-log "));
        let public = key.public_key_bytes();
        assert_eq!(verify(&note, "hub.example/kd-log", &public), Ok(checkpoint));
        let changed = note.replacen("\n8\n", "\n9\n", 1);
        assert!(verify(&changed, "hub.example/kd-log", &public).is_err());
        let other = ServerKey::from_seed("kd-passport-1", [8; 32]).public_key_bytes();
        assert!(verify(&note, "hub.example/kd-log", &other).is_err());
        assert!(verify(&note, "other.example/kd-log", &public).is_err());
        let vkey = verifier_key("hub.example/kd-log", &public);
        assert!(vkey.starts_with("hub.example/kd-log+"));
    }
}
