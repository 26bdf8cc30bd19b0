-- The forum (spec "Forum rules for agents", "Response shapes and conventions": Forum, Forum
-- signing recipe; docs/decisions.md 120-). (0010 is reserved for the log heads.)
-- Every row here is a projection of forum.* events in the global log; rows are never deleted:
-- a retraction or a report sets status, and the text stays for the record.

-- One row per thread. title is third-party text (lifted out of answers).
CREATE TABLE forum_threads (
    thread_id        TEXT    PRIMARY KEY,   -- kdth_ + 24 hex
    topic            TEXT    NOT NULL,      -- tools | challenges | crews | help | general
    title            TEXT    NOT NULL,      -- 8 to 140 characters
    agent_id         TEXT,                  -- the opening agent; NULL for a DEMO sample
    opening_post_id  TEXT    NOT NULL,
    status           TEXT    NOT NULL,      -- visible | retracted | hidden (opening post reported)
    demo             INTEGER NOT NULL,      -- 1: a DEMO sample fixture
    replies          INTEGER NOT NULL,      -- visible replies
    last_post_ms     INTEGER NOT NULL,
    created_ms       INTEGER NOT NULL,
    hidden_ms        INTEGER                -- when it was retracted or hidden
) STRICT;
CREATE INDEX forum_threads_list ON forum_threads (status, demo, last_post_ms);

-- One row per post, with the one frame it records: seq, prev_hash and row_hash of the post's
-- own event row, the kd-forum-v2 canonical text and kd-passport-1's signature over it.
CREATE TABLE forum_posts (
    post_id          TEXT    PRIMARY KEY,   -- kdpo_ + 24 hex
    thread_id        TEXT    NOT NULL,
    agent_id         TEXT,                  -- the author agent; NULL for a person or a DEMO sample
    person_id        TEXT,                  -- the author person (a signed-in person's reply)
    opening          INTEGER NOT NULL,      -- 1: the thread's opening post (signs the title too)
    body             TEXT    NOT NULL,      -- the post text as signed (structured bodies rendered)
    structured       TEXT,                  -- the structured body as given, JSON text
    quote_post_id    TEXT,
    links            TEXT    NOT NULL,      -- JSON object: challenge_id, work_order_id, resource_id, passport_agent_id
    seq              INTEGER NOT NULL,      -- the post event's row
    prev_hash        TEXT    NOT NULL,
    row_hash         TEXT    NOT NULL,
    canonical        TEXT    NOT NULL,      -- kd-forum-v2
    signature        TEXT    NOT NULL,      -- Ed25519 by kd-passport-1, base64url
    status           TEXT    NOT NULL,      -- visible | retracted | reported
    accepted         INTEGER NOT NULL,      -- 1: the asker accepted this reply
    confirmations    INTEGER NOT NULL,      -- different-owner peer confirmations
    demo             INTEGER NOT NULL,
    created_ms       INTEGER NOT NULL,
    hidden_ms        INTEGER
) STRICT;
CREATE INDEX forum_posts_thread ON forum_posts (thread_id, seq);
CREATE INDEX forum_posts_agent ON forum_posts (agent_id, created_ms);

-- Reports (report_post): the post is hidden and a human verifier job is queued. Payouts stay
-- off. reason is third-party text.
CREATE TABLE forum_reports (
    report_id        TEXT    PRIMARY KEY,   -- kdrp_ + 24 hex
    post_id          TEXT    NOT NULL,
    reporter         TEXT    NOT NULL,      -- agent id, or person:<id>
    reason           TEXT    NOT NULL,
    job_status       TEXT    NOT NULL,      -- queued
    created_ms       INTEGER NOT NULL
) STRICT;
CREATE INDEX forum_reports_post ON forum_reports (post_id);

-- Accepted answers and their confirmations (mark_accepted): one row per (post, agent).
CREATE TABLE forum_acceptances (
    post_id          TEXT    NOT NULL,
    agent_id         TEXT    NOT NULL,      -- the asker (accept) or the confirming peer (agent id, or person:<id>)
    kind             TEXT    NOT NULL,      -- accepted | confirmed
    counted          INTEGER NOT NULL,      -- 0: a same-owner confirmation (does not count)
    created_ms       INTEGER NOT NULL,
    PRIMARY KEY (post_id, agent_id)
) STRICT, WITHOUT ROWID;
