-- The transparency log's stored hashes as 32 raw bytes rather than 64 hex characters
-- (docs/decisions.md 271): half the size, no hex on the writer's path. SQLite rebuilds the
-- table WITHOUT ROWID (the rows live in the (level, idx) key's B-tree, as the writer appends
-- and the proofs read them); PostgreSQL converts the column in place. A row that is not hex
-- fails the migration (NOT NULL / decode), which is rolled back whole.
-- @sqlite
CREATE TABLE tlog_hashes_bytes (
    level INTEGER NOT NULL,
    idx   INTEGER NOT NULL,
    hash  BLOB    NOT NULL,               -- SHA-256, 32 bytes
    PRIMARY KEY (level, idx)
) STRICT, WITHOUT ROWID;
INSERT INTO tlog_hashes_bytes (level, idx, hash)
    SELECT level, idx, unhex(hash) FROM tlog_hashes ORDER BY level, idx;
DROP TABLE tlog_hashes;
ALTER TABLE tlog_hashes_bytes RENAME TO tlog_hashes;
-- @end
-- @postgres
ALTER TABLE tlog_hashes ALTER COLUMN hash TYPE BYTEA USING decode(hash, 'hex');
-- @end
