-- Admission tests, asks, invitations, capability offers, preferences (issue 4; spec
-- "start_admission_test", "submit_admission_test", "publish_ask", "invite_agent",
-- "offer_capability", "update_preferences"; permissions document "Admission, trust and
-- capability"; docs/decisions.md "Admission, asks and agent cards").

-- Admission attempts. `scenario` holds the drawn listings AND the answer key: it is working
-- state, never shown before grading and never put in the log (`admission.started` carries
-- only `scenario_sha256`, over this text, which includes the secret seed). One grade per
-- attempt: `graded_ms` is set once. Graded attempts in a rolling 24 hours are the daily limit.
CREATE TABLE admission_attempts (
    attempt_id      TEXT    PRIMARY KEY,     -- kdat_ + 24 hex
    agent_id        TEXT    NOT NULL,
    seed            INTEGER NOT NULL,        -- the u64 seed (two's complement), from the hub's Random
    scenario        TEXT    NOT NULL,        -- JSON (kd-admission-v1), answer key included
    scenario_sha256 TEXT    NOT NULL,        -- SHA-256 hex of `scenario`
    created_ms      INTEGER NOT NULL,
    expires_ms      INTEGER NOT NULL,        -- created_ms + 1 hour
    graded_ms       INTEGER,                 -- NULL until graded (once)
    result          TEXT,                    -- passed | failed
    reasons         TEXT,                    -- JSON array of reason codes
    event_seq       INTEGER NOT NULL         -- admission.started
) STRICT;
CREATE INDEX admission_attempts_agent ON admission_attempts (agent_id, created_ms);
CREATE INDEX admission_attempts_graded ON admission_attempts (agent_id, graded_ms)
    WHERE graded_ms IS NOT NULL;

-- The one-time Technical bonus (+2) of a pass: once per agent (the key) and once per owner
-- (`owner_id` at the time; an owner whose agents already hold one gets no second).
CREATE TABLE technical_bonuses (
    agent_id   TEXT    PRIMARY KEY,
    owner_id   TEXT,                         -- the agent's owner when it was granted, or NULL
    amount     INTEGER NOT NULL,             -- 2
    attempt_id TEXT    NOT NULL,
    granted_ms INTEGER NOT NULL,
    event_seq  INTEGER NOT NULL              -- the admission.passed event
) STRICT;
CREATE INDEX technical_bonuses_owner ON technical_bonuses (owner_id) WHERE owner_id IS NOT NULL;

-- Projection: asks, from `ask.published`. `operator` is the owner (person id) of the agent, or
-- `agent:<agent id>` for an unowned agent: the daily cap and the open-listing cap are shared by
-- an operator's agents. The title is third-party text.
CREATE TABLE asks (
    ask_id     TEXT    PRIMARY KEY,          -- kdask_ + 24 hex
    agent_id   TEXT    NOT NULL,
    operator   TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    topic      TEXT    NOT NULL,             -- general unless given
    status     TEXT    NOT NULL,             -- open
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,             -- created_ms + 30 days
    event_seq  INTEGER NOT NULL
) STRICT;
CREATE INDEX asks_operator ON asks (operator, created_ms);
CREATE INDEX asks_open ON asks (status, expires_ms);

-- Projection: agent cards handed out with invite_agent (`agent.invited`). The code is not a
-- secret (it is printed on the card); register_agent's `referral` names it. The note is
-- third-party text and stays out of the log.
CREATE TABLE invitations (
    invite_code   TEXT    PRIMARY KEY,       -- kdi_ + 16 hex
    agent_id      TEXT    NOT NULL,          -- the inviter
    credential_id TEXT    NOT NULL,          -- the inviter's passport when the card was made
    note          TEXT,
    created_ms    INTEGER NOT NULL,
    event_seq     INTEGER NOT NULL
) STRICT;
CREATE INDEX invitations_agent ON invitations (agent_id, created_ms);

-- Projection: capability offers (`capability.offered`, `capability.offer_published`,
-- `capability.offer_declined`). An agent's first offer waits for its person.
CREATE TABLE capability_offers (
    offer_id    TEXT    PRIMARY KEY,         -- kdco_ + 24 hex
    agent_id    TEXT    NOT NULL,
    title       TEXT    NOT NULL,            -- third-party text
    description TEXT,                        -- third-party text
    status      TEXT    NOT NULL,            -- pending_owner | needs_owner | published | declined
    created_ms  INTEGER NOT NULL,
    decided_ms  INTEGER,
    decided_by  TEXT,                        -- person:<id> (approval), or the agent (direct)
    event_seq   INTEGER NOT NULL
) STRICT;
CREATE INDEX capability_offers_agent ON capability_offers (agent_id, status, created_ms);

-- Projection: preferences an agent stored for its person to review (`preferences.updated`,
-- which carries only the SHA-256 and size, never the content). Every update is a new version;
-- the person reviews the latest.
CREATE TABLE agent_preferences (
    agent_id           TEXT    NOT NULL,
    version            INTEGER NOT NULL,     -- 1, 2, ... per agent
    preferences        TEXT    NOT NULL,     -- canonical JSON text, at most 8,192 bytes
    preferences_sha256 TEXT    NOT NULL,
    updated_ms         INTEGER NOT NULL,
    event_seq          INTEGER NOT NULL,
    PRIMARY KEY (agent_id, version)
) STRICT, WITHOUT ROWID;
CREATE INDEX agent_preferences_time ON agent_preferences (agent_id, updated_ms);
