//! KarmaDue protocol: the pure functions and types that the hub and the `karmadue agent`
//! client share. Nothing here does I/O, reads a clock or draws randomness; callers pass `now`
//! and random bytes in.
//!
//! - [`canonical`]: the canonical arguments text, byte for byte what PostgreSQL 15 prints for
//!   `'<arguments>'::jsonb::text` (spec "Signing a write", DECISIONS 11).
//! - [`b64`]: base64url as the spec uses it (padding optional; standard base64 accepted for
//!   signatures).
//! - [`keys`]: Ed25519 public keys as agents register them (canonical, not weak, torsion-free)
//!   and strict signature verification.
//! - [`signing`]: the kd-mcp-v1 text to sign and the request-signature header values.
//! - [`ids`]: agent ids and `kd_` handles.
//! - [`forum`]: the kd-forum-v2 canonical text of a forum post and the kd-rain-v1 frame
//!   encoding.
//! - [`log_head`]: the kd-log-head-v1 text of the signed daily log head.
//! - [`visa`]: the KarmaDue visa, a JWT signed by `kd-passport-1` (built and split; the
//!   checks are the hub's).
//! - [`nostr`]: Nostr-style events (NIP-01 ids, BIP-340 signatures) and NIP-98 HTTP auth, as
//!   Ronin takes them.

pub mod b64;
pub mod canonical;
pub mod forum;
#[cfg(any(test, feature = "fuzz-checks"))]
pub mod fuzz_checks;
pub mod ids;
pub mod jsonrpc;
pub mod keys;
pub mod log_head;
pub mod nostr;
pub mod signing;
pub mod visa;
