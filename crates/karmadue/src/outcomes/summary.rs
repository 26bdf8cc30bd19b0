//! The `reliability_reports` summary of a resource ([`reliability_reports_at`]).

use kd_core::db::Connection;
use serde_json::{Value, json};

use super::weight::{is_unowned, latest_per_owner, reports_between};
use super::{DAY_MS, ESTABLISHED_OWNERS, RELIABILITY_LABEL, WINDOW_MS};
use kd_kernel::error::ToolError;

/// The reliability summary of a resource at `now_ms`, or None when nobody reported on it in
/// the 30 days before: `{label, reports, agents, owners, by_owner {worked, broke, partial,
/// didnt_use}, weighted {…}, outlier_reports, excluded_reports, line, established,
/// window_days, note}`.
///
/// `reports`, `agents`, `outlier_reports` and `excluded_reports` (weight 0) count every report
/// in the window. `owners` and `by_owner` count each owner once, by its latest report that
/// carries weight; an agent without an owner counts no owner (its reports are in `reports`
/// and `agents`, and `line` names how many such agents reported; docs/decisions.md 255);
/// `weighted` sums the counted owners' reports' weights. `established` is true at 5 or more
/// such owners.
///
/// # Errors
/// `internal` when the store fails.
pub fn reliability_reports_at(
    conn: &Connection,
    resource_id: &str,
    now_ms: i64,
) -> Result<Option<Value>, ToolError> {
    let rows = reports_between(conn, resource_id, now_ms - WINDOW_MS, now_ms)?;
    if rows.is_empty() {
        return Ok(None);
    }
    let agents: std::collections::BTreeSet<&str> =
        rows.iter().map(|row| row.agent_id.as_str()).collect();
    // An agent without an owner is grouped on its own but counts no owner (decision 255).
    let (unowned, counted): (Vec<_>, Vec<_>) = latest_per_owner(&rows)
        .into_iter()
        .partition(|row| is_unowned(&row.owner_key));
    let count = |result: &str| counted.iter().filter(|row| row.result == result).count();
    // Folded from +0.0: an empty `sum` of floats is -0.0, which JSON would print as "-0.0".
    let weighted = |result: &str| -> f64 {
        counted
            .iter()
            .filter(|row| row.result == result)
            .map(|row| row.weight)
            .fold(0.0, |total, weight| total + weight)
    };
    let by_owner = ByOwner {
        worked: count("worked"),
        broke: count("broke"),
        partial: count("partial"),
        unused: count("didnt_use"),
    };
    let owners = counted.len();
    let excluded = rows.iter().filter(|row| row.weight <= 0.0).count();
    let line = summary_line(&by_owner, owners, unowned.len(), rows.len());
    let established = owners >= ESTABLISHED_OWNERS;
    Ok(Some(json!({
        "label": RELIABILITY_LABEL,
        "reports": rows.len(),
        "agents": agents.len(),
        "owners": owners,
        "by_owner": { "worked": by_owner.worked, "broke": by_owner.broke, "partial": by_owner.partial, "didnt_use": by_owner.unused },
        "weighted": { "worked": weighted("worked"), "broke": weighted("broke"), "partial": weighted("partial"), "didnt_use": weighted("didnt_use") },
        "outlier_reports": rows.iter().filter(|row| row.outlier).count(),
        "excluded_reports": excluded,
        "line": line,
        "established": established,
        "window_days": WINDOW_MS / DAY_MS,
        "note": if established {
            "Agents' own reports after use, counted once per owner. Never verification; never changes the ranking, trust or the assessment."
        } else {
            "Anecdotal: fewer than 5 owners reported in 30 days. Agents' own reports after use; never verification."
        },
    })))
}

/// Owners counted by the result of their latest counted report.
struct ByOwner {
    worked: usize,
    broke: usize,
    partial: usize,
    unused: usize,
}

/// The summary's `line`: "worked for 9 of 11 owners; broke for 2", then how many agents
/// without an owner reported (they count no owner), or "no counted reports: …" when every
/// report weighs 0.
fn summary_line(by_owner: &ByOwner, owners: usize, unowned: usize, reports: usize) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut parts = Vec::new();
    if owners > 0 {
        parts.push(format!(
            "worked for {} of {owners} owner{}",
            by_owner.worked,
            plural(owners)
        ));
        for (n, what) in [
            (by_owner.broke, "broke for"),
            (by_owner.partial, "partial for"),
            (by_owner.unused, "not used by"),
        ] {
            if n > 0 {
                parts.push(format!("{what} {n}"));
            }
        }
    } else if unowned > 0 {
        parts.push("no owner counted".to_owned());
    }
    if unowned > 0 {
        parts.push(format!(
            "{unowned} agent{} with no owner reported",
            plural(unowned)
        ));
    }
    if parts.is_empty() {
        return format!(
            "no counted reports: {reports} report{} weigh 0",
            plural(reports)
        );
    }
    parts.join("; ")
}

/// [`reliability_reports_at`] at the hub's time as of the latest event in the log (the clock is
/// not reachable from a bare connection; every report appends an event, so the window can only
/// lag by the time since the hub last wrote). Callers that hold the hub's clock should prefer
/// [`reliability_reports_at`].
///
/// # Errors
/// `internal` when the store fails.
pub fn reliability_reports(
    conn: &Connection,
    resource_id: &str,
) -> Result<Option<Value>, ToolError> {
    let head_ms: Option<i64> = crate::ledger::store::head_time(conn)?;
    match head_ms {
        Some(now_ms) => reliability_reports_at(conn, resource_id, now_ms),
        None => Ok(None),
    }
}
