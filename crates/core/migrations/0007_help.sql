-- Watchlists and verification help (issue 4; permissions document "What your passport
-- unlocks", "Verification help"; docs/decisions.md "Watchlists and verification help").

-- Projection: an agent's saved watchlist, from `watchlist.set` (set_watchlist replaces it).
-- `seen_*` is what the daily check last saw of the record (working state, compared on the next
-- check); the changes it finds are the `watchlist.alerted` events.
CREATE TABLE watchlist_items (
    agent_id     TEXT    NOT NULL,
    position     INTEGER NOT NULL,          -- 0-based index in the list as given
    target       TEXT    NOT NULL,          -- the target as given (trimmed), up to 2,048 chars
    resource_id  TEXT,                      -- the record it resolved to; NULL: not (yet) listed
    seen_archived INTEGER,                  -- 0 | 1, NULL while unresolved
    seen_risky   INTEGER,
    seen_version TEXT,
    seen_released_ms INTEGER,
    seen_broke   INTEGER,                   -- broke reports (report_outcome) on the record, all time
    seen_reports INTEGER,                   -- all reports on the record, all time
    PRIMARY KEY (agent_id, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX watchlist_items_resource ON watchlist_items (resource_id);

-- One row per agent with a saved watchlist (even an empty one): when it was set and the last
-- UTC day (floor(ms / 86,400,000)) the daily job checked it, so a second run the same day
-- sends nothing twice.
CREATE TABLE watchlists (
    agent_id         TEXT    PRIMARY KEY,
    items            INTEGER NOT NULL,
    set_ms           INTEGER NOT NULL,
    last_checked_day INTEGER                -- NULL: not checked since it was first set
) STRICT;
CREATE INDEX watchlists_due ON watchlists (last_checked_day);

-- Projection: verification asks (post_verification_ask, accept_verification_ask,
-- submit_verification, resolve_verification). criteria, reward_note and note are third-party
-- text (lifted out of answers). The verifier record of a reviewer is counted from this table.
CREATE TABLE verification_asks (
    ask_id            TEXT    PRIMARY KEY,  -- kdva_ + 24 hex
    requester_id      TEXT    NOT NULL,     -- the asking agent
    subject_id        TEXT    NOT NULL,     -- the agent whose passport is to be checked
    credential_id     TEXT    NOT NULL,     -- the exact passport version (kdp_...)
    stamp             TEXT    NOT NULL,     -- human-reviewed | peer-reviewed
    criteria          TEXT    NOT NULL,
    reward_note       TEXT,
    deadline_ms       INTEGER NOT NULL,
    status            TEXT    NOT NULL,     -- open | accepted | submitted | resolved | closed
    reviewer          TEXT,                 -- agent id, or person:<id>; while accepted/submitted/resolved
    accepted_ms       INTEGER,
    accept_until_ms   INTEGER,              -- accepted_ms + 72 h (never past the deadline)
    result            TEXT,                 -- met | unmet
    evidence_ref      TEXT,
    note              TEXT,
    submitted_ms      INTEGER,
    resolution        TEXT,                 -- stamped | refused | disputed (closed)
    resolved_ms       INTEGER,
    stamp_id          TEXT,                 -- the stamp issued (resolution stamped)
    created_ms        INTEGER NOT NULL,
    updated_ms        INTEGER NOT NULL
) STRICT;
CREATE INDEX verification_asks_status ON verification_asks (status, deadline_ms);
CREATE INDEX verification_asks_requester ON verification_asks (requester_id, status);
CREATE INDEX verification_asks_reviewer ON verification_asks (reviewer, resolution);

-- Disputes a reviewer received (the ask itself reopens or closes, so its row no longer names
-- them): counted in the verifier record; a disputed reviewer cannot take the same ask again.
CREATE TABLE verification_disputes (
    ask_id      TEXT    NOT NULL,
    reviewer    TEXT    NOT NULL,
    disputed_ms INTEGER NOT NULL,
    event_seq   INTEGER NOT NULL,
    PRIMARY KEY (ask_id, reviewer, disputed_ms)
) STRICT, WITHOUT ROWID;
CREATE INDEX verification_disputes_reviewer ON verification_disputes (reviewer);
