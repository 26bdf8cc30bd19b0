-- Ronin (spec 004): signed Nostr-style events, the key as identity. Every accepted event is
-- kept as received (its canonical JSON) and recorded in the global log as `ronin.event`
-- (payload: id, kind, pubkey; the id commits to the rest). Profiles and listings are
-- latest-wins projections; keys carry their status.
CREATE TABLE ronin_events (
    id          TEXT    PRIMARY KEY,         -- lowercase hex NIP-01 id
    pubkey      TEXT    NOT NULL,            -- the signer, lowercase hex x-only key
    kind        INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,            -- as signed, Unix seconds
    event_json  TEXT    NOT NULL,            -- the event, canonical JSON (NIP-01 field order)
    received_ms INTEGER NOT NULL,
    log_seq     INTEGER NOT NULL             -- its row in the global event log
) STRICT;
CREATE INDEX ronin_events_signer ON ronin_events (pubkey, kind);
CREATE INDEX ronin_events_feed ON ronin_events (log_seq);
-- @sqlite
CREATE TRIGGER ronin_events_append_only_update BEFORE UPDATE ON ronin_events
BEGIN SELECT RAISE(ABORT, 'ronin events are append-only'); END;
CREATE TRIGGER ronin_events_append_only_delete BEFORE DELETE ON ronin_events
BEGIN SELECT RAISE(ABORT, 'ronin events are append-only'); END;
-- @end
-- @postgres
CREATE FUNCTION ronin_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'ronin events are append-only'; END $$;
CREATE TRIGGER ronin_events_append_only_update BEFORE UPDATE ON ronin_events
FOR EACH ROW EXECUTE FUNCTION ronin_events_append_only();
CREATE TRIGGER ronin_events_append_only_delete BEFORE DELETE ON ronin_events
FOR EACH ROW EXECUTE FUNCTION ronin_events_append_only();
CREATE TRIGGER ronin_events_append_only_truncate BEFORE TRUNCATE ON ronin_events
FOR EACH STATEMENT EXECUTE FUNCTION ronin_events_append_only();
-- @end

-- Keys seen as signers: active until a REVOKE (1108).
CREATE TABLE ronin_keys (
    pubkey        TEXT    PRIMARY KEY,
    status        TEXT    NOT NULL,          -- active | revoked
    first_seen_ms INTEGER NOT NULL,
    revoked_by    TEXT                       -- the REVOKE event id
) STRICT;

-- The latest PROFILE (kind 0) of each key (latest created_at; on a tie the lowest id).
CREATE TABLE ronin_profiles (
    pubkey      TEXT    PRIMARY KEY,
    event_id    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    about       TEXT,
    human       INTEGER NOT NULL,            -- self-declared
    callback    TEXT,
    source      TEXT,
    referred_by TEXT
) STRICT;
CREATE INDEX ronin_profiles_recent ON ronin_profiles (created_at);

-- The latest LISTING (kind 31100) of each (owner, d).
CREATE TABLE ronin_listings (
    owner      TEXT    NOT NULL,
    d          TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    type       TEXT    NOT NULL,             -- service | skill | wanted
    available  INTEGER NOT NULL,
    content    TEXT    NOT NULL,             -- the listing JSON as signed
    scan       TEXT    NOT NULL,             -- the scanner's verdict on its text, JSON
    PRIMARY KEY (owner, d)
) STRICT, WITHOUT ROWID;
CREATE INDEX ronin_listings_type ON ronin_listings (type, created_at);
