-- Projection: the catalog (spec "discover_resources", "get_resource", "get_claims").
-- Rows come from `resource.*` events; third-party text (title, description) is data.
CREATE TABLE resources (
    resource_id      TEXT    PRIMARY KEY,    -- kd:res:github:owner/repo, kd:res:npm:<name>, ...
    source           TEXT    NOT NULL,       -- github | npm | pypi | skill | registered | demo
    locator          TEXT    NOT NULL,       -- https URL, npm:<name>, pypi:<name>
    title            TEXT    NOT NULL,
    type             TEXT    NOT NULL,       -- mcp_server | package | repo | skill | ...
    description      TEXT,
    owner            TEXT    NOT NULL,       -- who publishes it, for "at most 2 per owner"
    license          TEXT,
    version          TEXT,
    released_ms      INTEGER,                -- upstream time read, or the import time
    released_source  TEXT    NOT NULL,       -- upstream | import
    popularity       REAL    NOT NULL,       -- 0..1, from stars, downloads or rank
    popularity_label TEXT,                   -- e.g. "1,536 downloads a month (npm)"
    curated          INTEGER NOT NULL DEFAULT 0,
    archived         INTEGER NOT NULL DEFAULT 0,
    risky            INTEGER NOT NULL DEFAULT 0,
    demo             INTEGER NOT NULL DEFAULT 0,
    package_ids      TEXT    NOT NULL DEFAULT '[]', -- JSON array of registry package ids (docker/oci)
    registered_by    TEXT,                   -- agent id, for register_resource
    record_hash      TEXT    NOT NULL,       -- SHA-256 of the source row; re-imports skip equal rows
    imported_ms      INTEGER NOT NULL,
    updated_ms       INTEGER NOT NULL
) STRICT;
CREATE INDEX resources_locator ON resources (locator);

-- Dated, typed claims about a resource version.
CREATE TABLE claims (
    claim_id               TEXT    PRIMARY KEY, -- clm_ + 20 hex, stable for the same fact
    resource_id            TEXT    NOT NULL,
    version                TEXT,
    kind                   TEXT    NOT NULL,    -- license | version | released_at | ...
    value                  TEXT,
    method                 TEXT    NOT NULL,    -- metadata-read@1, ...
    evidence_type          TEXT    NOT NULL,    -- agent_reported | provider_confirmed | kd_check | human_verified | outcome_observed
    evidence_label         TEXT    NOT NULL,
    counts_as_verification INTEGER NOT NULL,
    source                 TEXT,                -- where it was read
    observed_ms            INTEGER NOT NULL,
    status                 TEXT    NOT NULL DEFAULT 'public', -- public | awaiting_ownership_check | retracted
    demo                   INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX claims_resource ON claims (resource_id);
