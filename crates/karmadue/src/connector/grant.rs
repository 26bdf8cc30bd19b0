//! The token endpoint's grants (authorization_code, refresh_token), RFC 7009 revocation and
//! the bearer check of the connector. Every rule runs inside one writer transaction, so a
//! code or refresh token is spent exactly once under concurrency (compare-and-swap on
//! `used_ms` / `rotated_ms`). A refusal that must keep its effect (a replayed code or refresh
//! token revokes the connection) is returned as `Ok(Err(refusal))`, so the write commits.

use kd_core::people::secret_sha256;
use kd_core::random::random_id;
use kd_kernel::Kernel;
use serde::Deserialize;

use super::store::{self, ConnectionRow};
use super::{
    ACCESS_PREFIX, ACCESS_TTL_MS, ConnectorError, REFRESH_GRACE_MS, REFRESH_PREFIX, REFRESH_TTL_MS,
    canonical_resource, pkce,
};
use crate::identity::hosted;

/// The token endpoint's parameters (form-encoded or JSON).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TokenRequest {
    /// `authorization_code` or `refresh_token`.
    #[serde(default)]
    pub grant_type: String,
    /// The code (authorization_code).
    #[serde(default)]
    pub code: Option<String>,
    /// The redirect URI of the authorization request (authorization_code).
    #[serde(default)]
    pub redirect_uri: Option<String>,
    /// The PKCE verifier (authorization_code).
    #[serde(default)]
    pub code_verifier: Option<String>,
    /// The client.
    #[serde(default)]
    pub client_id: Option<String>,
    /// The refresh token (refresh_token).
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// RFC 8707 resource.
    #[serde(default)]
    pub resource: Option<String>,
    /// RFC 6749 §6: the scopes a refresh asks for, space-separated; each must be one the
    /// connection holds (absent: all of them).
    #[serde(default)]
    pub scope: Option<String>,
}

/// A token response.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// `kdoa_…`, an hour.
    pub access_token: String,
    /// `kdor_…`, 30 days, single use.
    pub refresh_token: String,
    /// Seconds the access token lives.
    pub expires_in: i64,
    /// The connection's scopes, space-separated.
    pub scope: String,
}

/// What an access token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The connection.
    pub connection_id: String,
    /// The person who approved it.
    pub person_id: String,
    /// The client.
    pub client_id: String,
    /// Its scopes.
    pub scopes: Vec<String>,
    /// The hosted agent the app writes as.
    pub agent_id: String,
}

impl Grant {
    /// Whether the grant holds `scope`.
    pub fn holds(&self, scope: &str) -> bool {
        self.scopes.iter().any(|held| held == scope)
    }
}

/// A fresh pair and the connection it is for (and the ids of a hosted agent, should the
/// connection need a new one).
struct Minted {
    access: String,
    refresh: String,
    connection_id: String,
    hosted: hosted::NewHosted,
}

fn mint(hub: &Kernel) -> Minted {
    Minted {
        access: random_id::<32>(hub.random.as_ref(), ACCESS_PREFIX),
        refresh: random_id::<32>(hub.random.as_ref(), REFRESH_PREFIX),
        connection_id: random_id::<12>(hub.random.as_ref(), "kdcn_"),
        hosted: hosted::NewHosted {
            agent_id: kd_protocol::ids::AgentId::from_random_bytes(
                kd_core::random::random_bytes::<16>(hub.random.as_ref()),
            ),
            credential_id: random_id::<12>(hub.random.as_ref(), "kdp_"),
        },
    }
}

/// The hosted agent of the person and client of `code`: the one their latest connection
/// wrote as while it is still theirs and active, else a new one (`agent.connected`); either
/// way linked to the person with the connection's scopes (`owner.linked`).
fn hosted_agent(
    txn: &mut kd_core::store::WriteTxn<'_>,
    key: &kd_core::keys::ServerKey,
    code: &store::CodeRow,
    minted: &Minted,
) -> Result<String, ConnectorError> {
    let conn = txn.conn();
    let kept = match store::hosted_agent(conn, &code.person_id, &code.client_id)? {
        Some(agent_id) if hosted::still_theirs(conn, &agent_id, &code.person_id)? => Some(agent_id),
        _ => None,
    };
    let scopes: Vec<&str> = code.scope.split_whitespace().collect();
    let grant = hosted::GrantLines {
        connection_id: &minted.connection_id,
        scopes: &scopes,
        actions_per_day: super::ACTIONS_PER_DAY,
    };
    let agent_id = if let Some(agent_id) = kept {
        // A reconnection is a new grant: the passport states it (docs/decisions.md 405).
        let actor = format!("person:{}", code.person_id);
        let credential_id = &minted.hosted.credential_id;
        hosted::reissue(txn, key, &actor, &agent_id, credential_id, grant)?;
        agent_id
    } else {
        let person_name = kd_core::people::find_person(conn, &code.person_id)?
            .map(|person| person.display_name)
            .unwrap_or_default();
        let app = store::client(conn, &code.client_id)?
            .map_or_else(|| "an app".to_owned(), |client| client.client_name);
        let whom = hosted::HostedFor {
            person_id: &code.person_id,
            person_name: &person_name,
            client_id: &code.client_id,
            app: &app,
        };
        hosted::create(txn, key, &minted.hosted, whom, grant)?
    };
    crate::people::link(
        txn,
        &agent_id,
        &code.person_id,
        &minted.connection_id,
        &scopes,
        super::ACTIONS_PER_DAY,
    )?;
    Ok(agent_id)
}

fn required<'a>(value: Option<&'a String>, name: &str) -> Result<&'a str, ConnectorError> {
    value
        .map(String::as_str)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| ConnectorError::InvalidRequest(format!("{name} is required.")))
}

/// The token endpoint: exchanges a code or a refresh token for a new pair.
///
/// # Errors
/// `unsupported_grant_type`, `invalid_request` (a missing parameter), `invalid_grant` (see
/// the grant), `invalid_target`, a store failure.
pub async fn token(hub: &Kernel, request: TokenRequest) -> Result<Tokens, ConnectorError> {
    match request.grant_type.as_str() {
        "authorization_code" => exchange_code(hub, request).await,
        "refresh_token" => refresh(hub, request).await,
        "" => Err(ConnectorError::InvalidRequest(
            "grant_type is required.".into(),
        )),
        other => Err(ConnectorError::UnsupportedGrantType(format!(
            "grant_type {other} is not supported (authorization_code, refresh_token)."
        ))),
    }
}

/// Stores the minted pair for `connection_id` and answers it.
fn issue(
    conn: &kd_core::db::Connection,
    minted: &Minted,
    connection_id: &str,
    scope: &str,
    now: i64,
) -> Result<Tokens, ConnectorError> {
    store::insert_token(
        conn,
        &secret_sha256(&minted.access),
        connection_id,
        "access",
        now,
        now + ACCESS_TTL_MS,
    )?;
    store::insert_token(
        conn,
        &secret_sha256(&minted.refresh),
        connection_id,
        "refresh",
        now,
        now + REFRESH_TTL_MS,
    )?;
    Ok(Tokens {
        access_token: minted.access.clone(),
        refresh_token: minted.refresh.clone(),
        expires_in: ACCESS_TTL_MS / 1000,
        scope: scope.to_owned(),
    })
}

/// authorization_code: the code must be unused, unexpired, the client's, sent with the same
/// redirect URI, a verifier whose S256 is the challenge, and the same resource. A code used a
/// second time revokes the connection its first use made.
async fn exchange_code(hub: &Kernel, request: TokenRequest) -> Result<Tokens, ConnectorError> {
    let code = required(request.code.as_ref(), "code")?;
    let client_id = required(request.client_id.as_ref(), "client_id")?.to_owned();
    let redirect_uri = required(request.redirect_uri.as_ref(), "redirect_uri")?.to_owned();
    let verifier = required(request.code_verifier.as_ref(), "code_verifier")?.to_owned();
    let resource = canonical_resource(&hub.config, request.resource.as_deref())?;
    let code_sha256 = secret_sha256(code);
    let minted = mint(hub);
    let key = hub.passport_key.clone();
    hub.store
        .write(
            move |txn| -> Result<Result<Tokens, ConnectorError>, ConnectorError> {
                let now = txn.now_ms();
                let conn = txn.conn();
                let invalid = |why: &str| Ok(Err(ConnectorError::InvalidGrant(why.to_owned())));
                let Some(row) = store::code(conn, &code_sha256)? else {
                    return invalid("The code is unknown.");
                };
                if row.used_ms.is_some() {
                    if let Some(connection_id) = &row.connection_id {
                        store::revoke_connection(conn, connection_id, now)?;
                    }
                    return invalid("The code was already used; the tokens it gave are revoked.");
                }
                if row.expires_ms <= now {
                    return invalid("The code expired (codes work for 10 minutes).");
                }
                if row.client_id != client_id {
                    return invalid("The code was issued to another client.");
                }
                if row.redirect_uri != redirect_uri {
                    return invalid("redirect_uri differs from the authorization request's.");
                }
                if !pkce::verifies(&verifier, &row.code_challenge) {
                    return invalid("code_verifier does not match the code_challenge (S256).");
                }
                if row.resource != resource {
                    return invalid("resource differs from the authorization request's.");
                }
                if !store::use_code(conn, &code_sha256, &minted.connection_id, now)? {
                    return invalid("The code was already used.");
                }
                let agent_id = hosted_agent(txn, &key, &row, &minted)?;
                let conn = txn.conn();
                // The person's latest approval of this app is the one in force: an older live
                // connection of it ends here (docs/decisions.md 329).
                store::revoke_app_connections(conn, &row.person_id, &row.client_id, now)?;
                let connection = ConnectionRow {
                    connection_id: minted.connection_id.clone(),
                    person_id: row.person_id,
                    client_id: row.client_id,
                    scope: row.scope,
                    resource: row.resource,
                    agent_id: Some(agent_id),
                };
                store::insert_connection(conn, &connection, now)?;
                Ok(Ok(issue(
                    conn,
                    &minted,
                    &connection.connection_id,
                    &connection.scope,
                    now,
                )?))
            },
        )
        .await??
}

/// refresh_token: a live refresh token of the client's connection gives a new pair and is
/// spent. Used again within [`REFRESH_GRACE_MS`] of its rotation it gives another pair (a
/// client refreshing in parallel); later, the whole connection is revoked.
async fn refresh(hub: &Kernel, request: TokenRequest) -> Result<Tokens, ConnectorError> {
    let presented = required(request.refresh_token.as_ref(), "refresh_token")?;
    let client_id = required(request.client_id.as_ref(), "client_id")?.to_owned();
    if request.resource.is_some() {
        canonical_resource(&hub.config, request.resource.as_deref())?;
    }
    let token_sha256 = secret_sha256(presented);
    let minted = mint(hub);
    let asked = request.scope.clone();
    hub.store
        .write(move |txn| -> Result<Result<Tokens, ConnectorError>, ConnectorError> {
            let now = txn.now_ms();
            let conn = txn.conn();
            let invalid = |why: &str| Ok(Err(ConnectorError::InvalidGrant(why.to_owned())));
            let Some(row) = store::token(conn, &token_sha256)? else {
                return invalid("The refresh token is unknown.");
            };
            if row.kind != "refresh" || row.connection.client_id != client_id {
                return invalid("The refresh token is unknown.");
            }
            if row.connection_revoked_ms.is_some() || row.revoked_ms.is_some() {
                return invalid("The connection was revoked. Connect the app again.");
            }
            if row.expires_ms <= now {
                return invalid("The refresh token expired (30 days). Connect the app again.");
            }
            if let Some(beyond) = asked.as_deref().and_then(|asked| {
                asked
                    .split_whitespace()
                    .find(|scope| !row.connection.scope.split_whitespace().any(|held| held == *scope))
            }) {
                return Ok(Err(ConnectorError::InvalidScope(format!(
                    "{beyond} was not granted to this connection: a refresh may ask only for scopes the person approved ({}).",
                    row.connection.scope
                ))));
            }
            let connection_id = row.connection.connection_id.clone();
            let in_grace = |rotated: i64| now - rotated <= REFRESH_GRACE_MS;
            match row.rotated_ms {
                Some(rotated) if !in_grace(rotated) => {
                    store::revoke_connection(conn, &connection_id, now)?;
                    return invalid(
                        "The refresh token was already used: the whole connection is revoked. Connect the app again.",
                    );
                }
                Some(_) => {}
                None => {
                    store::rotate_token(conn, &token_sha256, now)?;
                }
            }
            Ok(Ok(issue(
                conn,
                &minted,
                &connection_id,
                &row.connection.scope,
                now,
            )?))
        })
        .await??
}

/// RFC 7009: revokes `token` if it is one of ours; an unknown or malformed token is fine
/// (the endpoint answers 200 all the same). A refresh token revokes its whole connection, an
/// access token itself (docs/decisions.md 310). A token of another client is left alone.
///
/// # Errors
/// A store failure.
pub async fn revoke(
    hub: &Kernel,
    token: &str,
    client_id: Option<&str>,
) -> Result<(), ConnectorError> {
    let token_sha256 = secret_sha256(token);
    let client_id = client_id.map(str::to_owned);
    hub.store
        .write(move |txn| -> Result<(), ConnectorError> {
            let now = txn.now_ms();
            let conn = txn.conn();
            let Some(row) = store::token(conn, &token_sha256)? else {
                return Ok(());
            };
            if client_id
                .as_deref()
                .is_some_and(|client| client != row.connection.client_id)
            {
                return Ok(());
            }
            if row.kind == "refresh" {
                store::revoke_connection(conn, &row.connection.connection_id, now)?;
            } else {
                store::revoke_token(conn, &token_sha256, now)?;
            }
            Ok(())
        })
        .await??;
    Ok(())
}

/// Whether `bearer` looks like one of this hub's access tokens (so the self-keyed endpoint
/// can answer `wrong_endpoint` without a lookup).
pub fn is_access_token(bearer: &str) -> bool {
    bearer.starts_with(ACCESS_PREFIX)
}

/// The grant of a live access token (`None`: unknown, expired, revoked, or its connection
/// revoked).
///
/// # Errors
/// A store failure.
pub async fn access(hub: &Kernel, bearer: &str) -> Result<Option<Grant>, ConnectorError> {
    if !is_access_token(bearer) {
        return Ok(None);
    }
    let token_sha256 = secret_sha256(bearer);
    let now_ms = hub.clock.now_ms();
    let row = hub
        .store
        .read(move |conn| store::token(conn, &token_sha256).map_err(ConnectorError::from))
        .await?;
    Ok(row
        .filter(|row| {
            row.kind == "access"
                && row.expires_ms > now_ms
                && row.revoked_ms.is_none()
                && row.connection_revoked_ms.is_none()
        })
        .and_then(|row| {
            Some(Grant {
                agent_id: row.connection.agent_id?,
                connection_id: row.connection.connection_id,
                person_id: row.connection.person_id,
                client_id: row.connection.client_id,
                scopes: row
                    .connection
                    .scope
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect(),
            })
        }))
}
