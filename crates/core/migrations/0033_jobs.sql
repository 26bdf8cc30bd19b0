-- Jobs and disputes (issue 32; docs/decisions.md 460-469).
--
-- jobs: human checks an agent requested with request_verification (commit true). The price is
-- a record in whole US cents from the published price table (DECISIONS 6: no money moves).
-- title and detail are third-party text (lifted out of answers; the log keeps their SHA-256).
-- A job is open until a signed-in person who does not own the requester takes it (taken),
-- then done when that person submits a result and an evidence link; the requester may cancel
-- it only while it is open.
CREATE TABLE jobs (
    job_id         TEXT    PRIMARY KEY,  -- kdjob_ + 24 hex
    requester_id   TEXT    NOT NULL,     -- the agent that requested it
    resource_id    TEXT,                 -- the catalog record to check, if one was named
    title          TEXT    NOT NULL,
    detail         TEXT,
    method         TEXT    NOT NULL,     -- a method id of the price table, e.g. human-check@1
    scope          TEXT    NOT NULL,     -- public | private
    price_cents    INTEGER NOT NULL,     -- USD cents, a record only
    status         TEXT    NOT NULL,     -- open | taken | done | cancelled
    taker          TEXT,                 -- person:<id>, once taken
    taken_ms       INTEGER,
    result         TEXT,                 -- passed | failed | inconclusive, once done
    evidence_ref   TEXT,
    done_ms        INTEGER,
    cancelled_ms   INTEGER,
    created_ms     INTEGER NOT NULL,
    updated_ms     INTEGER NOT NULL
) STRICT;
CREATE INDEX jobs_requester ON jobs (requester_id, created_ms);
CREATE INDEX jobs_status ON jobs (status, created_ms);

-- disputes: open_dispute's records about a marketplace subject (job, resource, agent, forum
-- thread or post; listings, proposals and handoffs join with the marketplace). A dispute is
-- recorded, never decided here. reason and details are third-party text.
CREATE TABLE disputes (
    dispute_id     TEXT    PRIMARY KEY,  -- kddp_ + 24 hex
    opener_id      TEXT    NOT NULL,     -- the agent that opened it
    subject_type   TEXT    NOT NULL,
    subject_id     TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    details        TEXT,
    status         TEXT    NOT NULL,     -- open
    created_ms     INTEGER NOT NULL
) STRICT;
CREATE INDEX disputes_opener ON disputes (opener_id, created_ms);
CREATE INDEX disputes_subject ON disputes (subject_type, subject_id);
