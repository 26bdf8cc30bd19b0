//! Weighing an outcome report when it is made ([`weigh`]) and the reporting limits
//! ([`check_limits`]).

use kd_core::db::{Connection, OptionalExtension};
use serde_json::{Value, json};

use super::OutcomeError;
use super::store;
use super::{
    AGENT_PER_DAY, AGENT_PER_MINUTE, BURST_AFTER, CAP, CONSENSUS_OWNERS, CONSENSUS_SHARE, DAY_MS,
    HISTORY_OUTLIERS, HISTORY_REPORTS, MINUTE_MS, NEW_AGENT_MS, OWNER_PER_DAY, WINDOW_MS,
};
use crate::catalog::model::Resource;
use kd_kernel::error::ToolError;

/// The reporting agent, as weighing needs it.
#[derive(Debug, Clone)]
pub struct Reporter {
    /// The agent.
    pub agent_id: String,
    /// Its owner, when claimed.
    pub owner_id: Option<String>,
    /// When it registered (Unix ms).
    pub created_ms: i64,
}

impl Reporter {
    /// The owner reports are grouped by: the owner id, or `agent:<agent_id>` for an agent
    /// without an owner (grouped on its own; the summary counts it as no owner, see
    /// [`is_unowned`]).
    pub fn owner_key(&self) -> String {
        self.owner_id
            .clone()
            .unwrap_or_else(|| format!("{UNOWNED_PREFIX}{}", self.agent_id))
    }

    /// Reads an agent.
    ///
    /// # Errors
    /// `not_found` naming `agent_id`; `internal`.
    pub fn load(conn: &Connection, agent_id: &str) -> Result<Self, ToolError> {
        let (agent_id, owner_id, created_ms) =
            crate::identity::store::owner_and_created(conn, agent_id)?
                .ok_or(OutcomeError::UnknownAgent)?;
        Ok(Self {
            agent_id,
            owner_id,
            created_ms,
        })
    }
}

/// A report's weight, decided when it is made.
#[derive(Debug, Clone, PartialEq)]
pub struct Weight {
    /// 0..1.
    pub value: f64,
    /// The codes that applied: publisher_agent, burst, no_owner, new_agent, outlier_history,
    /// outlier.
    pub flags: Vec<&'static str>,
    /// `[{code, effect, message}]`, one per flag.
    pub reasons: Vec<Value>,
}

impl Weight {
    /// Flagged as going against a strong consensus.
    pub fn outlier(&self) -> bool {
        self.flags.contains(&"outlier")
    }
}

/// One stored report, as summaries need it.
#[derive(Debug, Clone)]
pub(crate) struct Counted {
    pub(crate) agent_id: String,
    pub(crate) owner_key: String,
    pub(crate) result: String,
    pub(crate) weight: f64,
    pub(crate) outlier: bool,
}

/// Reports on `resource_id` made in `(since_ms, until_ms]`, oldest first.
pub(super) fn reports_between(
    conn: &Connection,
    resource_id: &str,
    since_ms: i64,
    until_ms: i64,
) -> Result<Vec<Counted>, ToolError> {
    Ok(store::reports_between(
        conn,
        resource_id,
        since_ms,
        until_ms,
    )?)
}

/// The prefix of the owner key of an agent without an owner (`agent:<agent_id>`).
const UNOWNED_PREFIX: &str = "agent:";

/// Whether `owner_key` (as [`Reporter::owner_key`] makes it) is an agent without an owner
/// rather than an owner (docs/decisions.md 255).
pub(super) fn is_unowned(owner_key: &str) -> bool {
    owner_key.starts_with(UNOWNED_PREFIX)
}

/// Counted once per owner: each owner's latest report that carries weight, in owner order.
pub(super) fn latest_per_owner(rows: &[Counted]) -> Vec<&Counted> {
    let mut latest: std::collections::BTreeMap<&str, &Counted> = std::collections::BTreeMap::new();
    for row in rows.iter().filter(|row| row.weight > 0.0) {
        latest.insert(&row.owner_key, row);
    }
    latest.into_values().collect()
}

fn reason(code: &'static str, effect: &str, message: &str) -> Value {
    json!({ "code": code, "effect": effect, "message": message })
}

/// Weighs a new report (spec "Weighting (anti-gaming)"). Runs in the report's write
/// transaction, before the report is stored:
///
/// - `publisher_agent` (weight 0): the reporter is the agent that registered the resource
///   (`resources.registered_by`), or an agent of that agent's owner.
/// - `burst` (weight 0): the reporter's owner already made 3 reports on this resource in the
///   last 24 hours; the 4th and later are a burst.
/// - `no_owner`, `new_agent` (capped at 0.25): the agent has no owner, or registered under 7
///   days ago.
/// - `outlier_history` (halved): at least 2 of the owner's last 10 reports were outliers.
/// - `outlier` (halved): at least 5 other owners' counted reports in 30 days agree on one
///   result, they are at least 80% of the other owners, and this result (worked, broke or
///   partial; didnt_use is never an outlier) differs.
///
/// # Errors
/// `internal` when the store fails.
pub fn weigh(
    conn: &Connection,
    resource: Option<&Resource>,
    reporter: &Reporter,
    result: &str,
    now_ms: i64,
) -> Result<Weight, ToolError> {
    let owner_key = reporter.owner_key();
    let mut flags = Vec::new();
    let mut reasons = Vec::new();
    let mut value: f64 = 1.0;

    let resource_id = resource
        .map(|resource| resource.resource_id.as_str())
        .unwrap_or_default();
    let publisher = is_publisher(conn, resource, reporter)?;
    if publisher {
        flags.push("publisher_agent");
        reasons.push(reason(
            "publisher_agent",
            "weight 0",
            "Reported by the publisher's own agent.",
        ));
    }
    let recent: i64 = store::owner_reports_since(conn, &owner_key, resource_id, now_ms - DAY_MS)?;
    let burst = recent >= BURST_AFTER;
    if burst {
        flags.push("burst");
        reasons.push(reason(
            "burst",
            "weight 0",
            "More than 3 reports from one owner on this resource in 24 hours.",
        ));
    }
    if reporter.owner_id.is_none() {
        flags.push("no_owner");
        reasons.push(reason(
            "no_owner",
            "capped at 0.25",
            "The agent has no owner.",
        ));
        value = value.min(CAP);
    }
    if now_ms - reporter.created_ms < NEW_AGENT_MS {
        flags.push("new_agent");
        reasons.push(reason(
            "new_agent",
            "capped at 0.25",
            "The agent is under 7 days old.",
        ));
        value = value.min(CAP);
    }
    let history: i64 = store::recent_outliers(conn, &owner_key, HISTORY_REPORTS)?;
    if history >= HISTORY_OUTLIERS {
        flags.push("outlier_history");
        reasons.push(reason(
            "outlier_history",
            "halved",
            "At least 2 of this owner's last 10 reports went against a strong consensus.",
        ));
        value *= 0.5;
    }
    if result != "didnt_use"
        && let Some((consensus, agreeing, others)) =
            consensus(conn, resource_id, &owner_key, now_ms)?
        && consensus != result
    {
        flags.push("outlier");
        reasons.push(reason(
            "outlier",
            "halved",
            &format!("Goes against a strong consensus: {agreeing} of {others} other owners reported {consensus}."),
        ));
        value *= 0.5;
    }
    if publisher || burst {
        value = 0.0;
    }
    Ok(Weight {
        value,
        flags,
        reasons,
    })
}

/// Whether `reporter` is the agent that registered `resource`, or an agent of its owner.
fn is_publisher(
    conn: &Connection,
    resource: Option<&Resource>,
    reporter: &Reporter,
) -> Result<bool, ToolError> {
    Ok(
        match resource.and_then(|resource| resource.registered_by.as_deref()) {
            Some(publisher) if publisher == reporter.agent_id => true,
            Some(publisher) => {
                let publisher_owner: Option<String> =
                    crate::identity::store::owner_of(conn, publisher)
                        .optional()?
                        .flatten();
                publisher_owner.is_some() && publisher_owner == reporter.owner_id
            }
            None => false,
        },
    )
}

/// The strong consensus of the other owners' counted reports on `resource_id` in the 30 days
/// before `now_ms`, as (result, owners agreeing, other owners): at least
/// [`CONSENSUS_OWNERS`] agreeing on worked, broke or partial, and at least
/// [`CONSENSUS_SHARE`] of the others. `None` when there is none.
fn consensus(
    conn: &Connection,
    resource_id: &str,
    owner_key: &str,
    now_ms: i64,
) -> Result<Option<(&'static str, usize, usize)>, ToolError> {
    let rows = reports_between(conn, resource_id, now_ms - WINDOW_MS, now_ms)?;
    let others: Vec<&Counted> = latest_per_owner(&rows)
        .into_iter()
        .filter(|row| row.owner_key != owner_key && row.result != "didnt_use")
        .collect();
    let top = ["worked", "broke", "partial"]
        .iter()
        .map(|candidate| {
            (
                *candidate,
                others.iter().filter(|row| row.result == *candidate).count(),
            )
        })
        .max_by_key(|(_, count)| *count);
    Ok(top
        .filter(|(_, agreeing)| {
            *agreeing >= CONSENSUS_OWNERS
                && *agreeing as f64 >= CONSENSUS_SHARE * others.len() as f64
        })
        .map(|(consensus, agreeing)| (consensus, agreeing, others.len())))
}

/// Refuses when one more report would pass a limit: 10 a minute and 30 a day per agent, 100 a
/// day per owner (rolling windows). Counts the stored reports, inside the write transaction,
/// so the limits hold exactly under concurrency.
///
/// # Errors
/// `rate_limited` with `retry_after_s` (seconds until one more report fits) and `limit`.
pub fn check_limits(conn: &Connection, reporter: &Reporter, now_ms: i64) -> Result<(), ToolError> {
    limit(
        conn,
        "agent_id",
        &reporter.agent_id,
        MINUTE_MS,
        AGENT_PER_MINUTE,
        now_ms,
        "10 reports a minute per agent",
    )?;
    limit(
        conn,
        "agent_id",
        &reporter.agent_id,
        DAY_MS,
        AGENT_PER_DAY,
        now_ms,
        "30 reports a day per agent",
    )?;
    if let Some(owner) = &reporter.owner_id {
        limit(
            conn,
            "owner_key",
            owner,
            DAY_MS,
            OWNER_PER_DAY,
            now_ms,
            "100 reports a day per owner",
        )?;
    }
    Ok(())
}

fn limit(
    conn: &Connection,
    column: &'static str,
    value: &str,
    window_ms: i64,
    max: usize,
    now_ms: i64,
    words: &'static str,
) -> Result<(), ToolError> {
    let times = store::report_times_since(conn, column, value, now_ms - window_ms)?;
    if times.len() < max {
        return Ok(());
    }
    // One more fits once the report at this position has left the window.
    let leaving = times[times.len() - max];
    // Whole seconds, rounded up: at that time the report has left the window.
    let retry_after_s = (leaving + window_ms - now_ms + 999).div_euclid(1000);
    Err(OutcomeError::TooMany {
        limit: words,
        retry_after_s,
    }
    .into())
}
#[cfg(test)]
mod tests {
    use super::*;
    fn counted(owner: &str, result: &str, weight: f64) -> Counted {
        Counted {
            agent_id: format!("a-{owner}"),
            owner_key: owner.into(),
            result: result.into(),
            weight,
            outlier: false,
        }
    }

    #[test]
    fn each_owner_counts_once_by_its_latest_report_that_carries_weight() {
        let rows = vec![
            counted("o1", "broke", 1.0),
            counted("o1", "worked", 0.25),
            counted("o1", "partial", 0.0),
            counted("o2", "worked", 1.0),
        ];
        let latest = latest_per_owner(&rows);
        assert_eq!(latest.len(), 2);
        assert_eq!(latest[0].result, "worked");
    }
}
