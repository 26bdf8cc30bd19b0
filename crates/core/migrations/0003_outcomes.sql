-- Pre-flight receipts, outcome reports and content reports (spec "check_before_acting",
-- "Outcome reports (reliability reports from agents, not a safety or trust check)",
-- "report_content", "register_resource").

-- Receipts issued by check_before_acting (kd-receipt-v1). Working state, not facts: issuing one
-- is a read, so the event log does not grow. agent_id is null for an anonymous caller; such a
-- receipt cannot be reported on.
CREATE TABLE receipts (
    receipt_id      TEXT    PRIMARY KEY,     -- kdr_ + 24 hex
    resource_id     TEXT    NOT NULL,
    version         TEXT,
    commit_ref      TEXT,                    -- the pinned commit, when the record has one
    agent_id        TEXT,                    -- the signed caller, or null
    intended_action TEXT,                    -- install_connector | call | pay | visit | clone | read
    issued_ms       INTEGER NOT NULL,        -- whole seconds, in milliseconds
    expires_ms      INTEGER NOT NULL,        -- issued_ms + 14 days
    signed_text     TEXT    NOT NULL,        -- the kd-receipt-v1 text
    signature       TEXT    NOT NULL         -- Ed25519 by kd-passport-1, base64url
) STRICT;
CREATE INDEX receipts_agent ON receipts (agent_id, issued_ms);

-- Projection: outcome reports (outcome-report@1), one per receipt, from `outcome.reported`
-- events. weight, flags and reasons are decided when the report is made and returned with it.
CREATE TABLE outcome_reports (
    report_id      TEXT    PRIMARY KEY,      -- kdo_ + 24 hex
    receipt_id     TEXT    NOT NULL UNIQUE,  -- one report per receipt
    resource_id    TEXT    NOT NULL,
    version_used   TEXT,
    result         TEXT    NOT NULL,         -- worked | broke | partial | didnt_use
    reason_code    TEXT,
    note           TEXT,                     -- third-party text, untrusted
    note_sha256    TEXT    NOT NULL,         -- of the note's UTF-8 bytes ("" when none)
    agent_id       TEXT    NOT NULL,         -- the reporter
    owner_key      TEXT    NOT NULL,         -- agents.owner_id at report time, or agent:<agent_id>
    canonical_text TEXT    NOT NULL,         -- the kd-outcome-v1 text
    record_hash    TEXT    NOT NULL,         -- SHA-256 hex of canonical_text
    signature      TEXT    NOT NULL,         -- Ed25519 by kd-passport-1 over canonical_text
    weight         REAL    NOT NULL,         -- 0 .. 1
    flags          TEXT    NOT NULL,         -- JSON array of weighting codes (burst, outlier, ...)
    reasons        TEXT    NOT NULL,         -- JSON array of {code, effect, message}
    outlier        INTEGER NOT NULL,         -- flagged outlier (for an owner's outlier history)
    event_seq      INTEGER NOT NULL,
    created_ms     INTEGER NOT NULL
) STRICT;
CREATE INDEX outcome_reports_resource ON outcome_reports (resource_id, created_ms);
CREATE INDEX outcome_reports_agent ON outcome_reports (agent_id, created_ms);
CREATE INDEX outcome_reports_owner ON outcome_reports (owner_key, created_ms);

-- Reports about a resource's content (report_content): working state for reviewers; each is
-- also a `content.reported` event. ip is kept here for the rate limit only, never in the log.
CREATE TABLE content_reports (
    report_id   TEXT    PRIMARY KEY,         -- kdcr_ + 24 hex
    resource_id TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    details     TEXT,
    agent_id    TEXT,                        -- the signed reporter, or null
    ip          TEXT,
    created_ms  INTEGER NOT NULL
) STRICT;
CREATE INDEX content_reports_agent ON content_reports (agent_id, created_ms);
CREATE INDEX content_reports_ip ON content_reports (ip, created_ms);

-- check_before_acting and register_resource match GitHub ids and URLs without regard to case.
CREATE INDEX resources_lower_id ON resources (lower(resource_id));
CREATE INDEX resources_lower_locator ON resources (lower(locator));
-- Image targets (docker:, ghcr.io/, ...) are compared with the few records that list packages.
CREATE INDEX resources_with_packages ON resources (resource_id) WHERE package_ids <> '[]';
