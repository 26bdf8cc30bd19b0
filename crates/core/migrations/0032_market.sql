-- The marketplace (issue 32; tool reference post_listing, search_matches, propose_terms,
-- get_proposal, respond_to_proposal, handoff_task, confirm_handoff, retract_post,
-- report_content; docs/decisions.md 442-459). Third-party text (titles, descriptions, areas,
-- terms, payloads) is kept here only: the log commits to it by SHA-256 (a proposal by its
-- exact terms hash, kd-terms-v1), and `ledger rebuild` compares every other column.

-- Projection: listings, from listing.drafted, listing.published, listing.retracted and
-- listing.reported.
CREATE TABLE market_listings (
    listing_id   TEXT    PRIMARY KEY,       -- kdli_ + 24 hex
    agent_id     TEXT    NOT NULL,          -- the drafting agent
    owner_id     TEXT    NOT NULL,          -- its person when drafted: who publishes
    operator     TEXT    NOT NULL,          -- the caps' pool, as publish_ask's
    kind         TEXT    NOT NULL,          -- give | ask
    category     TEXT    NOT NULL,          -- one of the 18 categories
    points       INTEGER,                   -- 0 to 1,000,000
    title        TEXT    NOT NULL,
    description  TEXT,
    area         TEXT,
    title_sha256 TEXT    NOT NULL,
    text_sha256  TEXT    NOT NULL,          -- SHA-256 of title, LF, description, LF, area
    status       TEXT    NOT NULL,          -- draft | published | retracted
    created_ms   INTEGER NOT NULL,
    published_ms INTEGER,
    published_by TEXT,                      -- person:<id> who confirmed
    retracted_ms INTEGER,
    reports      INTEGER NOT NULL,          -- report_content reports filed on it
    event_seq    INTEGER NOT NULL           -- listing.drafted
) STRICT;
CREATE INDEX market_listings_operator ON market_listings (operator, created_ms);
CREATE INDEX market_listings_owner ON market_listings (owner_id, created_ms);
CREATE INDEX market_listings_status ON market_listings (status, created_ms);

-- Projection: proposals, from proposal.made, proposal.review_requested, proposal.declined,
-- proposal.cancelled and proposal.approved.
CREATE TABLE market_proposals (
    proposal_id        TEXT    PRIMARY KEY, -- kdpr_ + 24 hex
    listing_id         TEXT    NOT NULL,    -- the proposer's published listing
    proposer_id        TEXT    NOT NULL,
    proposer_owner     TEXT    NOT NULL,
    counterparty_id    TEXT    NOT NULL,
    counterparty_owner TEXT    NOT NULL,
    terms              TEXT    NOT NULL,    -- canonical JSON (jsonb::text printing)
    terms_hash         TEXT    NOT NULL,    -- kd-terms-v1
    status             TEXT    NOT NULL,    -- proposed | approved | declined | cancelled
    proposer_approved_ms     INTEGER,
    counterparty_approved_ms INTEGER,
    review_requested_ms      INTEGER,
    decided_ms         INTEGER,
    decided_by         TEXT,                -- agent id or person:<id>
    created_ms         INTEGER NOT NULL,
    event_seq          INTEGER NOT NULL     -- proposal.made
) STRICT;
CREATE INDEX market_proposals_proposer ON market_proposals (proposer_owner);
CREATE INDEX market_proposals_counterparty ON market_proposals (counterparty_owner);
CREATE INDEX market_proposals_agents ON market_proposals (proposer_id, counterparty_id);

-- Projection: handoffs, from handoff.made, handoff.confirmation_requested, handoff.confirmed
-- and handoff.declined.
CREATE TABLE market_handoffs (
    handoff_id     TEXT    PRIMARY KEY,     -- kdho_ + 24 hex
    from_agent     TEXT    NOT NULL,
    to_agent       TEXT    NOT NULL,
    to_owner       TEXT    NOT NULL,        -- the person who confirms
    proposal_id    TEXT,                    -- the approved proposal that makes the circle
    circle         TEXT    NOT NULL,        -- same_owner | approved_proposal
    kind           TEXT    NOT NULL,
    payload        TEXT    NOT NULL,        -- canonical JSON (third-party)
    payload_sha256 TEXT    NOT NULL,
    status         TEXT    NOT NULL,        -- pending | awaiting_confirmation | confirmed | declined
    requested_ms   INTEGER,
    decided_ms     INTEGER,
    decided_by     TEXT,
    created_ms     INTEGER NOT NULL,
    event_seq      INTEGER NOT NULL         -- handoff.made
) STRICT;
CREATE INDEX market_handoffs_to_owner ON market_handoffs (to_owner, created_ms);
CREATE INDEX market_handoffs_from ON market_handoffs (from_agent, created_ms);
