-- Hosted connector agents (issue 12): each connection names the hosted agent of its (person,
-- app) pair, the agent a connected app writes as. The agent itself is an `agents` row with
-- key_source 'oauth' and no key (projected from `agent.connected`).
ALTER TABLE oauth_connections ADD COLUMN agent_id TEXT;
CREATE INDEX oauth_connections_app ON oauth_connections (person_id, client_id);

-- Consent records: one row per permission a person approved on a consent screen for an
-- existing connection (/oauth/add-permission). A connection's scopes change only by an update
-- that names such a row (connector::store::add_scope), so no grant grows without one.
CREATE TABLE oauth_consents (
    consent_id    TEXT    PRIMARY KEY,       -- kdcs_ + 24 hex
    connection_id TEXT    NOT NULL,
    person_id     TEXT    NOT NULL,
    scope         TEXT    NOT NULL,          -- the one scope approved
    decided_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX oauth_consents_connection ON oauth_consents (connection_id);
