//! The OAuth 2.1 connector (issue 12; spec "Using KarmaDue from Claude or ChatGPT (OAuth
//! connector)" and "Connector permissions"): the hub is its own authorization server for
//! connected apps. This module holds the grant rules; the wire (metadata documents, the
//! token, register and revoke endpoints, the authorize and consent pages, the connector's MCP
//! endpoint) is in `http::oauth` and `http::connector`.
//!
//! - [`register`]: RFC 7591 dynamic client registration, public clients only.
//! - [`check_client`], [`check_request`], [`approve`]: the authorization request and the code
//!   the person's approval makes (10 minutes, single use, bound to client, redirect URI, PKCE
//!   S256 challenge and resource).
//! - [`token`]: the code exchange and refresh (access 1 hour; refresh 30 days, rotated on every
//!   use; a refresh token used again after [`REFRESH_GRACE_MS`] revokes the whole connection).
//! - [`revoke`]: RFC 7009 (unknown tokens are fine; a refresh token takes its connection).
//! - [`access`]: the grant behind a bearer access token.
//! - [`offered`]: whether a tool is offered to a grant, or the scope it needs.
//!
//! Codes and tokens are random (`kdoc_`, `kdoa_`, `kdor_` + 64 hex) and stored only as their
//! SHA-256. Nothing here is an event: connections are working state (docs/decisions.md 305).

pub mod cimd;
pub mod error;
pub mod permission;
pub mod pkce;
pub mod prune;
pub mod store;

use std::net::IpAddr;

use kd_core::config::Config;
use kd_core::people::secret_sha256;
use kd_core::random::random_id;
use kd_kernel::Kernel;
use kd_kernel::policy::Connector;
use kd_kernel::registry::Tool;
use serde::Deserialize;

pub use error::ConnectorError;
use store::{ClientRow, CodeRow};

/// The connector endpoint (Streamable HTTP, JSON responses).
pub const CONNECTOR_PATH: &str = "/functions/v1/mcp/connector";
/// The same protected resource on the short path.
pub const ALIAS_PATH: &str = "/mcp";
/// `/oauth/authorize`.
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// RFC 7591 registration.
pub const REGISTER_PATH: &str = "/functions/v1/mcp/oauth/register";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/functions/v1/mcp/oauth/token";
/// RFC 7009 revocation.
pub const REVOKE_PATH: &str = "/functions/v1/mcp/oauth/revoke";

/// Access tokens live an hour.
pub const ACCESS_TTL_MS: i64 = 3600 * 1000;
/// Refresh tokens live 30 days (each use replaces it).
pub const REFRESH_TTL_MS: i64 = 30 * 24 * 3600 * 1000;
/// Authorization codes work for 10 minutes (docs/decisions.md 306).
pub const CODE_TTL_MS: i64 = 10 * 60 * 1000;
/// A refresh token used again within this long after its rotation gets a new pair (a client
/// refreshing in parallel); later, the whole connection is revoked (docs/decisions.md 307).
pub const REFRESH_GRACE_MS: i64 = 30 * 1000;

/// Prefix of access tokens.
pub const ACCESS_PREFIX: &str = "kdoa_";
/// Prefix of refresh tokens.
pub const REFRESH_PREFIX: &str = "kdor_";
/// Prefix of authorization codes.
pub const CODE_PREFIX: &str = "kdoc_";

/// Search KarmaDue (on by default).
pub const SCOPE_DISCOVERY: &str = "kd.discovery.read";
/// Read what was checked (on by default).
pub const SCOPE_EVIDENCE: &str = "kd.evidence.read";
/// Report outcomes after a check (its own switch, pre-set on).
pub const SCOPE_OUTCOMES: &str = "kd.outcomes.write";
/// Post offers, requests, threads and replies (off unless switched on).
pub const SCOPE_LISTINGS: &str = "kd.listings.write";
/// Draft deal terms (off unless switched on).
pub const SCOPE_PROPOSALS: &str = "kd.proposals.write";
/// Every scope a connection can hold, in the consent screen's order.
pub const SCOPES: [&str; 5] = [
    SCOPE_DISCOVERY,
    SCOPE_EVIDENCE,
    SCOPE_OUTCOMES,
    SCOPE_LISTINGS,
    SCOPE_PROPOSALS,
];
/// The scopes every connection holds.
pub const BASE_SCOPES: [&str; 2] = [SCOPE_DISCOVERY, SCOPE_EVIDENCE];
/// The scope named for tools no connected app may call (keys, invitations, crews, spending).
pub const SCOPE_SELF_KEYED: &str = "kd.self_keyed";
/// The actions a day of a connection (spec "Connector permissions").
pub const ACTIONS_PER_DAY: i64 = 40;

/// The issuer: the public URL without a trailing slash, one string everywhere (metadata,
/// the `iss` parameter, the protected resource's `authorization_servers`).
pub fn issuer(config: &Config) -> String {
    config.public_url.trim_end_matches('/').to_owned()
}

/// The canonical resource: the connector URL.
pub fn resource(config: &Config) -> String {
    format!("{}{CONNECTOR_PATH}", issuer(config))
}

/// The canonical resource for a `resource` parameter: absent, the connector URL, the `/mcp`
/// alias or the bare origin (each with or without a trailing slash, scheme and host in any
/// case) all name the one resource (docs/decisions.md 308); anything else is
/// `invalid_target`.
///
/// # Errors
/// [`ConnectorError::InvalidTarget`].
pub fn canonical_resource(config: &Config, sent: Option<&str>) -> Result<String, ConnectorError> {
    let canonical = resource(config);
    let Some(sent) = sent.map(str::trim).filter(|sent| !sent.is_empty()) else {
        return Ok(canonical);
    };
    let base = issuer(config);
    let sent = normalised(sent);
    let ours = [
        normalised(&canonical),
        normalised(&base),
        normalised(&format!("{base}{ALIAS_PATH}")),
    ];
    if ours.contains(&sent) {
        Ok(canonical)
    } else {
        Err(ConnectorError::InvalidTarget(format!(
            "resource must be this hub's connector, {canonical}"
        )))
    }
}

/// Scheme and host lowercased, the trailing slash dropped.
fn normalised(url: &str) -> String {
    let url = url.trim_end_matches('/');
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    format!(
        "{}://{}{}",
        scheme.to_ascii_lowercase(),
        rest[..end].to_ascii_lowercase(),
        &rest[end..]
    )
}

/// An RFC 7591 registration request (unknown metadata is ignored, as §2 asks).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Registration {
    /// The redirect URIs (at least one).
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// A name to show on the consent screen.
    #[serde(default)]
    pub client_name: Option<String>,
    /// Any method is accepted; the client is registered as public (`none`; docs/decisions.md
    /// 309).
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// A subset of `authorization_code`, `refresh_token`.
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    /// A subset of `code`.
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
}

/// A registered client, as the 201 answers it.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The new `client_id`.
    pub client_id: String,
    /// The name stored.
    pub client_name: String,
    /// The redirect URIs stored.
    pub redirect_uris: Vec<String>,
    /// Unix seconds.
    pub issued_at: i64,
}

/// Registrations one address may make in a rolling minute (docs/decisions.md 347).
pub const REGISTRATIONS_PER_MINUTE: u32 = 10;

/// Counts one registration against the address in the hub's limiter (`oauth:register-ip:`);
/// a refused one takes no slot.
async fn admit_registration(hub: &Kernel, ip: Option<IpAddr>) -> Result<(), ConnectorError> {
    admit_per_address(hub, ip, "oauth:register-ip", REGISTRATIONS_PER_MINUTE).await
}

/// Counts one request of kind `bucket` against the address, at most `per_minute` a minute.
async fn admit_per_address(
    hub: &Kernel,
    ip: Option<IpAddr>,
    bucket: &str,
    per_minute: u32,
) -> Result<(), ConnectorError> {
    let Some(ip) = ip else { return Ok(()) };
    let charge =
        kd_core::limits::Charge::one(format!("{bucket}:{}", ip.to_canonical()), per_minute);
    match hub.limiter.take(&[charge], hub.clock.now_ms()).await? {
        Ok(()) => Ok(()),
        Err(limited) => Err(ConnectorError::RateLimited {
            retry_after_s: limited.retry_after_s(),
        }),
    }
}

/// Registers a public client (RFC 7591), charging the registration to `ip`
/// ([`REGISTRATIONS_PER_MINUTE`]) once the metadata is acceptable.
///
/// # Errors
/// `invalid_redirect_uri` (none, more than 10, one over 2,000 characters or not ASCII, or one
/// not https / loopback http or with a fragment), `invalid_client_metadata` (grant or response
/// types this hub does not issue, a name over 100 characters or with invisible characters),
/// `rate_limited` (429), a store failure.
pub async fn register(
    hub: &Kernel,
    request: Registration,
    ip: Option<IpAddr>,
) -> Result<Registered, ConnectorError> {
    if request.redirect_uris.is_empty() || request.redirect_uris.len() > 10 {
        return Err(ConnectorError::InvalidRedirectUri(
            "redirect_uris holds 1 to 10 URIs.".into(),
        ));
    }
    for uri in &request.redirect_uris {
        if let Some(why) = pkce::redirect_refusal(uri) {
            return Err(ConnectorError::InvalidRedirectUri(why.into()));
        }
    }
    if let Some(types) = &request.grant_types
        && types
            .iter()
            .any(|grant| grant != "authorization_code" && grant != "refresh_token")
    {
        return Err(ConnectorError::InvalidClientMetadata(
            "grant_types may hold only authorization_code and refresh_token.".into(),
        ));
    }
    if let Some(types) = &request.response_types
        && types.iter().any(|kind| kind != "code")
    {
        return Err(ConnectorError::InvalidClientMetadata(
            "response_types may hold only code.".into(),
        ));
    }
    let client_name = request
        .client_name
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "An MCP client".to_owned());
    if name_refusal(&client_name).is_some() {
        return Err(ConnectorError::InvalidClientMetadata(
            "client_name is one line of at most 100 characters, without invisible or \
             direction-changing characters."
                .into(),
        ));
    }
    admit_registration(hub, ip).await?;
    let client = ClientRow {
        client_id: random_id::<16>(hub.random.as_ref(), "kdcl_"),
        client_name,
        redirect_uris: request.redirect_uris,
    };
    let stored = client.clone();
    let now_ms = hub
        .store
        .write(move |txn| -> Result<i64, ConnectorError> {
            let now = txn.now_ms();
            store::insert_client(txn.conn(), &stored, now)?;
            Ok(now)
        })
        .await??;
    Ok(Registered {
        client_id: client.client_id,
        client_name: client.client_name,
        redirect_uris: client.redirect_uris,
        issued_at: now_ms / 1000,
    })
}

/// Why a client name cannot be shown (over 100 characters, control or invisible characters).
fn name_refusal(name: &str) -> Option<&'static str> {
    (name.chars().count() > 100
        || name
            .chars()
            .any(|c| c.is_control() || kd_core::scanner::is_format(c)))
    .then_some("client_name is one line of at most 100 characters, without invisible characters")
}

/// The query of `/oauth/authorize` (and the hidden fields of its consent form).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AuthRequest {
    /// Must be `code`.
    #[serde(default)]
    pub response_type: String,
    /// A registered client.
    #[serde(default)]
    pub client_id: String,
    /// One of the client's redirect URIs (loopback: any port).
    #[serde(default)]
    pub redirect_uri: String,
    /// Returned as sent.
    #[serde(default)]
    pub state: Option<String>,
    /// The PKCE challenge.
    #[serde(default)]
    pub code_challenge: String,
    /// Must be `S256`.
    #[serde(default)]
    pub code_challenge_method: String,
    /// Requested scopes (hints: the person decides on the consent screen).
    #[serde(default)]
    pub scope: Option<String>,
    /// RFC 8707 resource (absent: the connector).
    #[serde(default)]
    pub resource: Option<String>,
}

/// The client of an authorization request, when its redirect URI is one it registered.
/// These refusals are shown to the person, never redirected (OAuth 2.1 §4.1.2.1).
///
/// A `client_id` that is a metadata document's URL ([`cimd`]) is fetched or refreshed first.
///
/// # Errors
/// `invalid_client` (unknown client, or an unusable metadata document), `invalid_request` (a
/// redirect URI it did not register), `rate_limited` (over [`cimd::FETCHES_PER_MINUTE`]
/// document fetches from `ip`), a store failure.
pub async fn check_client(
    hub: &Kernel,
    client_id: &str,
    redirect_uri: &str,
    ip: Option<IpAddr>,
) -> Result<ClientRow, ConnectorError> {
    // A client known by its metadata document is fetched (or its stored copy used) first.
    if cimd::is_document_url(client_id, hub.config.outbound_allow_private) {
        cimd::refresh(hub, client_id, ip).await?;
    }
    let id = client_id.to_owned();
    let client = hub
        .store
        .read(move |conn| store::client(conn, &id).map_err(ConnectorError::from))
        .await?
        .ok_or_else(|| {
            ConnectorError::InvalidClient("No client is registered with this client_id.".into())
        })?;
    if !client
        .redirect_uris
        .iter()
        .any(|registered| pkce::redirect_matches(registered, redirect_uri))
    {
        return Err(ConnectorError::InvalidRequest(
            "redirect_uri is not one this client registered.".into(),
        ));
    }
    Ok(client)
}

/// The rest of an authorization request, whose refusals go back to the client's redirect URI:
/// `response_type=code`, PKCE `S256` with a well-formed challenge, known scopes, this hub's
/// resource. Returns the canonical resource.
///
/// # Errors
/// `invalid_request`, `invalid_scope`, `invalid_target`.
pub fn check_request(config: &Config, request: &AuthRequest) -> Result<String, ConnectorError> {
    if request.response_type != "code" {
        return Err(ConnectorError::InvalidRequest(
            "response_type must be code.".into(),
        ));
    }
    if request.code_challenge_method != pkce::S256 {
        return Err(ConnectorError::InvalidRequest(
            "PKCE is required with code_challenge_method S256 (plain is refused).".into(),
        ));
    }
    if !pkce::well_formed(&request.code_challenge) {
        return Err(ConnectorError::InvalidRequest(
            "code_challenge must be the base64url S256 challenge (43 characters).".into(),
        ));
    }
    if let Some(scope) = &request.scope
        && let Some(unknown) = scope
            .split_whitespace()
            .find(|scope| !SCOPES.contains(scope) && *scope != "offline_access")
    {
        return Err(ConnectorError::InvalidScope(format!(
            "Unknown scope {unknown}."
        )));
    }
    canonical_resource(config, request.resource.as_deref())
}

/// The person's approval: a code for `request` holding [`BASE_SCOPES`] and the switches
/// (`outcomes`, `listings`, `proposals`) the person left on. The request must pass
/// [`check_client`] and [`check_request`] first.
///
/// # Errors
/// A store failure.
pub async fn approve(
    hub: &Kernel,
    person_id: &str,
    request: &AuthRequest,
    resource: String,
    switched_on: &[&str],
) -> Result<String, ConnectorError> {
    let scope: Vec<&str> = SCOPES
        .iter()
        .copied()
        .filter(|scope| BASE_SCOPES.contains(scope) || switched_on.contains(scope))
        .collect();
    let code = random_id::<32>(hub.random.as_ref(), CODE_PREFIX);
    let now_ms = hub.clock.now_ms();
    let row = CodeRow {
        code_sha256: secret_sha256(&code),
        client_id: request.client_id.clone(),
        person_id: person_id.to_owned(),
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge.clone(),
        resource,
        scope: scope.join(" "),
        expires_ms: now_ms + CODE_TTL_MS,
        used_ms: None,
        connection_id: None,
    };
    hub.store
        .write(move |txn| -> Result<(), ConnectorError> {
            let now = txn.now_ms();
            store::insert_code(txn.conn(), &row, now)?;
            Ok(())
        })
        .await??;
    Ok(code)
}

mod grant;

pub use store::ConnectedApp;

/// A hosted agent's live connection, as `verify_agent`'s `current.connection` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnectionView {
    /// The connection (`kdcn_…`).
    pub connection_id: String,
    /// The app's registered name (its own words).
    pub app: String,
    /// The scopes the person approved.
    pub scopes: Vec<String>,
    /// When the person approved it, RFC 3339 with milliseconds.
    pub connected_at: String,
    /// Always 0: a connected app never spends.
    pub spend_usd: i64,
}

/// The live connection `agent_id` (a hosted agent) writes through, if any.
///
/// # Errors
/// `internal` when the store fails.
pub fn connection_of(
    conn: &kd_core::db::Connection,
    agent_id: &str,
) -> Result<Option<ConnectionView>, kd_kernel::ToolError> {
    Ok(
        store::live_connection_of(conn, agent_id)?.map(
            |(connection_id, app, scope, created_ms)| ConnectionView {
                connection_id,
                app,
                scopes: scope.split_whitespace().map(str::to_owned).collect(),
                connected_at: kd_core::clock::rfc3339_ms(created_ms),
                spend_usd: 0,
            },
        ),
    )
}

/// The person's live connections (*You → Connected apps*), newest first.
///
/// # Errors
/// A store failure.
pub async fn connected_apps(
    hub: &Kernel,
    person_id: &str,
) -> Result<Vec<ConnectedApp>, ConnectorError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| store::connected_apps(conn, &person_id).map_err(ConnectorError::from))
        .await
}

/// Removes an app: revokes the person's connection, every access and refresh token of it at
/// once.
///
/// # Errors
/// `invalid_request` when the person has no live connection with this id; a store failure.
pub async fn remove_app(
    hub: &Kernel,
    person_id: &str,
    connection_id: &str,
) -> Result<(), ConnectorError> {
    let (person_id, connection_id) = (person_id.to_owned(), connection_id.to_owned());
    let removed = hub
        .store
        .write(move |txn| -> Result<bool, ConnectorError> {
            let now = txn.now_ms();
            Ok(store::revoke_persons_connection(
                txn.conn(),
                &person_id,
                &connection_id,
                now,
            )?)
        })
        .await??;
    if removed {
        Ok(())
    } else {
        Err(ConnectorError::InvalidRequest(
            "You have no connected app with this id (it may be removed already).".into(),
        ))
    }
}

/// Requests a connection may make on the connector each rolling minute (spec "Connector
/// limits": 60 reads a minute per connection; its writes are held to 20 a minute by the
/// hosted agent's tier, per agent and per IP).
pub const READS_PER_MINUTE: u32 = 60;

pub use grant::{Grant, TokenRequest, Tokens, access, is_access_token, revoke, token};

/// Whether `tool` is offered to `grant` on the connector (`Ok`), or the scope it needs: as the
/// tool declares ([`kd_kernel::policy::Connector`]). Offered: the reads, the writes every
/// connection may make (bring finds to the person's inbox, withdraw its own, read its own
/// history), and each write whose scope the person approved. Tools about one's own key
/// (docs/decisions.md 348), identity tools, invitations, crews, spending and the person's own
/// tools never are ([`SCOPE_SELF_KEYED`]).
///
/// # Errors
/// The scope the tool needs.
pub fn offered(tool: &Tool, grant: &Grant) -> Result<(), &'static str> {
    match tool.policy.connector {
        Connector::Read | Connector::EveryConnection => Ok(()),
        Connector::Scope(scope) if grant.holds(scope) => Ok(()),
        Connector::Scope(scope) => Err(scope),
        Connector::Never => Err(SCOPE_SELF_KEYED),
    }
}
