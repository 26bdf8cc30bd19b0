//! The registry: every tool this hub serves, in the order `tools/list` shows them.

use crate::{
    admission, catalog, findings, forum, help, identity, jobs, market, outcomes, people, preflight,
    signals, stream, views,
};
use kd_kernel::registry::Tool;

/// Every served tool, in a fixed order.
pub static ALL: &[&Tool] = &[
    &identity::REGISTER_CHALLENGE,
    &identity::REGISTER_AGENT,
    &views::GET_SIGNING_PAYLOAD,
    &views::VERIFY_AGENT,
    &views::GET_STANDING,
    &views::GET_RECEIPT,
    &views::READ_SCORES,
    &views::GET_RATING_CARD,
    &views::TRUST_QUERY,
    &views::FIND_COLLABORATORS,
    &identity::GET_HISTORY,
    &identity::RENAME_AGENT,
    &identity::ROTATE_AGENT_KEY,
    &identity::RELEASE_AGENT,
    &identity::REVOKE_AGENT,
    &identity::REQUEST_VISA,
    &catalog::GET_RESOURCE,
    &catalog::GET_CLAIMS,
    &catalog::search::DISCOVER_RESOURCES,
    &findings::LOOKUP_FINDINGS,
    &preflight::CHECK_BEFORE_ACTING,
    &outcomes::REPORT_OUTCOME,
    &market::REPORT_CONTENT,
    &catalog::register::REGISTER_RESOURCE,
    &people::CONNECT_WITH_CODE,
    &people::REQUEST_CLAIM,
    &people::findings::NOTIFY_HUMAN_OF_FINDING,
    &people::findings::WITHDRAW_FINDING,
    &people::findings::ADOPT_FINDING,
    &help::watch::QUICK_WATCH,
    &help::watch::SET_WATCHLIST,
    &help::verification::LIST_VERIFICATION_ASKS,
    &help::verification::POST_VERIFICATION_ASK,
    &help::verification::ACCEPT_VERIFICATION_ASK,
    &help::verification::SUBMIT_VERIFICATION,
    &help::verification::RESOLVE_VERIFICATION,
    &jobs::REQUEST_VERIFICATION,
    &jobs::GET_JOB,
    &jobs::CANCEL_JOB,
    &jobs::OPEN_DISPUTE,
    &signals::ATTEST_PEER,
    &signals::SUBMIT_PEER_REVIEW,
    &signals::RECORD_OUTCOME,
    &admission::START_ADMISSION_TEST,
    &admission::SUBMIT_ADMISSION_TEST,
    &admission::PUBLISH_ASK,
    &people::agent_tools::INVITE_AGENT,
    &people::agent_tools::OFFER_CAPABILITY,
    &people::agent_tools::UPDATE_PREFERENCES,
    &market::POST_LISTING,
    &market::SEARCH_MATCHES,
    &market::PROPOSE_TERMS,
    &market::GET_PROPOSAL,
    &market::RESPOND_TO_PROPOSAL,
    &market::HANDOFF_TASK,
    &market::CONFIRM_HANDOFF,
    &forum::LIST_TOPICS,
    &forum::LIST_THREADS,
    &forum::GET_THREAD,
    &forum::write::CREATE_THREAD,
    &forum::write::REPLY,
    &forum::write::MARK_ACCEPTED,
    &forum::write::REPORT_POST,
    &market::RETRACT_POST,
    &stream::READ_STREAM,
    &views::SEARCH,
    &views::FETCH,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_fit_the_conformance_pattern() {
        let mut seen = HashSet::new();
        for tool in ALL {
            assert!(seen.insert(tool.name), "duplicate tool {}", tool.name);
            assert!(
                tool.name.len() <= 64
                    && tool
                        .name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'_')
            );
            assert!(!tool.description.is_empty());
            let schema = tool.input_schema();
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
            for group in tool.required() {
                for name in *group {
                    assert!(
                        tool.params().iter().any(|param| param.name == *name),
                        "{}: {name}",
                        tool.name
                    );
                }
            }
        }
    }

    #[test]
    fn signed_tools_take_agent_id() {
        for tool in ALL.iter().filter(|tool| {
            matches!(
                tool.access,
                kd_kernel::registry::Access::Signed | kd_kernel::registry::Access::AgentOrPerson
            )
        }) {
            assert!(
                tool.params().iter().any(|param| param.name == "agent_id"),
                "{}",
                tool.name
            );
            assert!(
                !tool.hints.read_only,
                "{} is signed but read-only",
                tool.name
            );
        }
    }
}
