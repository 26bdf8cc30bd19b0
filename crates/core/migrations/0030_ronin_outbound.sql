-- Ronin's pushes (spec 004 section 6 "Push instead", section 8 "Email"; docs/decisions.md
-- 360-367). Both are written in the writer transaction of the change they report, so a
-- refused write queues nothing.
--
-- ronin_callbacks: one signed POST of a change to a lineage's callback URL, queued with the
-- change and delivered by the background deliverer: three tries, then given up.
CREATE TABLE ronin_callbacks (
    seq        INTEGER NOT NULL,           -- the log position the change ends at (cursor c<seq>)
    pubkey     TEXT    NOT NULL,           -- the lineage's head key the payload was made for
    url        TEXT    NOT NULL,           -- the callback URL of the lineage's latest PROFILE
    body       TEXT    NOT NULL,           -- the exact bytes POSTed (the `me` payload)
    created_ms INTEGER NOT NULL,
    tries      INTEGER NOT NULL,           -- tries made so far (0 to 3)
    next_ms    INTEGER,                    -- when the next try is due; NULL: no more tries
    state      TEXT    NOT NULL,           -- pending | delivered | given_up
    last_error TEXT,                       -- why the last try failed (status or refusal)
    PRIMARY KEY (seq, pubkey)
) STRICT;
CREATE INDEX ronin_callbacks_due ON ronin_callbacks (state, next_ms);

-- ronin_notify: the address a key put on file with POST /api/v1/me/notify (never served).
CREATE TABLE ronin_notify (
    pubkey     TEXT    PRIMARY KEY,        -- the key that set it (the lineage's at that time)
    email      TEXT    NOT NULL,           -- normalized (kd_core::people::normalize_email)
    updated_ms INTEGER NOT NULL
) STRICT;
