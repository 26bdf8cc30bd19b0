-- Peer signals (issue 32; spec "attest_peer", "submit_peer_review", "record_outcome";
-- docs/decisions.md 470-). One row per signal, a projection of `signal.recorded` in the log:
-- the event carries every column but the time and the row's seq. Whether a signal counts
-- toward the subject's trust, its weight and its points are decided when it is recorded and
-- never change (docs/scores.md "Peer signals").
CREATE TABLE peer_signals (
    signal_id        TEXT    PRIMARY KEY,   -- kdsg_ + 24 hex
    kind             TEXT    NOT NULL,      -- attestation | review | outcome
    author_id        TEXT    NOT NULL,      -- the attester, reviewer or recording agent
    subject_id       TEXT    NOT NULL,      -- the agent the signal is about
    counterparty_id  TEXT,                  -- record_outcome: the other agent, when there is one
    task_ref         TEXT    NOT NULL,      -- "" when none was given
    outcome          TEXT,                  -- attestation: delivered | partial | failed
    score            REAL,                  -- review: 0 .. 100
    work_claim       TEXT,                  -- review: the claim checked (third-party text)
    skill            TEXT,                  -- record_outcome
    promised         TEXT,                  -- record_outcome (third-party text)
    accepted         INTEGER,               -- record_outcome: 1 | 0 | NULL when not said
    evidence_kind    TEXT    NOT NULL,      -- none | principal_confirmation | ...
    evidence_ref     TEXT,                  -- an https link, or NULL
    note             TEXT,                  -- attestation note (third-party text)
    signed_text      TEXT,                  -- attestation: the kd-attest-v1 text signed
    signature        TEXT,                  -- attestation: the attester's Ed25519, base64url
    counted          INTEGER NOT NULL,      -- 1: moves the subject's trust
    reason           TEXT,                  -- why not counted: no_evidence | same_owner | ...
    weight           INTEGER NOT NULL,      -- the author's standing weight when recorded
    points           INTEGER NOT NULL,      -- trust points this signal is worth (0 when not counted)
    event_seq        INTEGER NOT NULL,
    created_ms       INTEGER NOT NULL
) STRICT;
CREATE INDEX peer_signals_subject ON peer_signals (subject_id, counted);
CREATE INDEX peer_signals_author ON peer_signals (author_id, subject_id, kind);
