//! The first import of the bundled catalog, resumable (docs/decisions.md 170).
//!
//! A fresh hub loads the bundled snapshot (`import::BUNDLED`, then the demo fixtures) and marks
//! the `bundled_catalog` milestone in the transaction that stores the demo fixtures, its last
//! step. A hub killed before that mark finds at its next start a log that begins with the
//! bundled import and no mark: it imports the snapshot again, which skips every row already
//! stored as it is (`record_hash`) and adds the rest, then marks it. A catalog that did not
//! come from the bundled import (an operator's own `karmadue import` on a hub started with
//! `--bundled-catalog false`) is left alone, as before.

use kd_core::db::Connection;
use serde_json::Value;

pub use super::import::BUNDLED_ROWS;
use super::import::{BUNDLED, ImportReport, import_lines};
use crate::catalog::events::ResourceImported;
use crate::events::EventPayload;
use kd_kernel::Kernel;
use kd_kernel::error::ToolError;

/// The milestone that marks the bundled catalog's first import done.
pub const MILESTONE: &str = "bundled_catalog";

/// How a start dealt with the bundled catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstImport {
    /// The catalog was empty: the snapshot was loaded whole.
    Loaded,
    /// An earlier start was stopped during the import: this one finished it.
    Resumed,
    /// The import had finished before milestones were recorded (a database made by an
    /// earlier version): only the mark was added.
    FoundComplete,
}

impl FirstImport {
    /// The milestone's `detail`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loaded => "loaded",
            Self::Resumed => "resumed",
            Self::FoundComplete => "found complete",
        }
    }
}

/// What a start's bundled import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundledLoad {
    /// Loaded, resumed, or found complete.
    pub how: FirstImport,
    /// The rows read, written and skipped as unchanged (empty when found complete).
    pub report: ImportReport,
}

/// What the store says about the first import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Marked done.
    Done,
    /// No resource yet.
    Empty,
    /// The log begins with the bundled import and there is no mark.
    Unmarked {
        /// Its last step (the demo fixtures) is stored.
        demo_stored: bool,
    },
    /// The catalog came from elsewhere.
    NotBundled,
}

fn state(conn: &Connection) -> Result<State, ToolError> {
    if milestone(conn, MILESTONE)?.is_some() {
        return Ok(State::Done);
    }
    if super::model::resource_count(conn)? == 0 {
        return Ok(State::Empty);
    }
    let first = crate::ledger::store::first_row(conn)?;
    let bundled = first.is_some_and(|(kind, actor, payload)| {
        let file = serde_json::from_str::<Value>(&payload)
            .ok()
            .and_then(|payload| payload["file"].as_str().map(str::to_owned));
        kind == <ResourceImported as EventPayload>::KIND
            && actor == "hub"
            && file.as_deref() == Some(BUNDLED[0].0)
    });
    if !bundled {
        return Ok(State::NotBundled);
    }
    Ok(State::Unmarked {
        demo_stored: super::demo::stored(conn)?,
    })
}

/// When milestone `name` was marked and how, if it was.
///
/// # Errors
/// `internal` when the store fails.
pub fn milestone(conn: &Connection, name: &str) -> Result<Option<(i64, String)>, ToolError> {
    Ok(super::store::milestone(conn, name)?)
}

/// Loads the bundled snapshot and the demo fixtures on first start, or finishes a first
/// import an earlier start began and did not mark done. `None` when there was nothing to do.
///
/// # Errors
/// `internal` when a bundled file cannot be read or the store fails.
pub async fn load_bundled(hub: &Kernel) -> Result<Option<BundledLoad>, ToolError> {
    load_bundled_with(hub, &mut |_| {}).await
}

/// [`load_bundled`], telling `progress` how many of the [`BUNDLED_ROWS`] rows have been read
/// as it goes (what the first start's progress bar shows).
///
/// # Errors
/// `internal` when a bundled file cannot be read or the store fails.
pub async fn load_bundled_with(
    hub: &Kernel,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Option<BundledLoad>, ToolError> {
    let how = match hub.store.read(state).await? {
        State::Done | State::NotBundled => return Ok(None),
        State::Empty => FirstImport::Loaded,
        State::Unmarked { demo_stored: true } => FirstImport::FoundComplete,
        State::Unmarked { demo_stored: false } => {
            tracing::warn!(
                "the first import of the bundled catalog was interrupted; resuming it (rows already stored are skipped)"
            );
            FirstImport::Resumed
        }
    };
    let mut total = ImportReport::default();
    if how != FirstImport::FoundComplete {
        for (name, bytes) in BUNDLED {
            let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(bytes));
            let before = total.lines;
            let report = import_lines(hub, name, reader, |lines| progress(before + lines)).await?;
            total.lines += report.lines;
            total.imported += report.imported;
            total.unchanged += report.unchanged;
            total.bad.extend(report.bad);
        }
    }
    let now = hub.clock.now_ms();
    hub.store
        .write(move |txn| -> Result<(), ToolError> {
            super::demo::store_all(txn, now)?;
            super::store::mark_milestone(txn.conn(), MILESTONE, txn.now_ms(), how.as_str())?;
            Ok(())
        })
        .await??;
    tracing::info!(
        how = how.as_str(),
        imported = total.imported,
        unchanged = total.unchanged,
        bad = total.bad.len(),
        "the bundled catalog's first import is done"
    );
    Ok(Some(BundledLoad { how, report: total }))
}
