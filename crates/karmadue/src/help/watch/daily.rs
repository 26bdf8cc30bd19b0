//! The daily check of saved watchlists ([`run_daily`], scheduled by [`run_schedule`]): each
//! item's record against the state last seen, one `watchlist.alerted` event per agent and day
//! and, for an owner-linked agent, a mail to its person.

use std::sync::Arc;

use crate::help::events;
use kd_core::clock::rfc3339_ms;
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use serde_json::{Value, json};

use super::{SCHEDULE_TICK, Seen, load_seen, resolve_real, store_item};
use crate::catalog::model::{self};
use crate::help::DAY_MS;
use crate::outcomes;
use crate::preflight::{self};
use kd_kernel::Kernel;
use kd_kernel::error::ToolError;

/// What one run of the daily job did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DailyReport {
    /// The UTC day checked, `YYYY-MM-DD`.
    pub day: String,
    /// Watchlists checked in this run (those not checked yet that day).
    pub checked: usize,
    /// Watchlists with at least one change (one `watchlist.alerted` event each).
    pub alerted: usize,
    /// Alert mails queued to owners.
    pub mailed: usize,
}

/// One change the daily check found on a watched record.
fn change(resource_id: &str, kind: &str, detail: Value) -> Value {
    let mut change = json!({ "resource_id": resource_id, "change": kind });
    if let (Value::Object(map), Value::Object(extra)) = (&mut change, detail) {
        map.extend(extra);
    }
    change
}

/// The changes between what was seen and what is now, in a fixed order.
fn changes(resource_id: &str, seen: &Seen, now: &Seen) -> Vec<Value> {
    let mut found = Vec::new();
    if now.archived && !seen.archived {
        found.push(change(resource_id, "archived_upstream", json!({})));
    }
    if !now.archived && seen.archived {
        found.push(change(resource_id, "no_longer_archived", json!({})));
    }
    if now.risky && !seen.risky {
        found.push(change(resource_id, "flagged_risky", json!({})));
    }
    if now.version.is_some() && now.version != seen.version {
        found.push(change(
            resource_id,
            "new_version",
            json!({
                "from": seen.version,
                "to": now.version,
                "released_at": now.released_ms.map(rfc3339_ms),
            }),
        ));
    }
    if now.broke > seen.broke {
        found.push(change(
            resource_id,
            "broke_reports",
            json!({
                "new": now.broke - seen.broke,
                "total": now.broke,
                "label": outcomes::RELIABILITY_LABEL,
            }),
        ));
    }
    found
}

/// One line of the alert mail. Versions are upstream text: shown only when they look like a
/// version.
/// A change as the public log keeps it: upstream version strings are third-party text, so a
/// version is logged only in the same plain form the mail shows it (else as "a new version").
fn logged_change(change: &Value) -> Value {
    let mut logged = change.clone();
    if let Value::Object(map) = &mut logged {
        let plain = |value: Option<&Value>| {
            value
                .and_then(Value::as_str)
                .filter(|version| plain_version(version))
                .map(|version| Value::from(version.to_owned()))
                .unwrap_or(Value::Null)
        };
        if map.contains_key("from") || map.contains_key("to") {
            let from = plain(map.get("from"));
            let to = plain(map.get("to"));
            map.insert("from".into(), from);
            map.insert("to".into(), to);
        }
    }
    logged
}

/// A version string short and plain enough to repeat: up to 40 of `A-Za-z0-9._+-`.
fn plain_version(version: &str) -> bool {
    version.len() <= 40
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
}

fn mail_line(change: &Value) -> String {
    let id = change["resource_id"].as_str().unwrap_or_default();
    let what = match change["change"].as_str().unwrap_or_default() {
        "archived_upstream" => "archived upstream".to_owned(),
        "no_longer_archived" => "no longer archived upstream".to_owned(),
        "flagged_risky" => "flagged risky".to_owned(),
        "new_version" => match change["to"].as_str() {
            Some(version) if plain_version(version) => format!("new version {version}"),
            _ => "a new version".to_owned(),
        },
        "broke_reports" => format!(
            "{} new \"broke\" report(s) from agents after use (reliability reports, not a safety or trust check)",
            change["new"].as_i64().unwrap_or(0)
        ),
        "now_listed" => "now has a KarmaDue record".to_owned(),
        other => other.to_owned(),
    };
    format!("- {id}: {what}")
}

/// What changed on each item of the agent's watchlist since its last check (each item's
/// record as now seen is stored for the next check).
fn changes_since_last_check(
    txn: &mut WriteTxn<'_>,
    agent_id: &str,
) -> Result<Vec<Value>, ToolError> {
    let items: Vec<(i64, String, Option<String>)> =
        crate::help::store::items(txn.conn(), agent_id)?;
    let previous = load_seen(txn.conn(), agent_id)?;
    let mut found = Vec::new();
    for (position, target, resource_id) in items {
        let position = usize::try_from(position).map_err(ToolError::internal_from)?;
        match resource_id {
            Some(id) => {
                let Some(resource) = model::load_resource(txn.conn(), &id)? else {
                    continue;
                };
                let now = Seen::of(txn.conn(), &resource)?;
                if let Some((_, seen)) = previous.iter().find(|(known, _)| *known == id) {
                    found.extend(changes(&id, seen, &now));
                }
                store_item(txn.conn(), agent_id, position, &target, Some((&id, &now)))?;
            }
            None => {
                // Not listed when saved: look again; a record that appeared is news.
                let Ok(parsed) = preflight::parse_target_text(&target, "tools") else {
                    continue;
                };
                if let Ok(resolution) = resolve_real(txn.conn(), &parsed)? {
                    let id = resolution.resource.resource_id.clone();
                    let already = previous.iter().any(|(known, _)| *known == id);
                    if already {
                        continue;
                    }
                    let now = Seen::of(txn.conn(), &resolution.resource)?;
                    // The item by its place in the list: the target text stays out of the log.
                    found.push(change(&id, "now_listed", json!({ "position": position })));
                    store_item(txn.conn(), agent_id, position, &target, Some((&id, &now)))?;
                }
            }
        }
    }
    Ok(found)
}

/// Checks one agent's watchlist for `day`, in the writer's transaction. Returns None when it
/// was already checked that day (or has no list), else whether it alerted and mailed.
fn check_one(
    txn: &mut WriteTxn<'_>,
    agent_id: &str,
    day: i64,
    mail_id: &str,
    public_url: &str,
) -> Result<Option<(bool, bool)>, ToolError> {
    let due: Option<Option<i64>> = crate::help::store::last_checked_day(txn.conn(), agent_id)?;
    match due {
        None => return Ok(None),
        Some(Some(last)) if last >= day => return Ok(None),
        Some(_) => {}
    }
    let found = changes_since_last_check(txn, agent_id)?;
    crate::help::store::set_checked_day(txn.conn(), agent_id, day)?;
    if found.is_empty() {
        return Ok(Some((false, false)));
    }
    let (handle, owner): (String, Option<String>) =
        crate::identity::store::handle_and_owner(txn.conn(), agent_id)?;
    let person = owner
        .as_deref()
        .map(|owner| kd_core::people::find_person(txn.conn(), owner))
        .transpose()?
        .flatten();
    let day_text = rfc3339_ms(day * DAY_MS)
        .chars()
        .take(10)
        .collect::<String>();
    if let Some(person) = &person {
        let lines = found.iter().map(mail_line).collect::<Vec<_>>().join("\n");
        kd_core::outbox::queue(
            txn.conn(),
            &kd_core::outbox::Mail {
                mail_id: mail_id.to_owned(),
                to_email: person.email.clone(),
                subject: format!("KarmaDue watchlist: {} change(s) for {handle}", found.len()),
                body: format!(
                    "Hello,\n\nThe daily check of the watchlist of your agent {handle} on {day_text} found:\n\n{lines}\n\n\
                     Open a record at {public_url}/resource?id=<resource id>. Reliability reports are agents' own reports after use, never a safety or trust check.\n"
                ),
                created_ms: txn.now_ms(),
                sent_ms: None,
            },
        )?;
    }
    txn.record(
        "hub",
        agent_id,
        &events::WatchlistAlerted {
            agent_id: agent_id.to_owned(),
            day: day_text.clone(),
            changes: found.iter().map(logged_change).collect(),
            delivered_to: if person.is_some() { "owner" } else { "history" }.into(),
        },
    )?;
    Ok(Some((true, person.is_some())))
}

/// The daily job: checks every active agent's saved watchlist not yet checked on `now_ms`'s UTC day against
/// the catalog and outcome records, records the changes since the last check
/// (`watchlist.alerted`) and, for owner-linked agents, queues one alert mail to the owner.
/// Each agent's list is checked in its own transaction and marked checked for the day, so a
/// second run on the same day (or a run racing this one) sends nothing twice. Nothing changed:
/// no event, no mail.
///
/// `now_ms` is the hub clock's time, Unix ms (tests move a `ManualClock` and pass it).
///
/// # Errors
/// `internal` when the store fails; lists checked before the failure stay checked.
pub async fn run_daily(hub: &Kernel, now_ms: i64) -> Result<DailyReport, ToolError> {
    let day = now_ms.div_euclid(DAY_MS);
    let due: Vec<String> = hub
        .store
        .read(move |conn| -> Result<Vec<String>, ToolError> {
            let ids = crate::help::store::due_watchlists(conn, day)?;
            Ok(ids)
        })
        .await?;
    let mut report = DailyReport {
        day: rfc3339_ms(day * DAY_MS).chars().take(10).collect(),
        ..DailyReport::default()
    };
    for agent_id in due {
        let mail_id = random_id::<12>(hub.random.as_ref(), "kdm_");
        let public_url = hub.config.public_url.clone();
        let outcome = hub
            .store
            .write(move |txn| check_one(txn, &agent_id, day, &mail_id, &public_url))
            .await??;
        if let Some((alerted, mailed)) = outcome {
            report.checked += 1;
            report.alerted += usize::from(alerted);
            report.mailed += usize::from(mailed);
        }
    }
    if report.mailed > 0 {
        crate::people::mail::MailWakeup::notify(hub);
    }
    Ok(report)
}

/// The scheduler `serve` starts: runs [`run_daily`] now and then again whenever the hub
/// clock has entered a new UTC day (looking every [`SCHEDULE_TICK`] at most, and at the
/// expected midnight). A failed run is logged and retried on the next tick.
pub async fn run_schedule(hub: Arc<Kernel>) {
    loop {
        let now = hub.clock.now_ms();
        match run_daily(&hub, now).await {
            Ok(report) if report.checked > 0 => tracing::info!(
                day = %report.day,
                checked = report.checked,
                alerted = report.alerted,
                mailed = report.mailed,
                "daily watchlist check"
            ),
            Ok(_) => {}
            Err(error) => tracing::error!(cause = ?error.cause, "daily watchlist check failed"),
        }
        tokio::time::sleep(crate::schedule::until_next_run(now, SCHEDULE_TICK)).await;
    }
}
