//! Identity's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code, the field it names
//! and its spec fields (spec "register_agent" … "get_receipt", "Names", "Errors"). A refusal or
//! failure from the kernel or another area (a store failure, a missing argument) passes through
//! whole, its cause kept as the `source()`; the name index's own failures are `internal` with
//! the variant as the cause.

use kd_kernel::error::{ErrorCode, ToolError};

/// Why an identity tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// A reference that is neither an agent id nor a `kd_` handle (the field; `validation`).
    #[error("{0} must be an agent id (lowercase uuid) or a kd_ handle")]
    BadAgentReference(String),
    /// No agent has the id or handle (the field; `not_found`).
    #[error("No agent has this {0}.")]
    NoSuchAgent(String),
    /// A name outside 2..=40 characters (the field; `validation`).
    #[error("{0} must be 2 to 40 characters")]
    NameLength(String),
    /// A name with control, invisible or text-direction characters (the field; `validation`).
    #[error("{0} must not contain control, invisible or text-direction characters")]
    NameCharacters(String),
    /// A name with fewer than two letters or digits (the field; `validation`).
    #[error("{0} needs at least two letters or digits")]
    NameTooFewLetters(String),
    /// A name that is, or looks like, one of the hub's own (the field; `label_reserved`).
    #[error("label taken: exact or lookalike of a name reserved for the hub itself")]
    NameReservedForHub(String),
    /// A name that is, or looks like, another active agent's (`name`; `label_reserved` with
    /// `how_to_fix` and a free `suggestion` when one is found).
    #[error("label taken: exact or lookalike of an existing agent name")]
    NameTaken {
        /// A free name close to the one asked for.
        suggestion: Option<String>,
    },
    /// A name of one of the caller's own agents (`name`; `label_yours` with `agent_id`).
    #[error("You already have an agent with this name.")]
    NameYours {
        /// The agent that has it.
        agent_id: String,
    },
    /// `platform` too long or with control characters (`platform`; `validation`).
    #[error("platform must be at most 60 characters, no control characters")]
    Platform,
    /// `public_key` is not an Ed25519 key (`public_key`; `validation`).
    #[error("public_key: {0}")]
    PublicKey(String),
    /// `signature` is not base64url (`signature`; `validation`).
    #[error("signature must be base64url of 64 bytes")]
    SignatureEncoding,
    /// `signature` decodes to the wrong length (`signature`; `bad_signature`).
    #[error(
        "signature decodes to {0} bytes; an Ed25519 signature is {bytes} bytes (86 base64url characters)",
        bytes = kd_kernel::caller::SIGNATURE_BYTES
    )]
    SignatureLength(usize),
    /// The challenge signature does not verify (`signature`; `bad_signature`).
    #[error("signature does not verify over the challenge payload with public_key")]
    ChallengeSignature,
    /// The challenge is unknown, used or expired: one answer for all three (`challenge_id`;
    /// `validation`).
    #[error(
        "This challenge_id is unknown, used or expired. Call register_challenge for a fresh one: it works once, until the Unix second stated on the payload's last line."
    )]
    Challenge,
    /// register_agent with a key one of the caller's agents has (`public_key`; `validation`
    /// with `agent_id`).
    #[error("This key already belongs to one of your agents; use rename_agent to change its name.")]
    KeyYours {
        /// The agent with the key.
        agent_id: String,
    },
    /// rotate_agent_key to the key the agent already has (`public_key`; `validation`).
    #[error("public_key is already this agent's key")]
    SameKey,
    /// rotate_agent_key to another agent's key (`public_key`; `validation`).
    #[error("This key is already registered to an agent.")]
    KeyTaken,
    /// get_history's `limit` outside 1..=200 (`limit`; `validation`).
    #[error("limit must be from 1 to 200")]
    HistoryLimit,
    /// get_signing_payload's `agent_id` is not a uuid (`agent_id`; `validation`).
    #[error("agent_id must be a lowercase uuid with dashes")]
    AgentIdShape,
    /// get_signing_payload's `nonce` is not shaped (`nonce`; `validation`).
    #[error("nonce must be 16 to 128 characters from A-Z a-z 0-9 _ -")]
    NonceShape,
    /// verify_agent without `agent_id` or `credential_id` (`agent_id`; `validation`).
    #[error("agent_id (or credential_id) is required")]
    AgentOrCredentialRequired,
    /// verify_agent found neither reference after all (`agent_id`; `validation`).
    #[error("agent_id is required")]
    AgentIdRequired,
    /// verify_agent: no passport has the `credential_id` (`credential_id`; `not_found`).
    #[error("No passport has this credential_id.")]
    NoSuchPassport,
    /// verify_agent's `signature.message` is not a string (`signature`; `validation`).
    #[error("signature.message must be a string")]
    SignatureMessage,
    /// verify_agent's `signature.signature_b64` is not a string (`signature`; `validation`).
    #[error("signature.signature_b64 must be a string")]
    SignatureText,
    /// get_receipt: nothing has the id (the field; `not_found`).
    #[error("No passport or receipt has this {0}.")]
    NoSuchReceipt(&'static str),
    /// More than 2^32 agents: a name is refused rather than left unindexed (`internal`).
    #[error("the name index is full")]
    NameIndexFull,
    /// A thread panicked holding the name index (`internal`).
    #[error("the name index lock was poisoned")]
    NameIndexPoisoned,
    /// The name index was not built (`internal`).
    #[error("the name index is missing")]
    NameIndexMissing,
    /// request_visa's `scopes`: empty, repeated, or not a scope a visa can name (`scopes`;
    /// `validation`).
    #[error("scopes must name 1 to 5 different scopes from: {0}")]
    VisaScopes(String),
    /// request_visa's `lifetime_s` outside 60..=86400 (`lifetime_s`; `validation`).
    #[error("lifetime_s must be from 60 to 86400 seconds")]
    VisaLifetime,
    /// request_visa's `audience` too long or with control or space characters (`audience`;
    /// `validation`).
    #[error("audience must be 1 to 200 printable characters without spaces")]
    VisaAudience,
    /// trust_query's amount: not a number of whole cents from 0 to 1,000,000 (the field sent;
    /// `validation`).
    #[error("{0} must be a number of USD from 0 to 1000000, in whole cents")]
    TrustAmount(&'static str),
    /// trust_query's `amount` and `amount_usd` both sent, with different values (`amount_usd`;
    /// `validation`).
    #[error("amount_usd is another name for amount: send one of them, or the same value in both")]
    TrustTwoAmounts,
    /// read_scores, get_rating_card, trust_query: neither `agent_id` nor `subject_id` has text
    /// (`agent_id`; `validation`).
    #[error("agent_id or subject_id is required")]
    SubjectRequired,
    /// trust_query's `skill`: over 64 characters or with control characters (`skill`;
    /// `validation`).
    #[error(
        "skill must be one line of at most 64 characters, without control or invisible characters"
    )]
    TrustSkill,
    /// find_collaborators' `need` over 500 characters (`need`; `validation`).
    #[error("need must be at most 500 characters")]
    CollaboratorNeed,
    /// A refusal or failure of the kernel or another area, passed on unchanged (a store
    /// failure is `internal` with its cause).
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

/// `how_to_fix` of a taken name.
const HOW_TO_FIX: &str = "Pick another name (error.suggestion is free) and call register_challenge again before retrying.";

impl From<IdentityError> for ToolError {
    fn from(error: IdentityError) -> Self {
        use IdentityError as E;
        let message = error.to_string();
        match error {
            E::BadAgentReference(field)
            | E::NameLength(field)
            | E::NameCharacters(field)
            | E::NameTooFewLetters(field) => ToolError::validation(field, message),
            E::NoSuchAgent(field) => ToolError::not_found(field, message),
            E::NoSuchReceipt(field) => ToolError::not_found(field, message),
            E::NameReservedForHub(field) => {
                ToolError::new(ErrorCode::LabelReserved, message).with_field(field)
            }
            E::NameTaken { suggestion } => {
                let refusal = ToolError::new(ErrorCode::LabelReserved, message)
                    .with_field("name")
                    .with("how_to_fix", HOW_TO_FIX);
                match suggestion {
                    Some(suggestion) => refusal.with("suggestion", suggestion),
                    None => refusal,
                }
            }
            E::NameYours { agent_id } => ToolError::new(ErrorCode::LabelYours, message)
                .with_field("name")
                .with("agent_id", agent_id),
            E::Platform => ToolError::validation("platform", message),
            E::VisaScopes(_) => ToolError::validation("scopes", message),
            E::VisaLifetime => ToolError::validation("lifetime_s", message),
            E::VisaAudience => ToolError::validation("audience", message),
            E::TrustAmount(field) => ToolError::validation(field, message),
            E::TrustTwoAmounts => ToolError::validation("amount_usd", message),
            E::SubjectRequired => ToolError::validation("agent_id", message),
            E::TrustSkill => ToolError::validation("skill", message),
            E::CollaboratorNeed => ToolError::validation("need", message),
            E::PublicKey(_) | E::SameKey | E::KeyTaken => {
                ToolError::validation("public_key", message)
            }
            E::KeyYours { agent_id } => {
                ToolError::validation("public_key", message).with("agent_id", agent_id)
            }
            E::SignatureEncoding => ToolError::validation("signature", message),
            E::SignatureLength(_) | E::ChallengeSignature => {
                ToolError::new(ErrorCode::BadSignature, message).with_field("signature")
            }
            E::Challenge => ToolError::validation("challenge_id", message),
            E::HistoryLimit => ToolError::validation("limit", message),
            E::AgentIdShape | E::AgentIdRequired | E::AgentOrCredentialRequired => {
                ToolError::validation("agent_id", message)
            }
            E::NonceShape => ToolError::validation("nonce", message),
            E::NoSuchPassport => ToolError::not_found("credential_id", message),
            E::SignatureMessage | E::SignatureText => ToolError::validation("signature", message),
            E::NameIndexFull | E::NameIndexPoisoned | E::NameIndexMissing => {
                ToolError::internal_from(error)
            }
            E::Kernel(error) => error,
        }
    }
}

kd_kernel::store_failures_are_internal!(IdentityError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let cases: [(IdentityError, &str, Option<&str>); 6] = [
            (
                IdentityError::NoSuchAgent("agent_id".into()),
                "not_found",
                Some("agent_id"),
            ),
            (
                IdentityError::SignatureLength(3),
                "bad_signature",
                Some("signature"),
            ),
            (IdentityError::Challenge, "validation", Some("challenge_id")),
            (
                IdentityError::NameReservedForHub("label".into()),
                "label_reserved",
                Some("label"),
            ),
            (
                IdentityError::NameTaken { suggestion: None },
                "label_reserved",
                Some("name"),
            ),
            (IdentityError::NameIndexFull, "internal", None),
        ];
        for (error, code, field) in cases {
            let refusal = ToolError::from(error);
            assert_eq!(refusal.code.as_str(), code);
            assert_eq!(refusal.field.as_deref(), field);
        }
        let short = ToolError::from(IdentityError::SignatureLength(3));
        assert!(
            short
                .message
                .starts_with("signature decodes to 3 bytes; an Ed25519 signature is 64 bytes")
        );
        let taken = ToolError::from(IdentityError::NameTaken {
            suggestion: Some("Scout 2".into()),
        })
        .to_json();
        assert_eq!(taken["suggestion"], "Scout 2");
        assert_eq!(taken["how_to_fix"], HOW_TO_FIX);
        let yours = ToolError::from(IdentityError::NameYours {
            agent_id: "a".into(),
        });
        assert_eq!(yours.to_json()["agent_id"], "a");
    }

    #[test]
    fn an_internal_failure_keeps_its_cause() {
        let refusal = ToolError::from(IdentityError::NameIndexPoisoned);
        assert!(refusal.cause_text().contains("lock was poisoned"));
        let io = std::io::Error::other("disk gone");
        let passed = ToolError::from(IdentityError::from(ToolError::internal_from(io)));
        assert!(passed.cause_text().contains("disk gone"));
    }
}
