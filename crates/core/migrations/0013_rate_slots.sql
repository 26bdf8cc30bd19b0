-- Per-minute limits shared by every hub process on one PostgreSQL database (kd_core::limits):
-- the times of the calls admitted in the last minute, per bucket. A SQLite hub is one process
-- and counts in memory; the table exists there too, empty, so both schemas are one. Not facts:
-- never part of the log; on PostgreSQL unlogged (a crash forgets at most a minute of counts).
-- @sqlite
CREATE TABLE rate_slots (
    bucket TEXT    NOT NULL,                 -- e.g. ip:203.0.113.7:reads, key:<pubkey>
    at_ms  INTEGER NOT NULL                  -- when the call was admitted, Unix milliseconds
) STRICT;
-- @end
-- @postgres
CREATE UNLOGGED TABLE rate_slots (
    bucket TEXT    NOT NULL,
    at_ms  BIGINT  NOT NULL
);
-- @end
CREATE INDEX rate_slots_bucket ON rate_slots (bucket, at_ms);
