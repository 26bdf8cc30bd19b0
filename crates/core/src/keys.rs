//! The hub's own Ed25519 key `kd-passport-1` (DECISIONS 10): made at first start, kept in the
//! data folder with owner-only permissions, published as a JWKS (spec "Signatures you can
//! check yourself"). It signs passports, receipts, outcome records, forum and stream frames and
//! log heads.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ed25519_dalek::{Signer, SigningKey};
use kd_protocol::b64;
use sha2::{Digest, Sha256};

/// The key id of the passport key, as published in the JWKS.
pub const PASSPORT_KEY_ID: &str = "kd-passport-1";

/// Key file failures.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file could not be read or written.
    #[error("key file {path}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file does not hold a 32-byte base64url seed.
    #[error("key file {0} is not a base64url Ed25519 seed")]
    Malformed(PathBuf),
}

/// An Ed25519 signing key of the hub, with its key id.
#[derive(Clone)]
pub struct ServerKey {
    key_id: &'static str,
    signing: SigningKey,
    /// Digests of (text, signature) pairs that verified: a passport's signed text and
    /// signature never change, so `verify_agent` need not verify the same pair on every call.
    verified: Arc<Mutex<HashSet<[u8; 32]>>>,
}

/// At most this many verified pairs are remembered (32 bytes each); when full, the set starts
/// over.
const VERIFIED_CAPACITY: usize = 65_536;

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerKey")
            .field("key_id", &self.key_id)
            .field("public_key", &self.public_key_b64url())
            .finish_non_exhaustive()
    }
}

impl ServerKey {
    /// Loads the key from `dir/<key_id>.key`, or makes one from `seed_source` and saves it
    /// (mode 0600) when the file does not exist yet.
    ///
    /// # Errors
    /// [`KeyFileError`] when the file cannot be read or written, or is malformed.
    pub fn load_or_create(
        dir: &Path,
        key_id: &'static str,
        seed_source: impl FnOnce() -> [u8; 32],
    ) -> Result<Self, KeyFileError> {
        let seed = load_or_create_seed(dir, key_id, seed_source)?;
        Ok(Self::new(key_id, &seed))
    }

    /// Loads the key from `dir/<key_id>.key`; `None` when the file does not exist (nothing is
    /// made).
    ///
    /// # Errors
    /// [`KeyFileError`] when the file cannot be read or is malformed.
    pub fn load(dir: &Path, key_id: &'static str) -> Result<Option<Self>, KeyFileError> {
        Ok(load_seed(dir, key_id)?.map(|seed| Self::new(key_id, &seed)))
    }

    /// A key from a known seed (tests and fixtures).
    pub fn from_seed(key_id: &'static str, seed: [u8; 32]) -> Self {
        Self::new(key_id, &seed)
    }

    fn new(key_id: &'static str, seed: &[u8; 32]) -> Self {
        Self {
            key_id,
            signing: SigningKey::from_bytes(seed),
            verified: Arc::default(),
        }
    }

    /// The key id, e.g. `kd-passport-1`.
    pub fn key_id(&self) -> &'static str {
        self.key_id
    }

    /// The 32-byte public key, base64url without padding.
    pub fn public_key_b64url(&self) -> String {
        b64::encode_url(self.signing.verifying_key().as_bytes())
    }

    /// The 32-byte public key.
    pub fn public_key_bytes(&self) -> [u8; 32] {
        self.signing.verifying_key().to_bytes()
    }

    /// Ed25519 signature over `bytes`, raw (a C2SP signed note carries it so).
    pub fn sign_bytes(&self, bytes: &[u8]) -> [u8; 64] {
        self.signing.sign(bytes).to_bytes()
    }

    /// Ed25519 signature over the UTF-8 bytes of `text`, base64url without padding.
    pub fn sign_text(&self, text: &str) -> String {
        b64::encode_url(&self.signing.sign(text.as_bytes()).to_bytes())
    }

    /// Checks a signature this key made over `text` (strict verification). A pair that
    /// verified once is remembered by its SHA-256 digest (length-prefixed text, then the
    /// signature text), so a changed text or signature is always checked afresh; a failure is
    /// never remembered.
    pub fn verify_text(&self, text: &str, signature_b64url: &str) -> bool {
        let mut hasher = Sha256::new();
        hasher.update((text.len() as u64).to_be_bytes());
        hasher.update(text.as_bytes());
        hasher.update(signature_b64url.as_bytes());
        let digest: [u8; 32] = hasher.finalize().into();
        if self
            .verified
            .lock()
            .is_ok_and(|verified| verified.contains(&digest))
        {
            return true;
        }
        let Ok(signature) = b64::decode_signature(signature_b64url) else {
            return false;
        };
        let valid = kd_protocol::keys::verify_strict_raw(
            &self.public_key_bytes(),
            text.as_bytes(),
            &signature,
        )
        .is_ok();
        if valid && let Ok(mut verified) = self.verified.lock() {
            if verified.len() >= VERIFIED_CAPACITY {
                verified.clear();
            }
            verified.insert(digest);
        }
        valid
    }

    /// This key as one JWK: `{kty: OKP, crv: Ed25519, x, kid, alg: EdDSA, use: sig}`.
    pub fn jwk(&self) -> serde_json::Value {
        serde_json::json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": self.public_key_b64url(),
            "kid": self.key_id,
            "alg": "EdDSA",
            "use": "sig",
        })
    }
}

/// Reads the 32-byte secret kept in `dir/<name>.key` (base64url, one line); `None` when the
/// file does not exist.
///
/// # Errors
/// [`KeyFileError`] when the file cannot be read or does not hold 32 base64url bytes.
pub fn load_seed(dir: &Path, name: &str) -> Result<Option<[u8; 32]>, KeyFileError> {
    let path = dir.join(format!("{name}.key"));
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let bytes =
                b64::decode_url(text.trim()).map_err(|_| KeyFileError::Malformed(path.clone()))?;
            let seed: [u8; 32] = bytes
                .try_into()
                .map_err(|_| KeyFileError::Malformed(path.clone()))?;
            Ok(Some(seed))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(KeyFileError::Io { path, source }),
    }
}

/// [`load_seed`], or, when the file does not exist, a secret from `seed_source` saved there
/// first (created new, mode 0600, synced), the folder made or tightened to 0700 either way.
/// The hub's server keys (DECISIONS 10) are kept so.
///
/// # Errors
/// [`KeyFileError`] when the file cannot be read, made or written, or is malformed.
pub fn load_or_create_seed(
    dir: &Path,
    name: &str,
    seed_source: impl FnOnce() -> [u8; 32],
) -> Result<[u8; 32], KeyFileError> {
    let path = dir.join(format!("{name}.key"));
    let io = |source| KeyFileError::Io {
        path: path.clone(),
        source,
    };
    // Made, or tightened when an earlier version made it with the umask's mode.
    crate::private_files::make_private_dir(dir).map_err(io)?;
    if let Some(seed) = load_seed(dir, name)? {
        return Ok(seed);
    }
    let seed = seed_source();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path).map_err(io)?;
    file.write_all(format!("{}\n", b64::encode_url(&seed)).as_bytes())
        .map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(seed)
}

/// A JWKS document (`{"keys": [...]}`) for the given keys.
pub fn jwks(keys: &[&ServerKey]) -> serde_json::Value {
    serde_json::json!({ "keys": keys.iter().map(|key| key.jwk()).collect::<Vec<_>>() })
}

/// Pins `public_key` as the database's key `key_id` when none is pinned yet, and otherwise
/// checks that it is the one pinned (table `server_keys`). Several hub processes on one
/// PostgreSQL database must all sign with the same keys.
///
/// # Errors
/// `Ok(Err(message))` naming both keys when this process holds another one; `Err` when the
/// store fails.
pub fn pin_public_key(
    store: &crate::store::Store,
    key_id: &str,
    public_key: &str,
) -> Result<Result<(), String>, crate::store::StoreError> {
    let (key_id, public_key) = (key_id.to_owned(), public_key.to_owned());
    let now_ms = store.clock().now_ms();
    let store = store.clone();
    crate::db::off_runtime(move || {
        store.transact_blocking(move |conn| -> Result<_, crate::store::StoreError> {
            conn.execute(
                "INSERT INTO server_keys (key_id, public_key, pinned_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key_id) DO NOTHING",
                crate::params![key_id, public_key, now_ms],
            )?;
            let pinned: String = conn.query_row(
                "SELECT public_key FROM server_keys WHERE key_id = ?1",
                [&key_id],
                |row| row.get(0),
            )?;
            Ok(if pinned == public_key {
                Ok(())
            } else {
                Err(format!(
                    "this database's hubs sign with {key_id} {pinned}, but this process holds {public_key}: copy the keys folder of the hub that first opened the database (docs/decisions.md 153)"
                ))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_with_owner_only_mode_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let first = ServerKey::load_or_create(dir.path(), PASSPORT_KEY_ID, || [7; 32]).unwrap();
        let again = ServerKey::load_or_create(dir.path(), PASSPORT_KEY_ID, || [9; 32]).unwrap();
        assert_eq!(first.public_key_b64url(), again.public_key_b64url());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("kd-passport-1.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            // Issue 35: the keys folder is owner-only too (it was made with the umask's mode).
            let folder = std::fs::metadata(dir.path()).unwrap().permissions().mode();
            assert_eq!(folder & 0o777, 0o700);
        }
        let signature = first.sign_text("hello");
        assert!(again.verify_text("hello", &signature));
        assert!(!again.verify_text("hello!", &signature));
        let jwk = first.jwk();
        assert_eq!(jwk["kty"], "OKP");
        assert_eq!(jwk["crv"], "Ed25519");
        assert_eq!(jwk["kid"], "kd-passport-1");
        assert_eq!(jwk["alg"], "EdDSA");
    }

    #[test]
    fn a_remembered_verification_never_vouches_for_another_text_or_signature() {
        let key = ServerKey::from_seed(PASSPORT_KEY_ID, [3; 32]);
        let other = ServerKey::from_seed(PASSPORT_KEY_ID, [4; 32]);
        let signature = key.sign_text("passport v1");
        // Twice: the second answer comes from the remembered digest.
        assert!(key.verify_text("passport v1", &signature));
        assert!(key.verify_text("passport v1", &signature));
        assert!(!key.verify_text("passport v2", &signature));
        assert!(!key.verify_text("passport v1", &key.sign_text("passport v2")));
        assert!(!key.verify_text("passport v1", "not base64"));
        // Length-prefixed: moving bytes between the text and the signature text is no match.
        assert!(!key.verify_text("passport v", &format!("1{signature}")));
        // Another key (a clone shares the memory; a different key has its own).
        assert!(!other.verify_text("passport v1", &signature));
        assert!(key.clone().verify_text("passport v1", &signature));
    }
}
