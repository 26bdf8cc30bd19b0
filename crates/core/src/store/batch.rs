//! The writer thread: takes every job waiting (up to [`MAX_BATCH`]), runs each in its own
//! SAVEPOINT, extends the transparency log over the rows kept, and commits the batch once
//! (group commit, DESIGN rule 8).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use super::{Finish, Job, MAX_BATCH, StoreMetrics, WriteTxn};
use crate::clock::Clock;
use crate::db::{Backend, Connection, Location, dialect};
use crate::eventlog::ChainHead;

/// Runs the writer until every sender is gone.
pub(super) fn writer_loop(
    mut conn: Connection,
    location: &Location,
    mut head: ChainHead,
    receiver: mpsc::Receiver<Job>,
    clock: Arc<dyn Clock>,
    metrics: &StoreMetrics,
    transparency: &AtomicBool,
) {
    let mut epoch = 0;
    // The tree's right edge, kept across batches while the log is on (decision 272).
    let mut tree = crate::tlog::store::WriterTree::default();
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if !conn.is_usable() {
            // The server went away (a PostgreSQL restart): reconnect, and trust nothing the
            // projections learned before.
            match Connection::open(location) {
                Ok(fresh) => conn = fresh,
                Err(error) => tracing::error!(%error, "the writer could not reconnect"),
            }
            epoch += 1;
        }
        let committed_head = head.clone();
        let on = transparency.load(Ordering::Relaxed);
        if !on {
            tree.forget();
        }
        let (finishes, result) = run_batch(
            &conn,
            &mut head,
            &mut epoch,
            batch,
            clock.as_ref(),
            metrics,
            on.then_some(&mut tree),
        );
        if result.is_err() {
            // The edge may name hashes the rollback removed.
            tree.forget();
            let _ = conn.execute_batch("ROLLBACK");
            head = ChainHead::load(&conn).unwrap_or(committed_head);
            // What the batch's jobs taught in-memory projections was rolled back with it.
            epoch += 1;
        }
        for (finish, own) in finishes {
            finish(match (&result, own) {
                (Err(error), _) => Err(error.clone()),
                (Ok(()), Some(error)) => Err(error),
                (Ok(()), None) => Ok(()),
            });
        }
    }
}

/// Each job's finish, with the error of a job whose own savepoint could not be kept.
type Finished = Vec<(Finish, Option<String>)>;

fn run_batch(
    conn: &Connection,
    head: &mut ChainHead,
    epoch: &mut u64,
    batch: Vec<Job>,
    clock: &dyn Clock,
    metrics: &StoreMetrics,
    tree: Option<&mut crate::tlog::store::WriterTree>,
) -> (Finished, Result<(), String>) {
    let mut finishes = Vec::with_capacity(batch.len());
    // The rows of the jobs kept, in seq order: the tree's new leaves.
    let mut appended = Vec::new();
    let size = batch.len();
    let mut kept: u64 = 0;
    let slot = crate::tlog::receipt::BatchSlot::default();
    if let Err(error) = dialect::begin_write(conn) {
        tracing::error!(%error, "could not begin a write batch");
        // Dropping the jobs unrun tells each caller the store failed.
        return (finishes, Err(error.to_string()));
    }
    // Another process (an import, a second hub on the same database) may have appended since
    // the last batch: the head is read inside the write lock, never trusted from memory.
    match ChainHead::load(conn) {
        Ok(current) => {
            if current != *head {
                *epoch += 1;
            }
            *head = current;
        }
        Err(error) => {
            return (finishes, Err(error.to_string()));
        }
    }
    for job in batch {
        let before = head.clone();
        if let Err(error) = conn.execute_batch("SAVEPOINT job") {
            tracing::error!(%error, "savepoint failed");
            return (finishes, Err(error.to_string()));
        }
        let mut txn = WriteTxn {
            conn,
            head: &mut *head,
            now_ms: clock.now_ms(),
            appended: Vec::new(),
            epoch: *epoch,
            batch: &slot,
            auth_method: None,
        };
        let (ok, finish) = job(&mut txn);
        let rows = std::mem::take(&mut txn.appended);
        let mut own = None;
        let released = if ok {
            conn.execute_batch("RELEASE SAVEPOINT job")
        } else {
            conn.execute_batch("ROLLBACK TO SAVEPOINT job; RELEASE SAVEPOINT job")
        };
        match released {
            Ok(()) if ok => {
                kept += 1;
                appended.extend(rows);
            }
            Ok(()) => *head = before,
            Err(error) => {
                // A job that swallowed a failed statement leaves a PostgreSQL transaction
                // aborted: undo that job alone and fail it; the batch goes on.
                *head = before;
                let undone = conn.execute_batch("ROLLBACK TO SAVEPOINT job; RELEASE SAVEPOINT job");
                if undone.is_err() || conn.backend() == Backend::Sqlite {
                    tracing::error!(%error, "savepoint release failed");
                    finishes.push((finish, None));
                    return (finishes, Err(error.to_string()));
                }
                tracing::error!(%error, "a write job left its transaction aborted; undone");
                own = Some(error.to_string());
            }
        }
        finishes.push((finish, own));
    }
    // The transparency log covers every row committed with it (kd_core::tlog).
    let extended = tree.map(|tree| tree.extend(conn, &appended, head.seq));
    match extended {
        Some(Err(error)) => {
            tracing::error!(%error, "extending the transparency log failed");
            return (finishes, Err(error.to_string()));
        }
        // The batch's rows, for its jobs' receipts (signed later, once, off this thread).
        Some(Ok(_)) if !appended.is_empty() => {
            let first_seq = appended[0].seq;
            let rows = appended.into_iter().map(|row| row.row_hash).collect();
            let batch = crate::tlog::receipt::Batch::new(first_seq, rows, clock.now_ms());
            let _ = slot.set(std::sync::Arc::new(batch));
        }
        _ => {}
    }
    (finishes, commit_batch(conn, metrics, kept, size))
}

/// Commits the writer's batch of `size` jobs, `kept` of them kept, counting it.
fn commit_batch(
    conn: &Connection,
    metrics: &StoreMetrics,
    kept: u64,
    size: usize,
) -> Result<(), String> {
    let commit = std::time::Instant::now();
    match conn.execute_batch("COMMIT") {
        Ok(()) => {
            metrics
                .commit_seconds
                .record(commit.elapsed().as_secs_f64());
            metrics.batches.increment(1);
            metrics.jobs.increment(kept);
            metrics.batch_size.record(size as f64);
            Ok(())
        }
        Err(error) => {
            tracing::error!(%error, "batch commit failed");
            Err(error.to_string())
        }
    }
}
