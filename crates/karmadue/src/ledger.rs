//! The signed daily log head and the public ledger folder (spec "Signed log head";
//! DECISIONS 8; `kd_core::heads` keeps the anchors).
//!
//! - [`publish`] publishes the day's head when it is due (in the writer's transaction) and
//!   then writes every head that has no file yet to `<ledger>/heads/YYYY-MM-DD.json`.
//! - [`run_schedule`] calls it at start, at every UTC midnight, and every
//!   [`SCHEDULE_TICK`] in between (so an empty log gets its first head soon after its first
//!   event); a day that has a head is never published again.
//! - [`live_head`] is what `GET /.well-known/kd-log-head.json` (and the public-api copy)
//!   serves: the newest anchor, with `jwks_url`, `checkpoint` (the transparency log's signed
//!   checkpoint of the same seq, or null) and `previous`, the up to 30 anchors before it.
//!
//! The ledger folder is laid out as the public ledger repository is: `heads/` with one file
//! per day, `scripts/verify_head.py` (the verifier this project ships, refreshed when this
//! version's differs), and a `README.md` (written once). A head file is written once and never
//! overwritten: a file that differs from the stored head is left as it is and reported, for the
//! operator to look at (the folder is what they commit to a public repository).

pub mod checkpoints;
pub mod store;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kd_core::heads::{self, LogHead};
use serde_json::Value;

use kd_kernel::Kernel;
use kd_kernel::error::ToolError;

/// How often the scheduler looks for a due head between midnights (real time).
pub const SCHEDULE_TICK: Duration = Duration::from_secs(600);

/// The verifier shipped into the ledger folder as `scripts/verify_head.py`.
pub const VERIFIER: &str = include_str!("../../../scripts/verify_head.py");

const LEDGER_README: &str = "# KarmaDue ledger\n\nOne signed head of the hub's global event log per UTC day, written by the hub: `heads/YYYY-MM-DD.json`.\nEach file holds `signed_text` (kd-log-head-v1, the date, the latest event's seq and its row_hash, joined by LF)\nand `signature` (Ed25519 by kd-passport-1, base64url). Committing this folder to a public git repository on a\nschedule makes the commit time an independent timestamp.\n\nVerify with Python 3 and `cryptography`:\n\n    python3 scripts/verify_head.py --jwks https://<hub>/.well-known/jwks.json --live https://<hub>/.well-known/kd-log-head.json\n\nIt rebuilds each signed_text from the fields, checks each signature, checks that seq never goes down, and\nthat today's file matches the live head.\n";

/// What one [`publish`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PublishReport {
    /// Today's head (published now or earlier), or `None` while the log is empty.
    pub today: Option<LogHead>,
    /// Head files written by this call (days).
    pub written: Vec<String>,
    /// Head files that exist but differ from the stored head (days); left untouched.
    pub differing: Vec<String>,
    /// The newest head's day when it is after today's: the clock was (or is) wrong, and no
    /// head is published until that day comes.
    pub ahead: Option<String>,
}

/// Publishes today's head when due, then writes the head files the ledger folder lacks.
///
/// # Errors
/// `internal` when the store fails or the ledger folder cannot be written.
pub async fn publish(hub: &Kernel) -> Result<PublishReport, ToolError> {
    let key = hub.passport_key.clone();
    let origin = checkpoints::origin(hub);
    let transparency = hub.config.transparency;
    let today = hub
        .store
        .write(move |txn| {
            let head = heads::publish_due(txn, &key)?;
            // A checkpoint of the head's seq, so the live head can name it (decision 212).
            let now = txn.now_ms();
            if transparency {
                kd_core::tlog::store::publish(txn.conn(), &key, &origin, now)?;
            }
            Ok::<_, kd_core::store::StoreError>(head)
        })
        .await
        .map_err(ToolError::internal)?
        .map_err(ToolError::internal)?;
    let all = hub
        .store
        .read(|conn| heads::since(conn, "").map_err(ToolError::internal))
        .await?;
    let today_day = kd_core::clock::utc_day(hub.clock.now_ms());
    let ahead = all
        .last()
        .filter(|newest| newest.day > today_day)
        .map(|newest| newest.day.clone());
    let dir = hub.config.ledger_path();
    let (written, differing) = tokio::task::spawn_blocking(move || write_ledger(&dir, &all))
        .await
        .map_err(ToolError::internal)?
        .map_err(ToolError::internal)?;
    Ok(PublishReport {
        today,
        written,
        differing,
        ahead,
    })
}

/// Publishes at start, at each UTC midnight and every [`SCHEDULE_TICK`]; logs what it did.
pub async fn run_schedule(hub: Arc<Kernel>) {
    loop {
        match publish(&hub).await {
            Ok(report) => {
                for day in &report.written {
                    tracing::info!(%day, "wrote the signed log head file");
                }
                for day in &report.differing {
                    tracing::error!(%day, "a head file in the ledger folder differs from the signed head; left as it is");
                }
                if let Some(day) = &report.ahead {
                    tracing::error!(newest = %day, "the newest signed log head is dated after today: the clock was or is wrong; no head is published until that day");
                }
            }
            Err(error) => tracing::error!(cause = ?error.cause, "publishing the log head failed"),
        }
        tokio::time::sleep(crate::schedule::until_next_run(
            hub.clock.now_ms(),
            SCHEDULE_TICK,
        ))
        .await;
    }
}

/// The live head: the newest anchor as [`LogHead::to_json`] shows it, plus `jwks_url` (the
/// JWKS holding `key_id`) and `previous` (the up to [`heads::PREVIOUS_MAX`] anchors before it,
/// newest first). `None` until the first head is published.
///
/// # Errors
/// `internal` when the store fails.
pub async fn live_head(hub: &Kernel) -> Result<Option<Value>, ToolError> {
    let recent = hub
        .store
        .read(|conn| heads::latest(conn, heads::PREVIOUS_MAX + 1).map_err(ToolError::internal))
        .await?;
    let Some((current, previous)) = recent.split_first() else {
        return Ok(None);
    };
    let seq = u64::try_from(current.seq).unwrap_or(0);
    let checkpoint = hub
        .store
        .read(move |conn| {
            kd_core::tlog::store::checkpoint_of(conn, seq).map_err(ToolError::internal)
        })
        .await?;
    let mut live = current.to_json();
    // Not part of the signed kd-log-head-v1 text: the checkpoint of the same seq, when the
    // hub signed one (decision 212).
    live["checkpoint"] =
        checkpoint.map_or(Value::Null, |checkpoint| Value::String(checkpoint.note));
    live["jwks_url"] = Value::String(format!("{}/.well-known/jwks.json", hub.config.public_url));
    live["previous"] = Value::Array(previous.iter().map(LogHead::to_json).collect());
    Ok(Some(live))
}

/// The text of a head file: the anchor's JSON, pretty-printed, with a final LF.
pub fn head_file_text(head: &LogHead) -> String {
    let mut text = serde_json::to_string_pretty(&head.to_json()).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes the heads that have no file yet, the verifier when it is missing or differs, and the
/// README when it is missing; before the first head, nothing (not even the folder). Returns (days written, days whose file differs).
fn write_ledger(dir: &Path, all: &[LogHead]) -> std::io::Result<(Vec<String>, Vec<String>)> {
    let mut written = Vec::new();
    let mut differing = Vec::new();
    if all.is_empty() {
        // Nothing to publish yet: the folder is made with the first head.
        return Ok((written, differing));
    }
    let heads_dir = dir.join("heads");
    // Owner-only, as everything the hub writes (docs/decisions.md 491); publishing the
    // folder is the operator's part (DECISIONS 8), and git keeps no modes but the x bit.
    crate::data_files::make_private_dir(dir)?;
    crate::data_files::make_private_dir(&heads_dir)?;
    for head in all {
        let path = heads_dir.join(format!("{}.json", head.day));
        let text = head_file_text(head);
        match std::fs::read(&path) {
            Ok(existing) if existing == text.as_bytes() => {}
            Ok(_) => differing.push(head.day.clone()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if write_new_file(&path, text.as_bytes())? {
                    written.push(head.day.clone());
                }
            }
            Err(error) => return Err(error),
        }
    }
    let verifier = dir.join("scripts").join("verify_head.py");
    if std::fs::read(&verifier).ok().as_deref() != Some(VERIFIER.as_bytes()) {
        crate::data_files::make_private_dir(&dir.join("scripts"))?;
        replace_file(&verifier, VERIFIER.as_bytes())?;
    }
    let readme = dir.join("README.md");
    if !readme.exists() {
        write_new_file(&readme, LEDGER_README.as_bytes())?;
    }
    Ok((written, differing))
}

/// Writes `bytes` to a temporary file of its own beside `path` and syncs it, then links it in
/// as `path` only if `path` does not exist yet (another process may have written it
/// meanwhile: what is there stays), and syncs the folder. A reader (or a `git add`) never sees
/// half a file, and a head file is never replaced. Returns whether this call wrote it.
fn write_new_file(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let temporary = temporary_beside(path);
    let result =
        write_synced(&temporary, bytes).and_then(|()| match std::fs::hard_link(&temporary, path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(error) => Err(error),
        });
    let _ = std::fs::remove_file(&temporary);
    let linked = result?;
    sync_folder(path)?;
    Ok(linked)
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and renames it over `path`
/// (for the hub's own files in the folder: the verifier and the README).
fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = temporary_beside(path);
    let result = write_synced(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result?;
    sync_folder(path)
}

/// A temporary name beside `path` that no other writer uses: the process id and a counter.
fn temporary_beside(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Syncs the folder holding `path`, so the new name itself is durable.
fn sync_folder(path: &Path) -> std::io::Result<()> {
    match path.parent() {
        Some(folder) => std::fs::File::open(folder)?.sync_all(),
        None => Ok(()),
    }
}
