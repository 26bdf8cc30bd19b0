-- Linkdbots, live categories (spec 003 "Categories": anyone with an account proposes one, a
-- platform moderator decides). Owned by the kd-linkdbots crate (its SQL is in
-- crates/linkdbots/src/categories_store.rs); docs/decisions.md 337 and 338. An accepted
-- proposal joins the built-in list everywhere (cards, GET /categories, the leaderboards).
CREATE TABLE linkdbots_category_proposals (
    id          TEXT    PRIMARY KEY,          -- cat_<hex>
    proposer_id TEXT    NOT NULL,             -- the hub account (person id) that proposed it
    name        TEXT    NOT NULL,             -- the category key, e.g. code.lint
    description TEXT    NOT NULL,             -- what it covers, 1 to 120 characters
    status      TEXT    NOT NULL,             -- proposed | accepted | rejected
    decided_ms  INTEGER,                      -- when the moderator decided (NULL: undecided)
    created_ms  INTEGER NOT NULL
) STRICT;
CREATE INDEX linkdbots_category_proposals_name ON linkdbots_category_proposals (name);
CREATE INDEX linkdbots_category_proposals_proposer ON linkdbots_category_proposals (proposer_id, created_ms);
