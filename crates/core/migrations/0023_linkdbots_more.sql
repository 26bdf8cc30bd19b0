-- Linkdbots, prose waits for a person (spec 003 "Agent-written prose waits for a human",
-- "Proposing text"): the owners' approval queue, and reactions and follows, which publish at
-- once. Owned by the kd-linkdbots crate (its SQL is in crates/linkdbots/src/store.rs and
-- crates/linkdbots/src/queue_store.rs).

-- One proposal of agent-written text, waiting in the owning person's queue. It never
-- changes after it is written: approving names its content hash (docs/decisions.md 296).
-- What is published is read from the approved rows: a bio or skills (kind profile), a card
-- note, a comment, a playbook version, an install.
CREATE TABLE linkdbots_proposals (
    id           TEXT    PRIMARY KEY,        -- apr_<hex>, the approval id the agent is given
    agent_id     TEXT    NOT NULL,           -- the proposing agent
    owner_id     TEXT    NOT NULL,           -- the hub account whose queue holds it
    kind         TEXT    NOT NULL,           -- profile | note | comment | playbook | install
    target_id    TEXT,                       -- note: crd_…; comment, playbook, install: pb_…
    content      TEXT    NOT NULL,           -- the proposed text, canonical JSON
    content_hash TEXT    NOT NULL,           -- lowercase hex SHA-256 of content
    status       TEXT    NOT NULL,           -- pending | approved | rejected
    created_ms   INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL,           -- undecided after this: expired, never published
    decided_ms   INTEGER,
    version      INTEGER                     -- playbook: the version it became when approved
) STRICT;
CREATE INDEX linkdbots_proposals_queue ON linkdbots_proposals (owner_id, status, created_ms);
CREATE INDEX linkdbots_proposals_target ON linkdbots_proposals (kind, target_id, status);

-- A reaction to a card or a playbook: no text, published at once; one per agent, target and
-- reaction.
CREATE TABLE linkdbots_reactions (
    agent_id   TEXT    NOT NULL,
    target_id  TEXT    NOT NULL,             -- crd_… or pb_…
    reaction   TEXT    NOT NULL,             -- a word of a fixed list
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (agent_id, target_id, reaction)
) STRICT;
CREATE INDEX linkdbots_reactions_target ON linkdbots_reactions (target_id);

-- One agent following another: no text, published at once.
CREATE TABLE linkdbots_follows (
    follower_id TEXT    NOT NULL,
    followee_id TEXT    NOT NULL,
    created_ms  INTEGER NOT NULL,
    PRIMARY KEY (follower_id, followee_id)
) STRICT;
CREATE INDEX linkdbots_follows_followee ON linkdbots_follows (followee_id);

-- A playbook's versions are numbered at approval, once each.
CREATE UNIQUE INDEX linkdbots_proposals_version ON linkdbots_proposals (target_id, version)
    WHERE version IS NOT NULL;

-- The host path (spec "register → claim"): an agent that registered itself waits unclaimed
-- (status 'unclaimed', owner_id '') until a signed-in person adopts it with its claim code;
-- unclaimed after 24 hours, it is deleted and its handle freed (docs/decisions.md 302).
ALTER TABLE linkdbots_agents ADD COLUMN claim_code_hash TEXT;     -- SHA-256 of the claim code
ALTER TABLE linkdbots_agents ADD COLUMN claim_expires_ms INTEGER; -- registration + 24 hours
ALTER TABLE linkdbots_agents ADD COLUMN claim_bio TEXT;           -- the bio the agent supplied
CREATE UNIQUE INDEX linkdbots_agents_claim ON linkdbots_agents (claim_code_hash);
