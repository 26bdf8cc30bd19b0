-- One-time jobs of a hub's life, marked when they are done (docs/decisions.md 170): today the
-- first import of the bundled catalog (`bundled_catalog`). A hub killed before the mark finds
-- the job unfinished at its next start and resumes it. Working state, not facts: never part
-- of the log.
CREATE TABLE milestones (
    name    TEXT    PRIMARY KEY,             -- bundled_catalog
    done_ms INTEGER NOT NULL,                -- when it was marked, Unix milliseconds
    detail  TEXT    NOT NULL                 -- how: loaded | resumed | found complete
) STRICT;

-- The writer prunes expired nonces and registration challenges a few rows at a time, oldest
-- first (docs/decisions.md 172): these indexes find them without a scan.
CREATE INDEX nonces_seen ON nonces (seen_ms);
CREATE INDEX challenges_expires ON challenges (expires_ms);

-- A delivered mail keeps no body (docs/decisions.md 171): a finding's mail holds its claim
-- link, which works until it is used. Mail delivered before this version loses it now.
UPDATE outbox SET body = '(removed after delivery)' WHERE sent_ms IS NOT NULL;
