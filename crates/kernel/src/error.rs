//! One refusal type for every tool (DESIGN rule 4). A [`ToolError`] carries a stable spec
//! `code`, a plain `message`, and the optional fields the spec names (`field`, `suggestion`,
//! `retry_after_s`, ...). The MCP adapter answers it as `isError: true` with
//! `{ok: false, error}`; the REST adapter uses [`ErrorCode::http_status`]. Internal failures
//! are logged once with their cause and shown to the caller as `internal` and a request id.
//! The cause is kept as the error itself ([`Cause`]), so its `source()` chain reaches the log
//! whole.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The stable error codes of the spec ("Errors", "Signing a write").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Bad arguments; `field` names the first offending argument.
    Validation,
    /// A signed write without the signature headers.
    SignatureRequired,
    /// `x-kd-timestamp` missing its window of ±300 s, or not whole seconds.
    StaleSignature,
    /// `x-kd-nonce` not 16–128 of `A-Za-z0-9_-`.
    BadNonce,
    /// The signature does not verify with the agent's key.
    BadSignature,
    /// The nonce was used before by this agent.
    Replay,
    /// The tool needs an identity and the caller has none.
    IdentityRequired,
    /// `x-karmadue-agent` differs from `agent_id` in the arguments.
    AgentMismatch,
    /// The caller may not do this.
    Forbidden,
    /// No such record (or not one the caller may see).
    NotFound,
    /// The name is an active agent's, or one edit away from one.
    LabelReserved,
    /// The name belongs to the caller's own agent.
    LabelYours,
    /// Too many requests; `retry_after_s` says when to try again.
    RateLimited,
    /// A gated tool without the stamp (or capability) it needs; the error names
    /// `missing_stamp`, `required_tier` and `how_to_get` (permissions document).
    StampRequired,
    /// connect_with_code: the code is wrong, expired or already used (one answer for all three).
    InvalidCode,
    /// report_outcome: no receipt has this (well-formed) id.
    ReceiptNotFound,
    /// report_outcome: the receipt id is malformed, or the stored receipt's signature no
    /// longer verifies.
    ReceiptInvalid,
    /// report_outcome: the receipt names another agent (or no agent).
    ReceiptMismatch,
    /// report_outcome: the receipt is older than 14 days.
    ReceiptExpired,
    /// report_outcome: this receipt already has its one report.
    AlreadyReported,
    /// An OAuth access token sent to the self-keyed endpoint: connected apps use the
    /// connector endpoint (spec "Using KarmaDue from Claude or ChatGPT").
    WrongEndpoint,
    /// A connected app called a tool its approval does not allow; the error names
    /// `required_scope` and `approve_url` (spec "Connector permissions").
    NeedsYourApproval,
    /// An `x-kd-visa` that is not a visa of this hub: malformed, another key or issuer, a
    /// signature that does not verify, or not yet valid (docs/decisions.md 404).
    VisaInvalid,
    /// An `x-kd-visa` past its `exp`.
    VisaExpired,
    /// An `x-kd-visa` that names another agent than the one that signed the request.
    VisaMismatch,
    /// An `x-kd-visa` whose scopes do not name the tool's scope.
    VisaScope,
    /// A priced action over the caller's USD spend cap: its owner's grant per action or per
    /// day (a connected app's is always $0). Amounts are records; no money moves (DECISIONS 6;
    /// docs/decisions.md 461).
    SpendCap,
    /// Something failed inside the hub; the request id is all the caller gets.
    Internal,
}

impl ErrorCode {
    /// The spec's code string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Validation => "validation",
            Self::SignatureRequired => "signature_required",
            Self::StaleSignature => "stale_signature",
            Self::BadNonce => "bad_nonce",
            Self::BadSignature => "bad_signature",
            Self::Replay => "replay",
            Self::IdentityRequired => "identity_required",
            Self::AgentMismatch => "agent_mismatch",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::LabelReserved => "label_reserved",
            Self::LabelYours => "label_yours",
            Self::RateLimited => "rate_limited",
            Self::StampRequired => "stamp_required",
            Self::InvalidCode => "invalid_code",
            Self::ReceiptNotFound => "receipt_not_found",
            Self::ReceiptInvalid => "receipt_invalid",
            Self::ReceiptMismatch => "receipt_mismatch",
            Self::ReceiptExpired => "receipt_expired",
            Self::AlreadyReported => "already_reported",
            Self::WrongEndpoint => "wrong_endpoint",
            Self::NeedsYourApproval => "needs_your_approval",
            Self::VisaInvalid => "visa_invalid",
            Self::VisaExpired => "visa_expired",
            Self::VisaMismatch => "visa_mismatch",
            Self::VisaScope => "visa_scope",
            Self::SpendCap => "spend_cap",
            Self::Internal => "internal",
        }
    }

    /// The REST status (spec "Errors": 400 validation and other refusals; 401 the signature
    /// refusals and identity_required; 403 forbidden and agent_mismatch; 404 not_found; 409
    /// label_reserved; 429 rate_limited; 500 internal). stamp_required is a permission refusal like
    /// forbidden (403), and so are the visa codes and spend_cap. The receipt codes of report_outcome
    /// follow the same table: receipt_not_found is a not-found (404); receipt_invalid,
    /// receipt_mismatch, receipt_expired and already_reported are "other refusals" (400).
    pub fn http_status(self) -> u16 {
        match self {
            Self::Validation
            | Self::LabelYours
            | Self::ReceiptInvalid
            | Self::ReceiptMismatch
            | Self::ReceiptExpired
            | Self::AlreadyReported
            | Self::InvalidCode => 400,
            Self::SignatureRequired
            | Self::StaleSignature
            | Self::BadNonce
            | Self::BadSignature
            | Self::Replay
            | Self::IdentityRequired
            | Self::WrongEndpoint => 401,
            Self::Forbidden
            | Self::AgentMismatch
            | Self::StampRequired
            | Self::NeedsYourApproval
            | Self::VisaInvalid
            | Self::VisaExpired
            | Self::VisaMismatch
            | Self::VisaScope
            | Self::SpendCap => 403,
            Self::NotFound | Self::ReceiptNotFound => 404,
            Self::LabelReserved => 409,
            Self::RateLimited => 429,
            Self::Internal => 500,
        }
    }
}

/// A refusal or failure of a tool call.
#[derive(Debug, Clone)]
pub struct ToolError {
    /// The stable code.
    pub code: ErrorCode,
    /// A plain sentence for the caller.
    pub message: String,
    /// The argument at fault, when there is one.
    pub field: Option<String>,
    /// Further spec fields (`suggestion`, `agent_id`, `retry_after_s`, ...).
    pub extra: Map<String, Value>,
    /// The cause of an internal failure, for the log only (never shown).
    pub cause: Option<Cause>,
}

/// The cause of an internal failure: the error itself, with its `source()` chain. Display and
/// Debug print the whole chain, outermost first: `outer: inner: root`.
#[derive(Clone)]
pub struct Cause(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl Cause {
    /// The error.
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self.0.as_ref()
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        kd_core::error::Chain(self.0.as_ref()).fmt(f)
    }
}

impl std::fmt::Debug for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// A cause known only by its text.
#[derive(Debug)]
struct Described(String);

impl std::fmt::Display for Described {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Described {}

impl ToolError {
    /// A refusal with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            field: None,
            extra: Map::new(),
            cause: None,
        }
    }

    /// A `validation` refusal naming `field`.
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Validation, message).with_field(field)
    }

    /// A `not_found` refusal naming `field`.
    pub fn not_found(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message).with_field(field)
    }

    /// An internal failure known by its text; `cause` is logged, never shown. Prefer
    /// [`ToolError::internal_from`] for an error value: it keeps the `source()` chain.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::internal_from(Described(cause.to_string()))
    }

    /// An internal failure caused by `error` (kept whole, with its `source()` chain, for the
    /// log; never shown).
    pub fn internal_from(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        let mut failure = Self::new(
            ErrorCode::Internal,
            "Something went wrong on our side. Quote the request id if you report it.",
        );
        failure.cause = Some(Cause(Arc::new(error)));
        failure
    }

    /// What the log says of this error: the cause's whole chain for an internal failure,
    /// else the message.
    pub fn cause_text(&self) -> String {
        self.cause
            .as_ref()
            .map_or_else(|| self.message.clone(), ToString::to_string)
    }

    /// Names the argument at fault.
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Adds a spec field to the error object.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_owned(), value.into());
        self
    }

    /// The `error` object: `{code, message, field?, ...extra}`.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("code".into(), self.code.as_str().into());
        object.insert("message".into(), self.message.clone().into());
        if let Some(field) = &self.field {
            object.insert("field".into(), field.clone().into());
        }
        for (key, value) in &self.extra {
            object.insert(key.clone(), value.clone());
        }
        Value::Object(object)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_ref().map(|cause| {
            let error: &(dyn std::error::Error + 'static) = cause.error();
            error
        })
    }
}

impl From<kd_core::store::StoreError> for ToolError {
    fn from(error: kd_core::store::StoreError) -> Self {
        Self::internal_from(error)
    }
}

impl From<kd_core::db::DbError> for ToolError {
    fn from(error: kd_core::db::DbError) -> Self {
        Self::internal_from(error)
    }
}

/// Lets an area's error enum take store failures with `?` inside a write or read closure
/// that returns it (issue 31: `Ctx::signed_write` is generic over the area's error): a
/// `kd_core::db::DbError` or `kd_core::store::StoreError` becomes the enum's `Kernel`
/// variant holding `internal`, the failure kept as its `source()`. For an enum with a
/// `Kernel(ToolError)` variant and no store variants of its own:
/// `kd_kernel::store_failures_are_internal!(IdentityError);`, or `(log HelpError)` for one
/// that has its own `DbError` variant.
#[macro_export]
macro_rules! store_failures_are_internal {
    ($area:ty) => {
        impl From<kd_core::db::DbError> for $area {
            fn from(error: kd_core::db::DbError) -> Self {
                Self::Kernel($crate::error::ToolError::from(error))
            }
        }

        $crate::store_failures_are_internal!(log $area);
    };
    // An enum with a `Store(DbError)` variant of its own: only the log's failures.
    (log $area:ty) => {
        impl From<kd_core::store::StoreError> for $area {
            fn from(error: kd_core::store::StoreError) -> Self {
                Self::Kernel($crate::error::ToolError::from(error))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("reading the key file")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn an_internal_failure_keeps_its_cause_chain_and_never_shows_it() {
        let error = ToolError::internal_from(Outer(std::io::Error::other("disk on fire")));
        assert_eq!(error.code, ErrorCode::Internal);
        assert!(!error.to_json().to_string().contains("disk"));
        assert_eq!(error.cause_text(), "reading the key file: disk on fire");
        let source = std::error::Error::source(&error).expect("a source");
        assert_eq!(source.to_string(), "reading the key file");
        assert_eq!(
            source.source().map(ToString::to_string).as_deref(),
            Some("disk on fire")
        );
        assert_eq!(ToolError::internal("plain").cause_text(), "plain");
        assert_eq!(ToolError::validation("x", "bad x").cause_text(), "bad x");
    }
}
