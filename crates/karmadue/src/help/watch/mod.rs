//! Watching tools (permissions document, tier table): `quick_watch` answers the current state
//! of up to 10 tools and stores nothing; `set_watchlist` saves (replaces) an agent's list of up
//! to 200 tools, which [`run_daily`] checks once per UTC day.
//!
//! A watched "tool" is a catalog target, written as `check_before_acting` takes it (a resource
//! id `kd:res:…`, a GitHub URL, `npm:<name>`, a package-page URL, an image id, any https
//! locator). The check reads the hub's own records — the catalog row (archived, flagged risky,
//! version) and the outcome reports agents filed with `report_outcome` — not the network
//! (docs/decisions.md 86).
//!
//! What the daily check compares is the state it saw last (columns `seen_*` of
//! `watchlist_items`, working state). A change it finds is recorded as one `watchlist.alerted`
//! event per agent and day (actor `hub`, subject the agent, readable with `get_history`); for
//! an owner-linked agent the same changes are mailed to its person through the outbox
//! ("alerts follow the owner link"). A second run on the same UTC day finds nothing due and
//! sends nothing.
//!
//! Events: `watchlist.set` (actor: the agent or `person:<id>`; payload: counts and the SHA-256
//! of the targets, never the targets' text) and `watchlist.alerted`.

mod daily;

pub use daily::{DailyReport, run_daily, run_schedule};

use std::time::Duration;

use crate::help::events;
use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::HelpError;
use super::output::{
    ListedItem, OutcomeCounts, QuickWatched, SavedItem, WatchItem, WatchlistSaved,
};
use crate::catalog::model::Resource;
use crate::outcomes;
use crate::preflight::{self, Target};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::policy::{Connector, Tier, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};

/// Most targets one `quick_watch` call answers.
pub const QUICK_WATCH_MAX: usize = 10;
/// Most targets a saved watchlist holds.
pub const WATCHLIST_MAX: usize = 200;
/// How often the scheduler looks at the hub clock for a new UTC day (real time; the job
/// itself is idempotent per day, so looking more often sends nothing twice).
pub const SCHEDULE_TICK: Duration = Duration::from_secs(600);

/// quick_watch's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QuickWatch {
    #[schemars(
        description = "Up to 10 targets, each a string as check_before_acting takes it: a KarmaDue id (kd:res:...), an https URL (github.com/owner/repo works too), npm:<package> or a package-page URL, or a docker/OCI image id."
    )]
    tools: Vec<Value>,
}

/// set_watchlist's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SetWatchlist {
    #[schemars(
        description = "The whole watchlist, up to 200 targets (it replaces the saved one; [] clears it). Each is a string as check_before_acting takes it: kd:res:..., an https URL, github.com/owner/repo, npm:<package>, a package-page URL, or an image id."
    )]
    tools: Vec<Value>,
}

/// `quick_watch`.
pub static QUICK_WATCH: Tool = Tool {
    name: "quick_watch",
    title: "Watch up to 10 tools now",
    description: "Answers the current state of up to 10 tools from KarmaDue's records: the record each target resolves to (or not_listed), archived upstream, flagged risky, latest version and its date, and reliability reports from agents (reports after use, not a safety or trust check). Nothing is stored; no account needed. For a saved list of up to 200 tools checked daily, use set_watchlist.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[Lift::rows("items", "resource_id", &["title"])],
    arguments: Arguments::Typed(kd_kernel::input!(QuickWatch)),
    policy: ToolPolicy::READ.unlocked_at(Tier::Anonymous, 3),
    handler: kd_kernel::typed!(QUICK_WATCH, quick_watch),
};

/// `set_watchlist`.
pub static SET_WATCHLIST: Tool = Tool {
    name: "set_watchlist",
    title: "Save your watchlist",
    description: "Save (replace) your watchlist: up to 200 tools, checked once a day against KarmaDue's records (archived upstream, flagged risky, a new version, new broke reports from agents). Signed (kd-mcp-v1). A target with no record yet is kept as not_listed and checked again daily. Changes are recorded as watchlist.alerted in your get_history; if you are linked to an owner, they are also mailed to your person. [] clears the list. Over 200 targets is refused with nothing saved.",
    access: Access::Signed,
    hints: Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(SetWatchlist).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never).unlocked_at(Tier::Registered, 1),
    handler: kd_kernel::typed!(SET_WATCHLIST, set_watchlist),
};

/// What the daily check compares: a record's state as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Archived upstream.
    pub archived: bool,
    /// Flagged risky.
    pub risky: bool,
    /// The version the record states.
    pub version: Option<String>,
    /// Its release (or import) time, Unix ms.
    pub released_ms: Option<i64>,
    /// `broke` outcome reports on the record, all time.
    pub broke: i64,
    /// All outcome reports on the record, all time.
    pub reports: i64,
}

impl Seen {
    /// The state of `resource` now.
    ///
    /// # Errors
    /// `internal` when the store fails.
    pub fn of(conn: &Connection, resource: &Resource) -> Result<Self, ToolError> {
        let (reports, broke): (i64, i64) =
            crate::outcomes::store::report_counts(conn, &resource.resource_id)?;
        Ok(Self {
            archived: resource.archived,
            risky: resource.risky,
            version: resource.version.clone(),
            released_ms: resource.released_ms,
            broke,
            reports,
        })
    }
}

/// The targets of `tools` (the argument's items): at most `max` strings, each parsed as a
/// pre-flight target. Returns the trimmed text and the parsed target of each.
///
/// # Errors
/// `validation` naming `tools` (too many, none when `at_least_one`) or `tools[i]` (not a
/// string, or no recognised target form).
pub fn parse_tools(
    items: &[Value],
    max: usize,
    at_least_one: bool,
) -> Result<Vec<(String, Target)>, ToolError> {
    if items.len() > max {
        return Err(HelpError::TooManyTools {
            max,
            sent: items.len(),
        }
        .into());
    }
    if at_least_one && items.is_empty() {
        return Err(HelpError::NoTools.into());
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let field = format!("tools[{index}]");
            let Some(text) = item.as_str() else {
                return Err(HelpError::ToolNotText(field).into());
            };
            let target = preflight::parse_target_text(text, &field)?;
            Ok((text.trim().to_owned(), target))
        })
        .collect()
}

/// Resolves a target to a real record; `Ok(Err(demo_available))` when none matches.
pub(super) fn resolve_real(
    conn: &Connection,
    target: &Target,
) -> Result<Result<preflight::Resolution, bool>, ToolError> {
    match preflight::resolve(conn, target, false) {
        Ok(resolution) => Ok(Ok(resolution)),
        Err(preflight::PreflightError::DemoOnly) => Ok(Err(true)),
        Err(preflight::PreflightError::NoMatch) => Ok(Err(false)),
        Err(error) => Err(error.into()),
    }
}

/// `quick_watch`: the state of up to [`QUICK_WATCH_MAX`] tools now; nothing stored.
///
/// # Errors
/// `validation` naming `tools` or `tools[i]`; `internal` when the store fails.
async fn quick_watch(ctx: Ctx, input: QuickWatch) -> Result<QuickWatched, HelpError> {
    let targets = parse_tools(&input.tools, QUICK_WATCH_MAX, true)?;
    let now = ctx.kernel.clock.now_ms();
    let items = ctx
        .read(move |conn| {
            targets
                .iter()
                .enumerate()
                .map(|(index, (text, target))| watch_item(conn, index, text, target, now))
                .collect::<Result<Vec<WatchItem>, ToolError>>()
        })
        .await?;
    let listed = items
        .iter()
        .filter(|item| matches!(item, WatchItem::Listed(_)))
        .count();
    Ok(QuickWatched {
        count: items.len(),
        listed,
        not_listed: items.len() - listed,
        items,
        checked_at: rfc3339_ms(now),
        stored: false,
        note: "Nothing was stored. To have up to 200 tools checked daily, save them with set_watchlist. reliability_reports are agents' own reports after use, not a safety or trust check.",
    })
}

/// One quick_watch target's state at `now` (Unix ms).
///
/// # Errors
/// `internal` when the store fails.
fn watch_item(
    conn: &Connection,
    index: usize,
    text: &str,
    target: &Target,
    now: i64,
) -> Result<WatchItem, ToolError> {
    match resolve_real(conn, target)? {
        Ok(resolution) => {
            let resource = resolution.resource;
            let seen = Seen::of(conn, &resource)?;
            let reliability_reports =
                outcomes::reliability_reports_at(conn, &resource.resource_id, now)?;
            Ok(WatchItem::Listed(Box::new(ListedItem {
                index,
                target: text.to_owned(),
                status: "listed",
                matched_by: resolution.matched_by,
                archived_upstream: resource.archived,
                risky: resource.risky,
                released_at: resource.released_ms.map(rfc3339_ms),
                released_at_source: resource.released_source,
                outcome_reports: OutcomeCounts {
                    reports: seen.reports,
                    broke: seen.broke,
                },
                reliability_reports,
                resource_id: resource.resource_id,
                title: resource.title,
                version: resource.version,
            })))
        }
        Err(demo_available) => Ok(WatchItem::NotListed {
            index,
            target: text.to_owned(),
            status: "not_listed",
            resource_id: None,
            demo_available,
            message: "No real record matches this target. Try discover_resources, or register it with register_resource.",
        }),
    }
}

fn list_sha256(targets: &[(String, Target)]) -> String {
    let joined = targets
        .iter()
        .map(|(text, _)| text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    hex::encode(Sha256::digest(joined.as_bytes()))
}

pub(super) fn load_seen(
    conn: &Connection,
    agent_id: &str,
) -> Result<Vec<(String, Seen)>, ToolError> {
    Ok(super::store::seen_items(conn, agent_id)?)
}

pub(super) fn store_item(
    conn: &Connection,
    agent_id: &str,
    position: usize,
    target: &str,
    resolved: Option<(&str, &Seen)>,
) -> Result<(), ToolError> {
    let position = i64::try_from(position).map_err(ToolError::internal_from)?;
    super::store::upsert_item(conn, agent_id, position, target, resolved)?;
    Ok(())
}

/// The real record each of `targets` resolves to (`None`: not listed yet).
///
/// # Errors
/// `validation` naming `tools[i]` when it names the same record as an earlier target.
fn resolve_all(
    conn: &Connection,
    targets: &[(String, Target)],
) -> Result<Vec<Option<preflight::Resolution>>, ToolError> {
    let mut resolved: Vec<Option<preflight::Resolution>> = Vec::with_capacity(targets.len());
    for (index, (_, target)) in targets.iter().enumerate() {
        let found = resolve_real(conn, target)?.ok();
        if let Some(found) = &found {
            let id = &found.resource.resource_id;
            if let Some(first) = resolved.iter().position(|earlier| {
                earlier
                    .as_ref()
                    .is_some_and(|earlier| earlier.resource.resource_id == *id)
            }) {
                return Err(HelpError::SameRecord {
                    index,
                    first,
                    resource_id: id.clone(),
                }
                .into());
            }
        }
        resolved.push(found);
    }
    Ok(resolved)
}

/// `set_watchlist`: saves the signed agent's list of up to [`WATCHLIST_MAX`] tools (replacing
/// the old one), for the daily check.
///
/// # Errors
/// `validation` naming `tools` or `tools[i]` (nothing stored); the signature refusals;
/// `internal` when the store fails.
async fn set_watchlist(ctx: Ctx, input: SetWatchlist) -> Result<WatchlistSaved, HelpError> {
    let targets = parse_tools(&input.tools, WATCHLIST_MAX, false)?;
    let digest = list_sha256(&targets);
    // Resolve everything first, on a read connection (up to 200 lookups, some of them
    // scans, must not hold the single writer): a refusal (a repeated record) leaves the
    // old list.
    let to_resolve = targets.clone();
    let resolved = ctx.read(move |conn| resolve_all(conn, &to_resolve)).await?;
    let saved = ctx.signed_write(move |txn, signed| -> Result<_, HelpError> {
        let agent_id = signed.agent_id.to_string();
        // What the daily check saw of a record stays when the record stays on the list, so
        // that re-saving a list never hides a change.
        let previous = load_seen(txn.conn(), &agent_id)?;
        super::store::clear_items(txn.conn(), &agent_id)?;
        let mut items = Vec::with_capacity(targets.len());
        for (index, ((text, _), found)) in targets.iter().zip(&resolved).enumerate() {
            match found {
                Some(found) => {
                    let id = found.resource.resource_id.as_str();
                    let seen = match previous.iter().find(|(known, _)| known == id) {
                        Some((_, seen)) => seen.clone(),
                        None => Seen::of(txn.conn(), &found.resource)?,
                    };
                    store_item(txn.conn(), &agent_id, index, text, Some((id, &seen)))?;
                    items.push(SavedItem { index, target: text.clone(), status: "listed", resource_id: Some(id.to_owned()) });
                }
                None => {
                    store_item(txn.conn(), &agent_id, index, text, None)?;
                    items.push(SavedItem { index, target: text.clone(), status: "not_listed", resource_id: None });
                }
            }
        }
        let listed = resolved.iter().filter(|found| found.is_some()).count();
        let count = i64::try_from(targets.len()).map_err(ToolError::internal_from)?;
        super::store::upsert_watchlist(txn.conn(), &agent_id, count, txn.now_ms())?;
        let owner: Option<String> = crate::identity::store::owner_of(txn.conn(), &agent_id)?;
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::WatchlistSet {
                agent_id: agent_id.clone(),
                items: count,
                listed,
                not_listed: targets.len() - listed,
                list_sha256: digest.clone(),
            },
        )?;
        Ok(WatchlistSaved {
            agent_id,
            items,
            count: targets.len(),
            listed,
            not_listed: targets.len() - listed,
            max: WATCHLIST_MAX,
            checked: "daily (once per UTC day)",
            alerts_to: if owner.is_some() { "owner" } else { "history" },
            alerts_note: if owner.is_some() {
                "Changes are mailed to your owner and recorded as watchlist.alerted in get_history."
            } else {
                "Changes are recorded as watchlist.alerted in your get_history. Link an owner (connect_with_code) to have them mailed to your person."
            },
            event_seq: event.seq,
        })
    });
    saved.await
}
