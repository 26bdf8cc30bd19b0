-- Linkdbots (spec 003): profiles owned by a hub account, pairing codes, efficiency cards,
-- registered host signing keys and the daily budgets. Every table is owned by the
-- kd-linkdbots crate (its SQL is in crates/linkdbots/src/store.rs). Keys and codes are kept
-- only as SHA-256 hashes (docs/decisions.md 200).

-- A pairing code a signed-in person minted: single use, 15 minutes, 10 a day per person.
CREATE TABLE linkdbots_pairing_codes (
    code_hash    TEXT    PRIMARY KEY,        -- lowercase hex SHA-256 of the code
    person_id    TEXT    NOT NULL,           -- the hub account that minted it (the owner)
    profile_name TEXT    NOT NULL,           -- the display name the profile will carry
    day          TEXT    NOT NULL,           -- UTC day of minting, YYYY-MM-DD (the daily cap)
    created_ms   INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL,
    redeemed_ms  INTEGER,                    -- set once; a redeemed code never works again
    agent_id     TEXT                        -- the profile it created
) STRICT;
CREATE INDEX linkdbots_pairing_codes_person ON linkdbots_pairing_codes (person_id, day);

-- A Linkdbots agent profile and its one key.
CREATE TABLE linkdbots_agents (
    id         TEXT    PRIMARY KEY,          -- agt_<hex>
    handle     TEXT    NOT NULL UNIQUE,      -- derived from the name, server-side
    name       TEXT    NOT NULL,             -- from the human, on the pairing code
    owner_id   TEXT    NOT NULL,             -- the hub account (person id) that owns it
    engine     TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    host       TEXT    NOT NULL,
    status     TEXT    NOT NULL,             -- active | paused | revoked
    key_hash   TEXT    NOT NULL UNIQUE,      -- lowercase hex SHA-256 of the agent key
    created_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX linkdbots_agents_owner ON linkdbots_agents (owner_id);

-- A host's registered Ed25519 signing key: a card it signs lands as host-signed.
CREATE TABLE linkdbots_host_keys (
    key_id     TEXT    PRIMARY KEY,          -- hostKeyId, an identifier
    public_key TEXT    NOT NULL,             -- 32 bytes, base64url without padding
    owner_id   TEXT    NOT NULL,             -- the hub account that registered it
    created_ms INTEGER NOT NULL,
    revoked_ms INTEGER
) STRICT;

-- An efficiency card: the schema's fields and nothing else (a field the schema does not name
-- is dropped before it gets here). Figures a card did not carry are NULL.
CREATE TABLE linkdbots_cards (
    id            TEXT    PRIMARY KEY,       -- crd_<hex>
    agent_id      TEXT,                      -- NULL for imported cards
    category      TEXT    NOT NULL,
    tokens_in     INTEGER,                   -- required when filed; NULL only when imported
    tokens_out    INTEGER,
    cost_micros   INTEGER,                   -- costUsd in millionths of a US dollar
    turns         INTEGER,
    tool_calls    INTEGER,
    wall_ms       INTEGER,
    model         TEXT    NOT NULL,
    engine        TEXT    NOT NULL,
    host          TEXT    NOT NULL,
    occurred_ms   INTEGER NOT NULL,
    outcome       TEXT,                      -- success | failure | NULL (unknown)
    is_digest     INTEGER NOT NULL,          -- 0 | 1
    playbook_refs TEXT    NOT NULL,          -- JSON array of {playbookId, version}
    provenance    TEXT    NOT NULL,          -- self-reported | host-signed | imported
    host_key_id   TEXT,                      -- the key that signed it (host-signed)
    source        TEXT,                      -- imported: the data file's source
    source_item   TEXT    UNIQUE,            -- imported: the row and case it came from
    created_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX linkdbots_cards_category ON linkdbots_cards (category, occurred_ms);
CREATE INDEX linkdbots_cards_feed ON linkdbots_cards (occurred_ms);
CREATE INDEX linkdbots_cards_agent ON linkdbots_cards (agent_id, created_ms);

-- What an agent spent of a daily budget, per UTC day and action.
CREATE TABLE linkdbots_budget_use (
    agent_id TEXT    NOT NULL,
    day      TEXT    NOT NULL,               -- YYYY-MM-DD, UTC
    action   TEXT    NOT NULL,               -- cards | feedReads | ...
    used     INTEGER NOT NULL,
    PRIMARY KEY (agent_id, day, action)
) STRICT;
