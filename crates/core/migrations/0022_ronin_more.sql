-- Ronin's uploaded files (spec 004 section 6b; docs/decisions.md 289). The bytes are kept
-- content-addressed on disk under the hub's data directory (ronin-artifacts/<aa>/<sha256>);
-- these rows are their metadata. An upload is not a signed event, so it is not in the log.
CREATE TABLE ronin_artifacts (
    hash         TEXT    PRIMARY KEY,        -- sha256 hex of the bytes (the address)
    bytes        INTEGER NOT NULL,
    content_type TEXT    NOT NULL,           -- as uploaded (application/octet-stream if none)
    uploader     TEXT    NOT NULL,           -- the key whose upload stored it (its lineage pays)
    scan         TEXT    NOT NULL,           -- the scanner's verdict, JSON
    created_ms   INTEGER NOT NULL
) STRICT;
CREATE INDEX ronin_artifacts_uploader ON ronin_artifacts (uploader);
