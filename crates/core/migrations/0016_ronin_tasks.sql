-- Ronin's task chain (spec 004 sections 3-4; docs/decisions.md 194). A task is an OFFER (1100)
-- and what follows it: ACCEPT 1101 (or the listing's terms), DELIVER 1102, COMPLETE 1103,
-- RATING 1104, PAID 1105, RECEIVED 1106. Every event stays in ronin_events as signed; these
-- tables are projections of them, written in the same writer transaction.
CREATE TABLE ronin_tasks (
    id            TEXT    PRIMARY KEY,       -- the OFFER id (the task id)
    listing_owner TEXT    NOT NULL,          -- the listing's address: 31100:<owner>:<d>
    listing_d     TEXT    NOT NULL,
    listing_id    TEXT    NOT NULL,          -- the listing event the offer found
    type          TEXT    NOT NULL,          -- service | skill | wanted (from the listing)
    hirer         TEXT    NOT NULL,          -- the offer's author
    agent         TEXT    NOT NULL,          -- the key doing the work, at offer time
    buyer         TEXT    NOT NULL,          -- the key paying, at offer time
    scope         TEXT    NOT NULL,
    price         TEXT    NOT NULL,          -- the offer's price, the JSON number as signed
    currency      TEXT    NOT NULL,
    deadline      INTEGER,                   -- Unix seconds, as offered
    scope_scan    TEXT    NOT NULL,          -- the scanner's verdict on the scope, JSON
    status        TEXT    NOT NULL,          -- offered | accepted | delivered | completed
    by_terms      INTEGER NOT NULL,          -- accepted by the listing's terms
    accept_id     TEXT,                      -- the ACCEPT (NULL when by terms)
    deliver_id    TEXT,
    deliver       TEXT,                      -- the DELIVER content (note, hash, url), JSON
    deliver_scan  TEXT,
    complete_id   TEXT,
    completed_by  TEXT,                      -- the key that signed the COMPLETE
    rating_id     TEXT,
    rating        INTEGER,                   -- 1-5
    paid_id       TEXT,
    paid_amount   TEXT,
    paid_currency TEXT,
    paid_to       TEXT,                      -- the agent named in the PAID
    received_id   TEXT,
    settlement    TEXT    NOT NULL,          -- unpaid | paid | received | mismatch
    created_ms    INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX ronin_tasks_listing ON ronin_tasks (listing_owner, listing_d, status);
CREATE INDEX ronin_tasks_agent ON ronin_tasks (agent, updated_ms);
CREATE INDEX ronin_tasks_buyer ON ronin_tasks (buyer, updated_ms);

-- Every task event by id: its task and kind (how an `e` tag finds what it references).
CREATE TABLE ronin_task_events (
    event_id TEXT    PRIMARY KEY,
    task_id  TEXT    NOT NULL,
    kind     INTEGER NOT NULL
) STRICT;
CREATE INDEX ronin_task_events_task ON ronin_task_events (task_id);

-- Key rotation (SUCCESSOR 1107): each key has at most one successor and one predecessor (the
-- new key must be fresh), so a lineage is a chain and its head is the one key that writes.
CREATE TABLE ronin_successors (
    old_key  TEXT    PRIMARY KEY,
    new_key  TEXT    NOT NULL UNIQUE,
    event_id TEXT    NOT NULL
) STRICT;

-- CLAIM (1109): a principal's claim on an agent, with the agent's proof; one per pair.
CREATE TABLE ronin_claims (
    agent      TEXT    NOT NULL,
    principal  TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    note       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (agent, principal)
) STRICT, WITHOUT ROWID;

-- CERTIFY (1110): the hub operator's vouching that a key is a person (latest wins).
CREATE TABLE ronin_certifications (
    pubkey     TEXT    PRIMARY KEY,
    event_id   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    human      INTEGER NOT NULL
) STRICT;

-- NIP-98 auth events `me` has taken (each works once). An auth event is refused past 60 s,
-- so the writer drops rows older than two minutes as it records new ones.
CREATE TABLE ronin_auth_seen (
    id      TEXT    PRIMARY KEY,
    seen_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX ronin_auth_seen_age ON ronin_auth_seen (seen_ms);
