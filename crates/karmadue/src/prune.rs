//! Pruning the working-state tables that would otherwise only grow (docs/decisions.md 172),
//! the part the areas share: each write job that adds a row to one of them also deletes at
//! most [`PER_JOB`] of its expired rows, oldest first, in the same transaction, so the table
//! shrinks back to what is still live without a background job or an unbounded delete inside
//! the writer's batch. Each area prunes its own tables: `identity::prune` (`nonces`, one row
//! per signed request; `challenges`, one per `register_challenge`) and `connector::prune`
//! (the expired copies of client metadata documents in `oauth_clients`, docs/decisions.md
//! 426). The SQL (in each area's store) runs on both backends (a bounded `DELETE` through a
//! subquery: SQLite builds without `DELETE … LIMIT`).

/// Most expired rows one write job deletes from one table.
pub const PER_JOB: i64 = 8;
