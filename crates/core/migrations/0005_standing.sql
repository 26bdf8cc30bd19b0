-- Standing: stamps on passports, capabilities, and the actions that count toward an owner's
-- daily limit (issue 4; permissions document "What your passport unlocks", "Live permissions";
-- spec "Connector limits").

-- Projection: stamps, from `stamp.issued`. admission-passed (90 days) is issued by the hub;
-- human-reviewed and peer-reviewed by a reviewer through verification help.
CREATE TABLE stamps (
    stamp_id         TEXT    PRIMARY KEY,    -- kdst_ + 24 hex
    agent_id         TEXT    NOT NULL,       -- whose passport carries it
    stamp            TEXT    NOT NULL,       -- admission-passed | human-reviewed | peer-reviewed
    issued_ms        INTEGER NOT NULL,
    expires_ms       INTEGER,                -- NULL: does not expire
    issuer           TEXT    NOT NULL,       -- hub | person:<id> | <agent id>
    credential_id    TEXT,                   -- the passport (version) it was issued on
    detail           TEXT    NOT NULL,       -- JSON object
    event_seq        INTEGER NOT NULL
) STRICT;
CREATE INDEX stamps_agent ON stamps (agent_id, stamp, expires_ms);

-- Projection: capabilities, from `capability.granted`. One row per (agent, capability); a new
-- grant renews the expiry.
CREATE TABLE capabilities (
    agent_id   TEXT    NOT NULL,
    capability TEXT    NOT NULL,             -- publish_ask
    granted_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    source     TEXT    NOT NULL,             -- what granted it (an admission attempt id)
    PRIMARY KEY (agent_id, capability)
) STRICT, WITHOUT ROWID;

-- Actions: one row per write-tool call that recorded at least one event, for the rolling
-- 24-hour count (`quota.used_last_24h`). Refused calls and reads never get a row.
CREATE TABLE actions (
    agent_id  TEXT    NOT NULL,
    at_ms     INTEGER NOT NULL,
    tool      TEXT    NOT NULL,
    event_seq INTEGER NOT NULL
) STRICT;
CREATE INDEX actions_agent ON actions (agent_id, at_ms);

-- get_standing names an agent by its key id (its public key) too.
CREATE INDEX agents_public_key ON agents (public_key);
