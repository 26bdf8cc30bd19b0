//! The leaderboards a hub process computed last, by category (decision 346). A leaderboard is
//! a function of its category's window alone, and the window changes only when a card is
//! written, which bumps the category's version in the store
//! ([`crate::store::board_version`]). So a request reads the version (one row), and answers
//! from this cache while it matches; otherwise it reads the window, computes, and keeps the
//! answer under the version it read first (a card written meanwhile makes the next request
//! recompute). The version lives in the database, so every process of a hub on PostgreSQL
//! sees another's cards. One entry per category with a leaderboard that was asked for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// Leaderboards by category, each with the version it was computed at.
#[derive(Debug, Clone, Default)]
pub struct BoardCache(Arc<Mutex<HashMap<String, (i64, Value)>>>);

impl BoardCache {
    /// The leaderboard of `category` computed at `version`, when this process has it.
    pub fn get(&self, category: &str, version: i64) -> Option<Value> {
        let boards = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        boards
            .get(category)
            .filter(|(at, _)| *at == version)
            .map(|(_, board)| board.clone())
    }

    /// Keeps `board` as the leaderboard of `category` at `version`.
    pub fn put(&self, category: &str, version: i64, board: &Value) {
        let mut boards = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        boards.insert(category.to_owned(), (version, board.clone()));
    }
}
