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
-- One call's charges in one round trip (kd_core::limits): `keys` joined by LF, `limits` and
-- `costs` comma-separated in the same order. Locks the buckets in key order, counts each
-- bucket's live slots, and either returns the first full charge (0-based) with the
-- milliseconds until it has room, or takes every charge and returns no row.
CREATE FUNCTION kd_rate_take(keys TEXT, limits TEXT, costs TEXT, now_ms BIGINT, window_ms BIGINT)
RETURNS TABLE (refused INTEGER, retry_after_ms BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    k TEXT[] := string_to_array(keys, E'\n');
    l BIGINT[] := CAST(string_to_array(limits, ',') AS BIGINT[]);
    c BIGINT[] := CAST(string_to_array(costs, ',') AS BIGINT[]);
    since BIGINT := now_ms - window_ms;
    bucket_key TEXT;
    live BIGINT;
    over BIGINT;
    oldest BIGINT;
BEGIN
    -- Counts are not facts: their commit need not wait for the WAL to reach the disk.
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR bucket_key IN SELECT DISTINCT unnest(k) ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(bucket_key, 0));
    END LOOP;
    FOR i IN 1 .. COALESCE(array_length(k, 1), 0) LOOP
        SELECT COUNT(*) INTO live FROM rate_slots r WHERE r.bucket = k[i] AND r.at_ms > since;
        over := live + c[i] - l[i];
        IF over > 0 THEN
            SELECT r.at_ms INTO oldest FROM rate_slots r WHERE r.bucket = k[i] AND r.at_ms > since
                ORDER BY r.at_ms LIMIT 1 OFFSET over - 1;
            refused := i - 1;
            retry_after_ms := GREATEST(COALESCE(oldest, now_ms) + window_ms - now_ms, 1);
            RETURN NEXT;
            RETURN;
        END IF;
    END LOOP;
    FOR i IN 1 .. COALESCE(array_length(k, 1), 0) LOOP
        DELETE FROM rate_slots r WHERE r.bucket = k[i] AND r.at_ms <= since;
        INSERT INTO rate_slots (bucket, at_ms) SELECT k[i], now_ms FROM generate_series(1, c[i]);
    END LOOP;
    RETURN;
END $$;
-- @end
CREATE INDEX rate_slots_bucket ON rate_slots (bucket, at_ms);
