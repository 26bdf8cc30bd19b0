-- The OAuth 2.1 connector (issue 12): the hub as its own authorization server for Claude,
-- ChatGPT and any MCP client. Working state, never logged: codes and tokens are kept only as
-- their SHA-256, never in the clear.

-- Clients registered by RFC 7591 dynamic client registration (public clients only).
CREATE TABLE oauth_clients (
    client_id     TEXT    PRIMARY KEY,       -- kdcl_ + 32 hex
    client_name   TEXT    NOT NULL,
    redirect_uris TEXT    NOT NULL,          -- JSON array of the registered redirect URIs
    created_ms    INTEGER NOT NULL
) STRICT;

-- Authorization codes: single use, bound to client, redirect URI, PKCE challenge and resource.
CREATE TABLE oauth_codes (
    code_sha256    TEXT    PRIMARY KEY,
    client_id      TEXT    NOT NULL,
    person_id      TEXT    NOT NULL,
    redirect_uri   TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,         -- S256: base64url(SHA-256(verifier))
    resource       TEXT    NOT NULL,         -- the canonical connector URL
    scope          TEXT    NOT NULL,         -- the approved scopes, space-separated
    created_ms     INTEGER NOT NULL,
    expires_ms     INTEGER NOT NULL,
    used_ms        INTEGER,                  -- set once; a second use revokes its connection
    connection_id  TEXT                      -- the connection its exchange made
) STRICT;

-- A connection: one approved grant of a person to a client; every token belongs to one.
CREATE TABLE oauth_connections (
    connection_id TEXT    PRIMARY KEY,       -- kdcn_ + 24 hex
    person_id     TEXT    NOT NULL,
    client_id     TEXT    NOT NULL,
    scope         TEXT    NOT NULL,
    resource      TEXT    NOT NULL,
    created_ms    INTEGER NOT NULL,
    revoked_ms    INTEGER                    -- set: every token of the connection is dead
) STRICT;
CREATE INDEX oauth_connections_person ON oauth_connections (person_id);

-- Access (1 hour) and refresh (30 days, rotated on every use) tokens.
CREATE TABLE oauth_tokens (
    token_sha256  TEXT    PRIMARY KEY,
    connection_id TEXT    NOT NULL,
    kind          TEXT    NOT NULL,          -- access | refresh
    created_ms    INTEGER NOT NULL,
    expires_ms    INTEGER NOT NULL,
    rotated_ms    INTEGER,                   -- refresh: when it was exchanged
    revoked_ms    INTEGER
) STRICT;
CREATE INDEX oauth_tokens_connection ON oauth_tokens (connection_id);
