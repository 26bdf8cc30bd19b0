-- People, their sessions, connect codes and owner links (issue 4; spec "Connect with a code,
-- in detail", "Signing a write"). Passwords, session tokens and codes never reach the event log:
-- the log holds `person.signed_up`, `owner.link_requested`, ... without them.

-- Projection: people, from `person.signed_up`. The password hash lives only here.
CREATE TABLE people (
    person_id     TEXT    PRIMARY KEY,       -- kdh_ + 24 hex
    email         TEXT    NOT NULL UNIQUE,   -- trimmed, lowercased
    display_name  TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,          -- argon2id PHC string
    created_ms    INTEGER NOT NULL
) STRICT;

-- Sessions: working state. Only the SHA-256 of the token is kept.
CREATE TABLE sessions (
    token_sha256 TEXT    PRIMARY KEY,
    person_id    TEXT    NOT NULL,
    csrf         TEXT    NOT NULL,           -- the per-session form token
    created_ms   INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_person ON sessions (person_id);

-- Sign-in attempts, for the limits (per email and per address). Working state.
CREATE TABLE signin_attempts (
    limit_key TEXT    NOT NULL,              -- email:<email> | ip:<address>
    at_ms     INTEGER NOT NULL
) STRICT;
CREATE INDEX signin_attempts_key ON signin_attempts (limit_key, at_ms);

-- Connect codes minted on Connect your agent. Only the SHA-256 of the code is kept.
CREATE TABLE connect_codes (
    code_sha256 TEXT    PRIMARY KEY,
    person_id   TEXT    NOT NULL,
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER NOT NULL,
    used_ms     INTEGER
) STRICT;
CREATE INDEX connect_codes_person ON connect_codes (person_id, created_ms);

-- connect_with_code attempts per agent per clock hour (hour = floor(ms / 3,600,000)).
CREATE TABLE code_attempts (
    agent_id        TEXT    NOT NULL,
    hour            INTEGER NOT NULL,
    attempts        INTEGER NOT NULL,
    refusal_logged  INTEGER NOT NULL DEFAULT 0, -- the hour's first rate-limited try was logged
    PRIMARY KEY (agent_id, hour)
) STRICT, WITHOUT ROWID;

-- Projection: owner link requests, from owner.link_requested / owner.linked / owner.link_declined.
CREATE TABLE owner_requests (
    request_id TEXT    PRIMARY KEY,          -- kdl_ + 24 hex
    agent_id   TEXT    NOT NULL,
    person_id  TEXT    NOT NULL,
    via        TEXT    NOT NULL,             -- code | claim
    pitch      TEXT,                         -- request_claim's note: third-party text
    status     TEXT    NOT NULL,             -- pending | approved | declined
    created_ms INTEGER NOT NULL,
    decided_ms INTEGER
) STRICT;
CREATE INDEX owner_requests_person ON owner_requests (person_id, status);

-- Projection: what an owner granted a linked agent (owner.linked).
CREATE TABLE owner_grants (
    agent_id             TEXT    PRIMARY KEY,
    person_id            TEXT    NOT NULL,
    scopes               TEXT    NOT NULL,   -- JSON array
    spend_usd_per_day    INTEGER NOT NULL,
    spend_usd_per_action INTEGER NOT NULL,
    actions_per_day      INTEGER NOT NULL,
    granted_ms           INTEGER NOT NULL
) STRICT;

-- request_claim calls, for the limits (per agent, per address). Working state: the address is
-- kept here and in the outbox, never in the log.
CREATE TABLE claim_requests (
    claim_id   TEXT    PRIMARY KEY,          -- kdl_ + 24 hex (the owner request's id when filed)
    agent_id   TEXT    NOT NULL,
    email      TEXT    NOT NULL,
    created_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX claim_requests_agent ON claim_requests (agent_id, created_ms);
CREATE INDEX claim_requests_email ON claim_requests (email, created_ms);

-- Mail to people (DECISIONS 7): queued in the transaction that decides to send it; an SMTP
-- relay delivers it when one is configured, otherwise the operator reads it (karmadue outbox).
CREATE TABLE outbox (
    mail_id    TEXT    PRIMARY KEY,          -- kdm_ + 24 hex
    to_email   TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    body       TEXT    NOT NULL,             -- plain text
    created_ms INTEGER NOT NULL,
    sent_ms    INTEGER
) STRICT;
CREATE INDEX outbox_unsent ON outbox (created_ms) WHERE sent_ms IS NULL;

-- Projection: findings agents file for people (finding.filed, finding.adopted,
-- finding.approved, finding.dismissed, finding.withdrawn). title and why are third-party text.
CREATE TABLE findings (
    finding_id   TEXT    PRIMARY KEY,        -- kdf_ + 24 hex
    agent_id     TEXT    NOT NULL,
    kind         TEXT,                       -- job | skill | experience | resource | contributor | verification
    title        TEXT    NOT NULL,
    why          TEXT    NOT NULL,
    evidence_ref TEXT    NOT NULL,
    dedupe_key   TEXT,
    delivery     TEXT    NOT NULL,           -- owner | email | open
    status       TEXT    NOT NULL,           -- open | inbox | approved | dismissed | withdrawn
    person_id    TEXT,                       -- whose Inbox it is in
    claim_sha256 TEXT    UNIQUE,             -- SHA-256 of the claim code (email and open findings)
    created_ms   INTEGER NOT NULL,
    decided_ms   INTEGER
) STRICT;
CREATE INDEX findings_agent ON findings (agent_id, created_ms);
CREATE INDEX findings_person ON findings (person_id, status);
CREATE UNIQUE INDEX findings_dedupe ON findings (agent_id, dedupe_key)
    WHERE dedupe_key IS NOT NULL AND status <> 'withdrawn';

-- Paused by the owner (agent.paused / agent.resumed): its signed writes are refused.
ALTER TABLE agents ADD COLUMN paused_ms INTEGER;
