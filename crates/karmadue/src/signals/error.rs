//! Peer signals' refusals (issue 10, "one error enum per area"): attest_peer,
//! submit_peer_review and record_outcome, each refusal a variant with its sentence, converted
//! into the kernel's [`ToolError`] with the spec code and the field it names (spec "Errors").
//! A refusal the kernel or another area raised passes through unchanged.

use kd_kernel::error::{ErrorCode, ToolError};

/// Why a peer-signal tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum SignalsError {
    /// A text argument longer than its cap (`validation`).
    #[error("{field} is at most {max} characters")]
    TooLong {
        /// The argument.
        field: &'static str,
        /// The cap, in characters.
        max: usize,
    },
    /// A text argument that holds a line break or a control character (`validation`).
    #[error("{0} must be one line of text without control characters")]
    NotOneLine(&'static str),
    /// `evidence_kind` is not a short lowercase code (`validation`).
    #[error(
        "evidence_kind must be none or a short code of lowercase letters, digits and _ (up to 40), e.g. principal_confirmation"
    )]
    EvidenceKindShape,
    /// `outcome` is not one of the attestation outcomes (`validation`).
    #[error("outcome must be one of: delivered, partial, failed")]
    OutcomeChoice,
    /// `score` outside 0–100 or not finite (`validation`).
    #[error("score must be a number from 0 to 100")]
    ScoreRange,
    /// No agent has the subject id (`not_found`, `subject_agent_id`).
    #[error("No agent has this subject_agent_id.")]
    NoSuchSubject,
    /// No agent has the attester id (`not_found`, `attester_agent_id`).
    #[error("No agent has this attester_agent_id.")]
    NoSuchAttester,
    /// No agent has the counterparty id (`not_found`, `counterparty_agent_id`).
    #[error("No agent has this counterparty_agent_id.")]
    NoSuchCounterparty,
    /// The subject is revoked (`validation`, the field named).
    #[error("{0} names a revoked agent")]
    Revoked(&'static str),
    /// A signal about oneself (`forbidden`, reason `self_signal`).
    #[error("An agent cannot attest, review or be the counterparty of its own work.")]
    SelfSignal(&'static str),
    /// attest_peer without a detached signature (`signature_required`).
    #[error(
        "attest_peer needs the attester's detached Ed25519 signature over the kd-attest-v1 text (signature or signature_b64, base64url). See /functions/v1/docs/docs/attestations.md."
    )]
    SignatureMissing,
    /// The detached signature is not base64 of 64 bytes (`validation`, the name sent).
    #[error("{0} must be a base64url Ed25519 signature (64 bytes)")]
    SignatureShape(&'static str),
    /// The detached signature does not verify with the attester's key (`bad_signature`).
    #[error(
        "The signature does not verify with the attester's key over the kd-attest-v1 text (it is returned here as attestation_text)."
    )]
    SignatureInvalid {
        /// The text the hub verified against.
        text: String,
    },
    /// The attester has no key of its own (a connected app's hosted agent; `bad_signature`).
    #[error(
        "The attester is a connected app's hosted agent: it has no key to sign an attestation with."
    )]
    AttesterKeyless,
    /// The author already sent this signal for this task (`validation`, `task_ref`).
    #[error(
        "You already recorded this for this subject and task_ref ({0}). Use another task_ref for other work."
    )]
    Already(String),
    /// A refusal or failure raised outside this area, passed through as it is.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<SignalsError> for ToolError {
    fn from(error: SignalsError) -> Self {
        use SignalsError as E;
        let message = error.to_string();
        match error {
            E::TooLong { field, .. } | E::NotOneLine(field) | E::Revoked(field) => {
                ToolError::validation(field, message)
            }
            E::EvidenceKindShape => ToolError::validation("evidence_kind", message),
            E::OutcomeChoice => ToolError::validation("outcome", message),
            E::ScoreRange => ToolError::validation("score", message),
            E::NoSuchSubject => ToolError::not_found("subject_agent_id", message),
            E::NoSuchAttester => ToolError::not_found("attester_agent_id", message),
            E::NoSuchCounterparty => ToolError::not_found("counterparty_agent_id", message),
            E::SelfSignal(field) => ToolError::new(ErrorCode::Forbidden, message)
                .with_field(field)
                .with("reason", "self_signal"),
            E::SignatureMissing => {
                ToolError::new(ErrorCode::SignatureRequired, message).with_field("signature")
            }
            E::SignatureShape(field) => ToolError::validation(field, message),
            E::SignatureInvalid { text } => ToolError::new(ErrorCode::BadSignature, message)
                .with_field("signature")
                .with("attestation_text", text),
            E::AttesterKeyless => {
                ToolError::new(ErrorCode::BadSignature, message).with_field("attester_agent_id")
            }
            E::Already(signal_id) => {
                ToolError::validation("task_ref", message).with("signal_id", signal_id)
            }
            E::Kernel(refusal) => refusal,
        }
    }
}

kd_kernel::store_failures_are_internal!(SignalsError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_spec_code_and_field() {
        let missing = ToolError::from(SignalsError::SignatureMissing);
        assert_eq!(missing.code.as_str(), "signature_required");
        let bad = ToolError::from(SignalsError::SignatureInvalid { text: "t".into() }).to_json();
        assert_eq!(bad["code"], "bad_signature");
        assert_eq!(bad["attestation_text"], "t");
        let own = ToolError::from(SignalsError::SelfSignal("subject_agent_id"));
        assert_eq!(own.code.as_str(), "forbidden");
        assert_eq!(own.extra["reason"], "self_signal");
        let again = ToolError::from(SignalsError::Already("kdsg_1".into())).to_json();
        assert_eq!(again["field"], "task_ref");
        assert_eq!(again["signal_id"], "kdsg_1");
        assert_eq!(
            ToolError::from(SignalsError::ScoreRange).code.as_str(),
            "validation"
        );
    }
}
