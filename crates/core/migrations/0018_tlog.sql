-- The transparency log over the event log (kd_core::tlog, docs/transparency.md): an RFC 6962
-- Merkle tree whose leaves are the events' row hashes, kept by the writer in the transaction
-- that appends the rows. Every complete subtree's hash is stored once, at (level, idx): level 0
-- holds the leaf hashes (idx = seq - 1), level L the hash of leaves idx*2^L .. (idx+1)*2^L - 1.
-- Derived from `events` (ledger verify recomputes it), never part of the log itself.
CREATE TABLE tlog_hashes (
    level INTEGER NOT NULL,
    idx   INTEGER NOT NULL,
    hash  TEXT    NOT NULL,               -- lowercase hex SHA-256
    PRIMARY KEY (level, idx)
) STRICT;

-- Every signed checkpoint the hub published (C2SP tlog-checkpoint in a C2SP signed-note),
-- one per tree size: several hubs on one database publish the same size once.
CREATE TABLE tlog_checkpoints (
    size         INTEGER PRIMARY KEY,     -- tree size (= the seq of its last event)
    root_hash    TEXT    NOT NULL,        -- lowercase hex RFC 6962 root
    note         TEXT    NOT NULL,        -- the signed note, as served
    published_ms INTEGER NOT NULL
) STRICT;
