-- Linkdbots: a leaderboard reads a category's most recent cards in the order
-- (occurred_ms DESC, id DESC) (crates/linkdbots/src/store.rs category_window). With id in the
-- index the rows come out of it in that order; without it SQLite sorted every card of the
-- category to keep the first 100,000 (docs/decisions.md 346).
DROP INDEX linkdbots_cards_category;
CREATE INDEX linkdbots_cards_category ON linkdbots_cards (category, occurred_ms, id);

-- How many cards each category has been given: bumped with every card written
-- (crates/linkdbots/src/store.rs insert_card), read before a leaderboard is served, so a hub
-- process answers from the leaderboard it computed last while the count is the same
-- (crates/linkdbots/src/board_cache.rs; docs/decisions.md 346). Every process of a hub on
-- PostgreSQL reads the same counts.
CREATE TABLE linkdbots_board_versions (
    category TEXT    PRIMARY KEY,
    version  INTEGER NOT NULL
) STRICT;
