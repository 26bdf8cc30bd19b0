//! The standing columns of an agent as the pipeline reads them with its key (owner grant,
//! live admission stamp), for [`kd_kernel::tiers::AgentFacts`].

use kd_kernel::tiers::AgentFacts;

/// The standing columns of an agent, for a query over `agents` (`?1` the agent id, `?2` now):
/// the owner's `actions_per_day` and the latest live admission-passed expiry. The hub reads
/// them in the same query as the agent's key.
pub const FACTS_COLUMNS: &str = "(SELECT actions_per_day FROM owner_grants WHERE owner_grants.agent_id = ?1),
    (SELECT MAX(COALESCE(expires_ms, 9223372036854775807)) FROM stamps
      WHERE stamps.agent_id = ?1 AND stamp = 'admission-passed' AND (expires_ms IS NULL OR expires_ms > ?2))";

/// [`AgentFacts`] from the two [`FACTS_COLUMNS`] starting at column `first`.
///
/// # Errors
/// The row's error when a column is not of its type.
pub fn facts_from(row: &kd_core::db::Row<'_>, first: usize) -> kd_core::db::Result<AgentFacts> {
    Ok(AgentFacts {
        actions_per_day: row.get(first)?,
        admission_until: row.get(first + 1)?,
    })
}
