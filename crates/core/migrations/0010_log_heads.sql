-- Signed daily log heads (spec "Signed log head"; kd-log-head-v1). One anchor per UTC day,
-- naming the latest event of the log when it was published, signed by kd-passport-1. A head
-- is an attestation about the log, not an event in it (appending one would move the head it
-- names); like the log, a head is never changed or removed once written.
CREATE TABLE log_heads (
    day          TEXT    PRIMARY KEY,        -- the UTC day, YYYY-MM-DD
    seq          INTEGER NOT NULL,           -- the latest event's seq when published
    row_hash     TEXT    NOT NULL,           -- that event's row_hash
    signed_text  TEXT    NOT NULL,           -- kd-log-head-v1, day, seq, row_hash joined by LF
    signature    TEXT    NOT NULL,           -- Ed25519 by key_id over signed_text, base64url
    key_id       TEXT    NOT NULL,           -- kd-passport-1
    published_ms INTEGER NOT NULL            -- Unix milliseconds, UTC
) STRICT, WITHOUT ROWID;
-- @sqlite
CREATE TRIGGER log_heads_append_only_update BEFORE UPDATE ON log_heads
BEGIN SELECT RAISE(ABORT, 'log heads are append-only'); END;
CREATE TRIGGER log_heads_append_only_delete BEFORE DELETE ON log_heads
BEGIN SELECT RAISE(ABORT, 'log heads are append-only'); END;
-- @end
-- @postgres
CREATE FUNCTION log_heads_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'log heads are append-only'; END $$;
CREATE TRIGGER log_heads_append_only_update BEFORE UPDATE ON log_heads
FOR EACH ROW EXECUTE FUNCTION log_heads_append_only();
CREATE TRIGGER log_heads_append_only_delete BEFORE DELETE ON log_heads
FOR EACH ROW EXECUTE FUNCTION log_heads_append_only();
CREATE TRIGGER log_heads_append_only_truncate BEFORE TRUNCATE ON log_heads
FOR EACH STATEMENT EXECUTE FUNCTION log_heads_append_only();
-- @end
