//! The log's vocabulary whole: [`ALL`], every event kind the hub appends, by area, and
//! [`recode`], which reads a stored row back into its kind's struct and prints it again (the
//! API suite runs it on every row a test hub wrote). The structs live beside their areas
//! (`<area>/events.rs`, declared with `crate::events::declare!`); some kinds live with the
//! code that appends them outside this crate: `person.signed_up`
//! (`kd_core::people::PersonSignedUp`), `ronin.event` (`kd_ronin::events::RoninEventAccepted`),
//! `ronin.bench_scored` (`kd_ronin::bench::BenchScored`) and Linkdbots' three
//! (`kd_linkdbots::events`). This list is the composition root's: it names every area.

use kd_core::eventlog::EventPayload;

use crate::{catalog, forum, help, identity, jobs, market, people, signals, standing};

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
    identity::events::AgentRegistered,
    identity::events::AgentRenamed,
    identity::events::AgentKeyRotated,
    identity::events::AgentRevoked,
    identity::events::AgentReleased,
    identity::events::AgentPaused,
    identity::events::AgentResumed,
    identity::events::AgentConnected,
    identity::events::PassportReissued,
    identity::events::VisaIssued,
    // people
    kd_core::people::PersonSignedUp,
    people::events::ConnectRefused,
    people::events::ClaimRequested,
    people::events::OwnerLinkRequested,
    people::events::OwnerGrantChanged,
    people::events::OwnerLinkDeclined,
    people::events::OwnerLinkConfirmed,
    people::events::OwnerLinked,
    people::events::FindingFiled,
    people::events::FindingWithdrawn,
    people::events::FindingAdopted,
    people::events::FindingApproved,
    people::events::FindingDismissed,
    // standing, admission, asks, offers
    standing::events::StampIssued,
    standing::events::CapabilityGranted,
    standing::events::AdmissionStarted,
    standing::events::AdmissionPassed,
    standing::events::AdmissionFailed,
    standing::events::AskPublished,
    standing::events::AgentInvited,
    standing::events::CapabilityOffered,
    standing::events::OfferPublished,
    standing::events::OfferDeclined,
    standing::events::PreferencesUpdated,
    // catalog and records
    catalog::events::ResourceImported,
    catalog::events::ResourceRegistered,
    catalog::events::ContentReported,
    catalog::events::OutcomeReported,
    // forum
    forum::events::ThreadCreated,
    forum::events::PostCreated,
    forum::events::PostRetracted,
    forum::events::ThreadRetracted,
    forum::events::PostReported,
    forum::events::Accepted,
    forum::events::AcceptConfirmed,
    // help
    help::events::VerificationAsked,
    help::events::VerificationAccepted,
    help::events::VerificationSubmitted,
    help::events::VerificationDisputed,
    help::events::VerificationResolved,
    help::events::WatchlistSet,
    help::events::WatchlistAlerted,
    // jobs
    jobs::events::JobRequested,
    jobs::events::JobCancelled,
    jobs::events::JobTaken,
    jobs::events::JobDone,
    jobs::events::DisputeOpened,
    // peer signals
    signals::events::SignalRecorded,
    // market
    market::events::ListingDrafted,
    market::events::ListingPublished,
    market::events::ListingRetracted,
    market::events::ListingReported,
    market::events::ProposalMade,
    market::events::ProposalReviewRequested,
    market::events::ProposalDeclined,
    market::events::ProposalCancelled,
    market::events::ProposalApproved,
    market::events::HandoffMade,
    market::events::HandoffConfirmationRequested,
    market::events::HandoffConfirmed,
    market::events::HandoffDeclined,
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

#[cfg(test)]
mod tests;
