//! KarmaDue core: what every service of the hub stands on.
//!
//! - [`db`]: the storage seam: one connection facade over SQLite and PostgreSQL, the
//!   dialect differences and the migrations.
//! - [`store`]: the store (SQLite WAL or PostgreSQL), read pool, and the group-commit writer.
//! - [`eventlog`]: the global hash-chained event log and its verifier.
//! - [`heads`]: the signed daily heads of that log (kd-log-head-v1).
//! - [`tlog`]: the transparency log over it: an RFC 6962 Merkle tree, signed checkpoints,
//!   proofs and tiles.
//! - [`clock`]: injected time.
//! - [`limits`]: per-minute limits (in memory, or in the database for several processes).
//! - [`keys`]: the hub's own signing keys and their JWKS.
//! - [`random`]: injected randomness.
//! - [`config`]: the typed configuration of `karmadue serve`.
//! - [`people`]: people's accounts, password hashes and sessions.
//! - [`outbound`]: the hub's one outbound HTTP client, with its guards against requests to
//!   local networks (SSRF).
//! - [`outbox`]: mail queued for people (sent by an SMTP relay, or read by the operator).
//! - [`page`]: the one page shell (head, policy, stylesheet, navigation) of every HTML page.
//! - [`scanner`]: the text scanner (rules that flag text for review, never certify it).

pub mod clock;
pub mod config;
pub mod db;
pub mod error;
pub mod eventlog;
pub mod heads;
pub mod keys;
pub mod limits;
pub mod outbound;
pub mod outbox;
pub mod page;
pub mod people;
pub mod private_files;
pub mod random;
pub mod scanner;
pub mod store;
pub mod tiers;
pub mod tlog;
