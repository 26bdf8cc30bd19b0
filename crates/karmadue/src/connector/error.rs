//! The connector's refusals (issue 12; "one error enum per area"): the OAuth endpoints'
//! errors (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707 §2) with their `error` code and status,
//! and the tool refusals of the MCP surfaces (`wrong_endpoint`, `needs_your_approval`), which
//! convert into the kernel's [`ToolError`]. A store failure keeps its cause as the `source()`.

use kd_core::db::DbError;
use kd_core::store::StoreError;
use kd_kernel::error::{ErrorCode, ToolError};

/// Why an OAuth endpoint or a connector tool call refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// A parameter is missing, repeated or malformed (`invalid_request`, 400).
    #[error("{0}")]
    InvalidRequest(String),
    /// The client is unknown, or not the one the code or token was issued to
    /// (`invalid_client`, 401).
    #[error("{0}")]
    InvalidClient(String),
    /// The code or refresh token is unknown, used, expired, revoked, or bound to something
    /// else (redirect URI, PKCE verifier, resource) (`invalid_grant`, 400).
    #[error("{0}")]
    InvalidGrant(String),
    /// A grant type other than authorization_code and refresh_token
    /// (`unsupported_grant_type`, 400).
    #[error("{0}")]
    UnsupportedGrantType(String),
    /// Registration: a redirect URI that is neither https nor loopback http, or has a
    /// fragment (`invalid_redirect_uri`, 400).
    #[error("{0}")]
    InvalidRedirectUri(String),
    /// Registration: other metadata refused (`invalid_client_metadata`, 400).
    #[error("{0}")]
    InvalidClientMetadata(String),
    /// A scope this hub does not grant (`invalid_scope`, 400).
    #[error("{0}")]
    InvalidScope(String),
    /// A `resource` that is not this hub's connector (`invalid_target`, 400).
    #[error("{0}")]
    InvalidTarget(String),
    /// An OAuth access token sent to the self-keyed endpoint (`wrong_endpoint`).
    #[error(
        "This is the self-keyed endpoint (Ed25519 signatures). OAuth access tokens work on the connector: {connector_url}"
    )]
    WrongEndpoint {
        /// The connector URL to use instead.
        connector_url: String,
    },
    /// A tool this connection's approval does not allow (`needs_your_approval`, with
    /// `required_scope` and `approve_url`). Nothing was recorded.
    #[error(
        "{tool} is not part of what the person approved for this app. It needs {required_scope}; the person decides at approve_url."
    )]
    NeedsYourApproval {
        /// The tool called.
        tool: String,
        /// The scope it needs.
        required_scope: String,
        /// Where the person can decide.
        approve_url: String,
    },
    /// Registration: this address registered too many clients this minute (429, `Retry-After`;
    /// docs/decisions.md 347).
    #[error("Too many clients registered from this address: try again in {retry_after_s} s.")]
    RateLimited {
        /// Whole seconds until a registration is taken again.
        retry_after_s: u64,
    },
    /// Authorization: this address caused too many client metadata-document fetches this
    /// minute (429, `Retry-After`; docs/decisions.md 408, 425).
    #[error(
        "Too many client metadata documents fetched for requests from this address: try again in {retry_after_s} s."
    )]
    DocumentFetchesLimited {
        /// Whole seconds until a fetch is made again.
        retry_after_s: u64,
    },
    /// The store failed (`server_error`, 500; the cause is the `source()`).
    #[error("the store failed")]
    Store(#[from] StoreError),
    /// Another area refused or failed while the connector wrote through it (making the
    /// hosted agent: `server_error`, 500; the cause is the `source()`).
    #[error("an area failed")]
    Area(#[from] ToolError),
}

impl From<DbError> for ConnectorError {
    fn from(error: DbError) -> Self {
        Self::Store(StoreError::from(error))
    }
}

impl ConnectorError {
    /// The OAuth `error` code.
    pub fn oauth_code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidClient(_) => "invalid_client",
            Self::InvalidGrant(_) => "invalid_grant",
            Self::UnsupportedGrantType(_) => "unsupported_grant_type",
            Self::InvalidRedirectUri(_) => "invalid_redirect_uri",
            Self::InvalidClientMetadata(_) => "invalid_client_metadata",
            Self::InvalidScope(_) => "invalid_scope",
            Self::InvalidTarget(_) => "invalid_target",
            Self::WrongEndpoint { .. } => "wrong_endpoint",
            Self::NeedsYourApproval { .. } => "insufficient_scope",
            Self::RateLimited { .. } | Self::DocumentFetchesLimited { .. } => "rate_limited",
            Self::Store(_) | Self::Area(_) => "server_error",
        }
    }

    /// The HTTP status of an OAuth endpoint's refusal.
    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidClient(_) | Self::WrongEndpoint { .. } => 401,
            Self::NeedsYourApproval { .. } => 403,
            Self::RateLimited { .. } | Self::DocumentFetchesLimited { .. } => 429,
            Self::Store(_) | Self::Area(_) => 500,
            _ => 400,
        }
    }

    /// The whole seconds a rate-limited caller waits (`Retry-After`); `None` when not limited.
    pub fn retry_after_s(&self) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after_s }
            | Self::DocumentFetchesLimited { retry_after_s } => Some(*retry_after_s),
            _ => None,
        }
    }

    /// The words shown to the client (`error_description`): a store failure says nothing of
    /// its cause.
    pub fn description(&self) -> String {
        match self {
            Self::Store(_) | Self::Area(_) => "Something went wrong on our side.".to_owned(),
            other => other.to_string(),
        }
    }
}

impl From<ConnectorError> for ToolError {
    fn from(error: ConnectorError) -> Self {
        let message = error.to_string();
        match error {
            ConnectorError::WrongEndpoint { connector_url } => {
                Self::new(ErrorCode::WrongEndpoint, message).with("connector_url", connector_url)
            }
            ConnectorError::NeedsYourApproval {
                required_scope,
                approve_url,
                ..
            } => Self::new(ErrorCode::NeedsYourApproval, message)
                .with("required_scope", required_scope)
                .with("approve_url", approve_url)
                .with("legacy_code", "insufficient_scope"),
            ConnectorError::Store(cause) => Self::internal_from(cause),
            ConnectorError::Area(refusal) => refusal,
            other => Self::new(ErrorCode::Validation, other.to_string()),
        }
    }
}
