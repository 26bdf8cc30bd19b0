//! Agent ids and handles.
//!
//! An agent id is a lowercase UUID with dashes (spec "Signing a write", line 3 of the text to
//! sign). The handle is `kd_` followed by 12 lowercase hex characters, the first six bytes of
//! SHA-256 over the agent id's text (spec "Forum authors": "handle is the stable kd_ handle").

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// An agent id: a UUID printed lowercase with dashes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct AgentId(uuid::Uuid);

/// Why a text is not an agent id or handle.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IdError {
    /// Not a UUID in the lowercase hyphenated form.
    #[error("agent_id must be a lowercase uuid with dashes")]
    NotAgentId,
    /// Not `kd_` plus 12 lowercase hex characters.
    #[error("handle must be kd_ followed by 12 lowercase hex characters")]
    NotHandle,
}

impl AgentId {
    /// Wraps random bytes (from the caller's RNG) as a version-4 UUID.
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        Self(uuid::Builder::from_random_bytes(bytes).into_uuid())
    }

    /// The `kd_` handle derived from this id.
    pub fn handle(&self) -> Handle {
        let digest = Sha256::digest(self.to_string().as_bytes());
        Handle(format!("kd_{}", hex::encode(&digest[..6])))
    }
}

impl FromStr for AgentId {
    type Err = IdError;
    /// Accepts only the 36-character lowercase hyphenated form, so that the text the agent
    /// signs and the id the hub stores are the same bytes.
    fn from_str(text: &str) -> Result<Self, IdError> {
        if text.len() != 36
            || text.bytes().any(|b| b.is_ascii_uppercase())
            || text
                .as_bytes()
                .iter()
                .enumerate()
                .any(|(i, &b)| matches!(i, 8 | 13 | 18 | 23) != (b == b'-'))
        {
            return Err(IdError::NotAgentId);
        }
        uuid::Uuid::parse_str(text)
            .map(Self)
            .map_err(|_| IdError::NotAgentId)
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A `kd_` handle: `kd_` plus 12 lowercase hex characters.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Handle(String);

impl Handle {
    /// The handle text, for example `kd_f7b5a734c3ed`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Handle {
    type Err = IdError;
    fn from_str(text: &str) -> Result<Self, IdError> {
        let hex_part = text.strip_prefix("kd_").ok_or(IdError::NotHandle)?;
        if hex_part.len() == 12
            && hex_part
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            Ok(Self(text.to_owned()))
        } else {
            Err(IdError::NotHandle)
        }
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_accepts_only_lowercase_hyphenated_uuids() {
        let id: AgentId = "00000000-0000-4000-8000-000000000001".parse().unwrap();
        assert_eq!(id.to_string(), "00000000-0000-4000-8000-000000000001");
        assert!(
            "00000000-0000-4000-8000-00000000000A"
                .parse::<AgentId>()
                .is_err()
        );
        assert!(
            "0000000000004000800000000000000a"
                .parse::<AgentId>()
                .is_err()
        );
        assert!(
            "{00000000-0000-4000-8000-000000000001}"
                .parse::<AgentId>()
                .is_err()
        );
        assert!("kd_0123456789ab".parse::<AgentId>().is_err());
    }

    #[test]
    fn handle_is_kd_and_twelve_hex_and_stable() {
        let id: AgentId = "00000000-0000-4000-8000-000000000001".parse().unwrap();
        let handle = id.handle();
        assert_eq!(handle.as_str().len(), 15);
        assert_eq!(handle, id.handle());
        assert!(handle.as_str().parse::<Handle>().is_ok());
        assert!("kd_XYZ".parse::<Handle>().is_err());
    }
}
