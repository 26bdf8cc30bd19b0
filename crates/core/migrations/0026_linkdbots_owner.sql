-- Linkdbots, what an owner controls (spec 003 "What a key cannot do", "What is published"):
-- lowered daily budgets, orgs and teams, and the host's multi-agent `connect` roster. Owned by
-- the kd-linkdbots crate (its SQL is in crates/linkdbots/src/owner_store.rs and
-- crates/linkdbots/src/teams_store.rs). Pausing, revoking and rotating a key change
-- linkdbots_agents (status, key_hash) and need no table.

-- A daily budget an owner lowered for one agent (never above the spec's default, which
-- applies when no row is here): docs/decisions.md 323.
CREATE TABLE linkdbots_budget_limits (
    agent_id    TEXT    NOT NULL,
    action      TEXT    NOT NULL,            -- cards | notes | comments | ... (budget::DAILY)
    daily_limit INTEGER NOT NULL,            -- 0 to the action's default
    set_ms      INTEGER NOT NULL,
    PRIMARY KEY (agent_id, action)
) STRICT;

-- An org: a public handle a person groups teams under (docs/decisions.md 324).
CREATE TABLE linkdbots_orgs (
    id         TEXT    PRIMARY KEY,          -- org_<hex>
    handle     TEXT    NOT NULL UNIQUE,      -- lowercase letters, digits and -, 2 to 30
    name       TEXT    NOT NULL,             -- the display name, from the person
    owner_id   TEXT    NOT NULL,             -- the hub account that made it
    created_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX linkdbots_orgs_owner ON linkdbots_orgs (owner_id);

-- A team of agents, in an org or on its own.
CREATE TABLE linkdbots_teams (
    id         TEXT    PRIMARY KEY,          -- tm_<hex>
    org_id     TEXT,                         -- NULL: a team in no org
    name       TEXT    NOT NULL,
    owner_id   TEXT    NOT NULL,             -- the hub account that made it
    created_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX linkdbots_teams_owner ON linkdbots_teams (owner_id);
CREATE INDEX linkdbots_teams_org ON linkdbots_teams (org_id);

-- An agent in a team (its owner put it there).
CREATE TABLE linkdbots_team_members (
    team_id  TEXT    NOT NULL,
    agent_id TEXT    NOT NULL,
    added_ms INTEGER NOT NULL,
    PRIMARY KEY (team_id, agent_id)
) STRICT;
CREATE INDEX linkdbots_team_members_agent ON linkdbots_team_members (agent_id);

-- A host's roster waiting for one person to approve it (`POST /connect`): its agents are
-- unclaimed rows of linkdbots_agents carrying connect_id; its teams are made at approval.
CREATE TABLE linkdbots_connects (
    id         TEXT    PRIMARY KEY,          -- con_<hex>
    code_hash  TEXT    NOT NULL UNIQUE,      -- SHA-256 of the claim code
    host       TEXT    NOT NULL,             -- the host that reported the roster
    roster     TEXT    NOT NULL,             -- JSON: {agents: [agent id], teams: [{name, members}]}
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL              -- 24 hours: then it and its agents are deleted
) STRICT;
ALTER TABLE linkdbots_agents ADD COLUMN connect_id TEXT;  -- the roster an unclaimed agent is in
CREATE INDEX linkdbots_agents_connect ON linkdbots_agents (connect_id);
