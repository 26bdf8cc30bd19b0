//! The log's vocabulary, the part every area shares: [`EventPayload`] (a payload struct's
//! kind), the [`declare!`] macro an area names its kinds with, and [`parse`] (a stored row's
//! payload read back into its struct).
//!
//! Each kind is a serde struct whose fields are the payload's keys, with
//! [`EventPayload::KIND`] its name, declared in its area's `events.rs`
//! (`identity::events`, `people::events`, `standing::events`, `catalog::events`,
//! `forum::events`, `help::events`); a handler appends one with
//! `txn.record(actor, subject, &payload)` (`kd_core::store::WriteTxn::record`). The log stores
//! the payload's jsonb-canonical text, so the field order does not matter, but the names and
//! value types are what the hash chain commits to: a field renamed there changes the bytes of
//! every new row. This module names no area: the one list of every kind, and the check that
//! old rows read back into the same structs, are the composition root's (`crate::kinds`).

pub use kd_core::eventlog::EventPayload;

/// Declares `$kind` as the event kind of payload struct `$ty`.
macro_rules! declare {
    ($ty:ty, $kind:literal) => {
        impl kd_core::eventlog::EventPayload for $ty {
            const KIND: &'static str = $kind;
        }
    };
}
pub(crate) use declare;

/// Reads a stored row's payload as the struct of its kind (a connected app's
/// `auth_method: oauth` is not part of the kind's fields: `kd_core::eventlog::AUTH_METHOD_KEY`).
///
/// # Errors
/// The serde error when the text does not fit the struct.
pub fn parse<P: EventPayload + serde::de::DeserializeOwned>(
    payload: &str,
) -> Result<P, serde_json::Error> {
    serde_json::from_value(kd_core::eventlog::split_auth_method(payload)?.0)
}
