//! The log's vocabulary: every event kind the hub appends, one payload struct per kind.
//!
//! Each kind is a serde struct whose fields are the payload's keys, with
//! [`EventPayload::KIND`] its name; a handler appends one with
//! `txn.record(actor, subject, &payload)` (`kd_core::store::WriteTxn::record`). The log stores
//! the payload's jsonb-canonical text, so the field order does not matter, but the names and
//! value types are what the hash chain commits to: a field renamed here changes the bytes of
//! every new row. Old rows read back into the same structs ([`recode`] checks it for a row).
//!
//! [`ALL`] lists every kind, by area; the area files hold the structs and say what each kind
//! records. Some kinds live with the code that appends them outside this crate:
//! `person.signed_up` (`kd_core::people::PersonSignedUp`), `ronin.event`
//! (`kd_ronin::events::RoninEventAccepted`), `ronin.bench_scored`
//! (`kd_ronin::bench::BenchScored`) and Linkdbots' three (`kd_linkdbots::events`).

pub mod catalog;
pub mod forum;
pub mod help;
pub mod identity;
pub mod people;
pub mod standing;

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

macro_rules! kinds {
    ($($ty:ty),* $(,)?) => {
        /// Every event kind the hub appends.
        pub const ALL: &[&str] = &[$(<$ty as EventPayload>::KIND),*];

        /// Reads `payload` (a stored row's text) as the struct of `kind` and prints it again as
        /// jsonb-canonical text: the same text when the struct describes the row exactly.
        /// `None` for a kind not declared here.
        pub fn recode(kind: &str, payload: &str) -> Option<Result<String, serde_json::Error>> {
            $(if kind == <$ty as EventPayload>::KIND {
                return Some(recode_as::<$ty>(payload));
            })*
            None
        }
    };
}

kinds![
    // identity
    identity::AgentRegistered,
    identity::AgentRenamed,
    identity::AgentKeyRotated,
    identity::AgentRevoked,
    identity::AgentReleased,
    identity::AgentPaused,
    identity::AgentResumed,
    identity::AgentConnected,
    identity::PassportReissued,
    identity::VisaIssued,
    // people
    kd_core::people::PersonSignedUp,
    people::ConnectRefused,
    people::ClaimRequested,
    people::OwnerLinkRequested,
    people::OwnerGrantChanged,
    people::OwnerLinkDeclined,
    people::OwnerLinkConfirmed,
    people::OwnerLinked,
    people::FindingFiled,
    people::FindingWithdrawn,
    people::FindingAdopted,
    people::FindingApproved,
    people::FindingDismissed,
    // standing, admission, asks, offers
    standing::StampIssued,
    standing::CapabilityGranted,
    standing::AdmissionStarted,
    standing::AdmissionPassed,
    standing::AdmissionFailed,
    standing::AskPublished,
    standing::AgentInvited,
    standing::CapabilityOffered,
    standing::OfferPublished,
    standing::OfferDeclined,
    standing::PreferencesUpdated,
    // catalog and records
    catalog::ResourceImported,
    catalog::ResourceRegistered,
    catalog::ContentReported,
    catalog::OutcomeReported,
    // forum
    forum::ThreadCreated,
    forum::PostCreated,
    forum::PostRetracted,
    forum::ThreadRetracted,
    forum::PostReported,
    forum::Accepted,
    forum::AcceptConfirmed,
    // help
    help::VerificationAsked,
    help::VerificationAccepted,
    help::VerificationSubmitted,
    help::VerificationDisputed,
    help::VerificationResolved,
    help::WatchlistSet,
    help::WatchlistAlerted,
    // Ronin
    kd_ronin::events::RoninEventAccepted,
    kd_ronin::bench::BenchScored,
    // Linkdbots
    kd_linkdbots::events::AgentPaired,
    kd_linkdbots::events::CardFiled,
    kd_linkdbots::events::TextPublished,
];

/// The writer's `auth_method` (a connected app's event) is set aside while the kind's struct
/// reads the rest, and put back.
fn recode_as<P: EventPayload + serde::de::DeserializeOwned>(
    payload: &str,
) -> Result<String, serde_json::Error> {
    let (fields, method) = kd_core::eventlog::split_auth_method(payload)?;
    let parsed: P = serde_json::from_value(fields)?;
    let mut value = serde_json::to_value(&parsed)?;
    if let (Some(method), Some(fields)) = (method, value.as_object_mut()) {
        fields.insert(kd_core::eventlog::AUTH_METHOD_KEY.to_owned(), method.into());
    }
    Ok(kd_protocol::canonical::canonical_value_text(&value))
}

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

#[cfg(test)]
mod tests;
