//! The connector's storage: `oauth_clients`, `oauth_codes`, `oauth_connections` and
//! `oauth_tokens` (docs/architecture.md "Storage modules"). Codes and tokens are stored only as
//! their SHA-256 ([`kd_core::people::secret_sha256`]); callers pass the hash.

use kd_core::db::{Connection, DbError, OptionalExtension, params};

/// A registered client (RFC 7591).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRow {
    /// `kdcl_…`.
    pub client_id: String,
    /// The name it gave (shown on the consent screen as data).
    pub client_name: String,
    /// Its registered redirect URIs.
    pub redirect_uris: Vec<String>,
}

/// An authorization code's binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRow {
    /// SHA-256 of the code, hex.
    pub code_sha256: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The person who approved.
    pub person_id: String,
    /// The redirect URI of the authorization request, exactly as sent.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The canonical resource.
    pub resource: String,
    /// Approved scopes, space-separated.
    pub scope: String,
    /// Unix ms after which the code no longer works.
    pub expires_ms: i64,
    /// Set once it was exchanged.
    pub used_ms: Option<i64>,
    /// The connection its exchange made.
    pub connection_id: Option<String>,
}

/// A connection (one approved grant of a person to a client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRow {
    /// `kdcn_…`.
    pub connection_id: String,
    /// The person who approved it.
    pub person_id: String,
    /// The client.
    pub client_id: String,
    /// Approved scopes, space-separated.
    pub scope: String,
    /// The canonical resource its tokens are for.
    pub resource: String,
    /// The hosted agent the app writes as (none on a connection made before hosted agents
    /// existed: its tokens no longer work, docs/decisions.md 316).
    pub agent_id: Option<String>,
}

/// A token with its connection's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    /// `access` or `refresh`.
    pub kind: String,
    /// Unix ms it stops working.
    pub expires_ms: i64,
    /// When a refresh token was exchanged.
    pub rotated_ms: Option<i64>,
    /// When the token itself was revoked.
    pub revoked_ms: Option<i64>,
    /// Its connection.
    pub connection: ConnectionRow,
    /// When its connection was revoked.
    pub connection_revoked_ms: Option<i64>,
}

/// Stores a registered client.
///
/// # Errors
/// When the store fails.
pub fn insert_client(conn: &Connection, client: &ClientRow, now_ms: i64) -> Result<(), DbError> {
    let uris = serde_json::to_string(&client.redirect_uris).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_ms) VALUES (?1, ?2, ?3, ?4)",
        params![client.client_id, client.client_name, uris, now_ms],
    )?;
    Ok(())
}

/// Stores (or refreshes) the client described by a Client ID Metadata Document, whose copy is
/// used until `expires_ms`.
///
/// # Errors
/// When the store fails.
pub fn upsert_document_client(
    conn: &Connection,
    client: &ClientRow,
    expires_ms: i64,
    now_ms: i64,
) -> Result<(), DbError> {
    let uris = serde_json::to_string(&client.redirect_uris).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO oauth_clients (client_id, client_name, redirect_uris, created_ms, metadata_expires_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name,
             redirect_uris = excluded.redirect_uris, metadata_expires_ms = excluded.metadata_expires_ms",
        params![client.client_id, client.client_name, uris, now_ms, expires_ms],
    )?;
    Ok(())
}

/// Deletes at most `limit` metadata-document clients whose copy expired before `before_ms`
/// and that no connection or authorization code names (a connected app stays listed), first
/// expired first; returns how many (docs/decisions.md 426).
///
/// # Errors
/// When the store fails.
pub fn prune_documents(conn: &Connection, before_ms: i64, limit: i64) -> Result<usize, DbError> {
    conn.prepare_cached(
        "DELETE FROM oauth_clients WHERE client_id IN (
            SELECT k.client_id FROM oauth_clients k
            WHERE k.metadata_expires_ms IS NOT NULL AND k.metadata_expires_ms < ?1
              AND NOT EXISTS (SELECT 1 FROM oauth_connections c WHERE c.client_id = k.client_id)
              AND NOT EXISTS (SELECT 1 FROM oauth_codes o WHERE o.client_id = k.client_id)
            ORDER BY k.metadata_expires_ms LIMIT CAST(?2 AS BIGINT))",
    )?
    .execute(params![before_ms, limit])
}

/// Until when the stored copy of a metadata-document client is used (None: a client
/// registered by DCR, or no such client).
///
/// # Errors
/// When the store fails.
pub fn document_expiry(conn: &Connection, client_id: &str) -> Result<Option<i64>, DbError> {
    Ok(conn
        .prepare_cached("SELECT metadata_expires_ms FROM oauth_clients WHERE client_id = ?1")?
        .query_row([client_id], |row| row.get::<Option<i64>>(0))
        .optional()?
        .flatten())
}

/// The client `client_id`, if registered.
///
/// # Errors
/// When the store fails.
pub fn client(conn: &Connection, client_id: &str) -> Result<Option<ClientRow>, DbError> {
    conn.prepare_cached(
        "SELECT client_id, client_name, redirect_uris FROM oauth_clients WHERE client_id = ?1",
    )?
    .query_row([client_id], |row| {
        let uris: String = row.get(2)?;
        Ok(ClientRow {
            client_id: row.get(0)?,
            client_name: row.get(1)?,
            redirect_uris: serde_json::from_str(&uris).unwrap_or_default(),
        })
    })
    .optional()
}

/// Stores an authorization code's binding; codes past their expiry are forgotten.
///
/// # Errors
/// When the store fails.
pub fn insert_code(conn: &Connection, code: &CodeRow, now_ms: i64) -> Result<(), DbError> {
    // A day after expiry: a late replay still finds the used code and revokes its connection.
    conn.execute(
        "DELETE FROM oauth_codes WHERE expires_ms <= ?1",
        [now_ms - 24 * 3600 * 1000],
    )?;
    conn.execute(
        "INSERT INTO oauth_codes (code_sha256, client_id, person_id, redirect_uri, code_challenge, resource, scope, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            code.code_sha256,
            code.client_id,
            code.person_id,
            code.redirect_uri,
            code.code_challenge,
            code.resource,
            code.scope,
            now_ms,
            code.expires_ms
        ],
    )?;
    Ok(())
}

/// The code whose SHA-256 is `code_sha256`.
///
/// # Errors
/// When the store fails.
pub fn code(conn: &Connection, code_sha256: &str) -> Result<Option<CodeRow>, DbError> {
    conn.prepare_cached(
        "SELECT code_sha256, client_id, person_id, redirect_uri, code_challenge, resource, scope, expires_ms, used_ms, connection_id FROM oauth_codes WHERE code_sha256 = ?1",
    )?
    .query_row([code_sha256], |row| {
        Ok(CodeRow {
            code_sha256: row.get(0)?,
            client_id: row.get(1)?,
            person_id: row.get(2)?,
            redirect_uri: row.get(3)?,
            code_challenge: row.get(4)?,
            resource: row.get(5)?,
            scope: row.get(6)?,
            expires_ms: row.get(7)?,
            used_ms: row.get(8)?,
            connection_id: row.get(9)?,
        })
    })
    .optional()
}

/// Marks a code used (compare-and-swap: `false` when it already was).
///
/// # Errors
/// When the store fails.
pub fn use_code(
    conn: &Connection,
    code_sha256: &str,
    connection_id: &str,
    now_ms: i64,
) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE oauth_codes SET used_ms = ?2, connection_id = ?3 WHERE code_sha256 = ?1 AND used_ms IS NULL",
        params![code_sha256, now_ms, connection_id],
    )? == 1)
}

/// Stores a new connection.
///
/// # Errors
/// When the store fails.
pub fn insert_connection(
    conn: &Connection,
    connection: &ConnectionRow,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO oauth_connections (connection_id, person_id, client_id, scope, resource, created_ms, agent_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            connection.connection_id,
            connection.person_id,
            connection.client_id,
            connection.scope,
            connection.resource,
            now_ms,
            connection.agent_id
        ],
    )?;
    Ok(())
}

/// The hosted agent the person's latest connection with `client_id` wrote as, if any (a
/// reconnection of the same app keeps its agent).
///
/// # Errors
/// When the store fails.
pub fn hosted_agent(
    conn: &Connection,
    person_id: &str,
    client_id: &str,
) -> Result<Option<String>, DbError> {
    conn.prepare_cached(
        "SELECT agent_id FROM oauth_connections
         WHERE person_id = ?1 AND client_id = ?2 AND agent_id IS NOT NULL
         ORDER BY created_ms DESC, connection_id LIMIT 1",
    )?
    .query_row(params![person_id, client_id], |row| row.get(0))
    .optional()
}

/// Revokes the person's live connections with `client_id`: a new approval of the same app
/// replaces them (one live connection per person and app).
///
/// # Errors
/// When the store fails.
pub fn revoke_app_connections(
    conn: &Connection,
    person_id: &str,
    client_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "UPDATE oauth_connections SET revoked_ms = ?3 WHERE person_id = ?1 AND client_id = ?2 AND revoked_ms IS NULL",
        params![person_id, client_id, now_ms],
    )?;
    Ok(())
}

/// Revokes a connection: every token of it stops working at once.
///
/// # Errors
/// When the store fails.
pub fn revoke_connection(
    conn: &Connection,
    connection_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "UPDATE oauth_connections SET revoked_ms = ?2 WHERE connection_id = ?1 AND revoked_ms IS NULL",
        params![connection_id, now_ms],
    )?;
    Ok(())
}

/// Stores a token's hash for `connection_id`.
///
/// # Errors
/// When the store fails.
pub fn insert_token(
    conn: &Connection,
    token_sha256: &str,
    connection_id: &str,
    kind: &str,
    now_ms: i64,
    expires_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO oauth_tokens (token_sha256, connection_id, kind, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![token_sha256, connection_id, kind, now_ms, expires_ms],
    )?;
    Ok(())
}

/// The token whose SHA-256 is `token_sha256`, with its connection.
///
/// # Errors
/// When the store fails.
pub fn token(conn: &Connection, token_sha256: &str) -> Result<Option<TokenRow>, DbError> {
    conn.prepare_cached(
        "SELECT t.kind, t.expires_ms, t.rotated_ms, t.revoked_ms, c.connection_id, c.person_id, c.client_id, c.scope, c.resource, c.revoked_ms, c.agent_id
         FROM oauth_tokens t JOIN oauth_connections c ON c.connection_id = t.connection_id
         WHERE t.token_sha256 = ?1",
    )?
    .query_row([token_sha256], |row| {
        Ok(TokenRow {
            kind: row.get(0)?,
            expires_ms: row.get(1)?,
            rotated_ms: row.get(2)?,
            revoked_ms: row.get(3)?,
            connection: ConnectionRow {
                connection_id: row.get(4)?,
                person_id: row.get(5)?,
                client_id: row.get(6)?,
                scope: row.get(7)?,
                resource: row.get(8)?,
                agent_id: row.get(10)?,
            },
            connection_revoked_ms: row.get(9)?,
        })
    })
    .optional()
}

/// Marks a refresh token exchanged (compare-and-swap: `false` when it already was).
///
/// # Errors
/// When the store fails.
pub fn rotate_token(conn: &Connection, token_sha256: &str, now_ms: i64) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE oauth_tokens SET rotated_ms = ?2 WHERE token_sha256 = ?1 AND rotated_ms IS NULL",
        params![token_sha256, now_ms],
    )? == 1)
}

/// Revokes one token.
///
/// # Errors
/// When the store fails.
pub fn revoke_token(conn: &Connection, token_sha256: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE oauth_tokens SET revoked_ms = ?2 WHERE token_sha256 = ?1 AND revoked_ms IS NULL",
        params![token_sha256, now_ms],
    )?;
    Ok(())
}

/// A live connection as *Connected apps* lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedApp {
    /// The connection.
    pub connection_id: String,
    /// The client's id (`kdcl_…`, or its metadata document's URL).
    pub client_id: String,
    /// The client's name (its own words).
    pub client_name: String,
    /// Approved scopes, space-separated.
    pub scope: String,
    /// When it was approved, Unix ms.
    pub created_ms: i64,
    /// Its hosted agent (None for a connection made before hosted agents).
    pub agent_id: Option<String>,
}

/// The person's live connections, newest first.
///
/// # Errors
/// When the store fails.
pub fn connected_apps(conn: &Connection, person_id: &str) -> Result<Vec<ConnectedApp>, DbError> {
    conn.prepare_cached(
        "SELECT c.connection_id, k.client_name, c.scope, c.created_ms, c.client_id, c.agent_id
         FROM oauth_connections c JOIN oauth_clients k ON k.client_id = c.client_id
         WHERE c.person_id = ?1 AND c.revoked_ms IS NULL
         ORDER BY c.created_ms DESC, c.connection_id",
    )?
    .query_map([person_id], |row| {
        Ok(ConnectedApp {
            connection_id: row.get(0)?,
            client_id: row.get(4)?,
            client_name: row.get(1)?,
            scope: row.get(2)?,
            created_ms: row.get(3)?,
            agent_id: row.get(5)?,
        })
    })?
    .collect()
}

/// Revokes the person's own live connection (`false`: none such).
///
/// # Errors
/// When the store fails.
pub fn revoke_persons_connection(
    conn: &Connection,
    person_id: &str,
    connection_id: &str,
    now_ms: i64,
) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE oauth_connections SET revoked_ms = ?3 WHERE connection_id = ?1 AND person_id = ?2 AND revoked_ms IS NULL",
        params![connection_id, person_id, now_ms],
    )? == 1)
}

/// The live connection a hosted agent writes through, newest first: `(connection_id,
/// client_name, scope, created_ms)`.
///
/// # Errors
/// When the store fails.
pub fn live_connection_of(
    conn: &Connection,
    agent_id: &str,
) -> Result<Option<(String, String, String, i64)>, DbError> {
    conn.prepare_cached(
        "SELECT c.connection_id, k.client_name, c.scope, c.created_ms, c.agent_id
         FROM oauth_connections c JOIN oauth_clients k ON k.client_id = c.client_id
         WHERE c.agent_id = ?1 AND c.revoked_ms IS NULL
         ORDER BY c.created_ms DESC, c.connection_id LIMIT 1",
    )?
    .query_row([agent_id], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })
    .optional()
}

/// The person's live connection that `agent_id` writes through: `(connection_id,
/// client_name, scope)`.
///
/// # Errors
/// When the store fails.
pub fn persons_connection_of(
    conn: &Connection,
    agent_id: &str,
    person_id: &str,
) -> Result<Option<(String, String, String)>, DbError> {
    conn.prepare_cached(
        "SELECT c.connection_id, k.client_name, c.scope
         FROM oauth_connections c JOIN oauth_clients k ON k.client_id = c.client_id
         WHERE c.agent_id = ?1 AND c.person_id = ?2 AND c.revoked_ms IS NULL
         ORDER BY c.created_ms DESC, c.connection_id LIMIT 1",
    )?
    .query_row(params![agent_id, person_id], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
    })
    .optional()
}

/// Stores a consent record: `person_id` approved `scope` for `connection_id`.
///
/// # Errors
/// When the store fails.
pub fn insert_consent(
    conn: &Connection,
    consent_id: &str,
    connection_id: &str,
    person_id: &str,
    scope: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO oauth_consents (consent_id, connection_id, person_id, scope, decided_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![consent_id, connection_id, person_id, scope, now_ms],
    )?;
    Ok(())
}

/// Sets a live connection's scopes to `scopes`, which add `added` — only when consent record
/// `consent_id` approves exactly that scope for this connection (the guard: `false` when there
/// is no such record, and nothing changed).
///
/// # Errors
/// When the store fails.
pub fn add_scope(
    conn: &Connection,
    connection_id: &str,
    scopes: &str,
    consent_id: &str,
    added: &str,
) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE oauth_connections SET scope = ?2
         WHERE connection_id = ?1 AND revoked_ms IS NULL
           AND EXISTS (SELECT 1 FROM oauth_consents
                       WHERE consent_id = ?3 AND connection_id = ?1 AND scope = ?4)",
        params![connection_id, scopes, consent_id, added],
    )? == 1)
}
