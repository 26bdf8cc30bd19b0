-- The global, append-only, hash-chained event log (spec "Signed log head"; DESIGN rule 1).
-- Every change of state is a row here, written in the same transaction as the projections
-- below. Rows are never updated or deleted; the triggers make the database refuse it.
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY,          -- 1, 2, 3, ... without gaps
    prev_hash  TEXT    NOT NULL,             -- row_hash of seq - 1; 64 zeros for seq 1
    row_hash   TEXT    NOT NULL UNIQUE,      -- lowercase hex SHA-256 of the kd-event-v1 text
    kind       TEXT    NOT NULL,             -- e.g. agent.registered
    actor      TEXT    NOT NULL,             -- who acted: an agent id, "person:<id>" or "hub"
    subject    TEXT    NOT NULL,             -- what it is about: an id, or "" when nothing
    payload    TEXT    NOT NULL,             -- jsonb-canonical text of the event's data
    created_ms INTEGER NOT NULL              -- Unix milliseconds, UTC
) STRICT;
CREATE INDEX events_actor ON events (actor, seq);
CREATE INDEX events_subject ON events (subject, seq);
-- @sqlite
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
-- @end
-- @postgres
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$;
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
-- @end

-- Projection: agents, as the identity events leave them.
CREATE TABLE agents (
    agent_id      TEXT    PRIMARY KEY,
    handle        TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    name_key      TEXT    NOT NULL,          -- the name folded for reservation checks
    platform      TEXT    NOT NULL,
    public_key    TEXT    NOT NULL,          -- base64url, 32 bytes
    status        TEXT    NOT NULL,          -- active | revoked
    owner_id      TEXT,                      -- the owning person, when claimed
    referral      TEXT,
    credential_id TEXT    NOT NULL UNIQUE,   -- the current passport's id
    key_source    TEXT    NOT NULL DEFAULT 'agent', -- agent | server (early builds minted keys)
    created_ms    INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX agents_name_key ON agents (name_key) WHERE status = 'active';

-- Reserved names: every active agent's folded name and its one-deletion variants, so that a
-- lookalike (one edit away) is found with an index lookup instead of a scan.
CREATE TABLE name_variants (
    variant  TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    PRIMARY KEY (variant, agent_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX name_variants_agent ON name_variants (agent_id);

-- Passports: every passport the hub has issued, each signed by kd-passport-1.
CREATE TABLE passports (
    credential_id TEXT    PRIMARY KEY,
    agent_id      TEXT    NOT NULL,
    state         TEXT    NOT NULL,          -- listed | verified | revoked
    signed_text   TEXT    NOT NULL,
    signature     TEXT    NOT NULL,
    issued_ms     INTEGER NOT NULL,
    revoked_ms    INTEGER
) STRICT;
CREATE INDEX passports_agent ON passports (agent_id);

-- Registration challenges (register_challenge). Not facts: a challenge is working state,
-- used once, and never part of the log.
CREATE TABLE challenges (
    challenge_id TEXT    PRIMARY KEY,
    payload      TEXT    NOT NULL,
    issued_ms    INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL,
    used_ms      INTEGER
) STRICT;

-- Request nonces, single use per agent, remembered across restarts.
CREATE TABLE nonces (
    agent_id   TEXT    NOT NULL,
    nonce      TEXT    NOT NULL,
    seen_ms    INTEGER NOT NULL,
    PRIMARY KEY (agent_id, nonce)
) STRICT, WITHOUT ROWID;
