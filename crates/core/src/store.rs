//! The store: one SQLite database in WAL mode (DESIGN rule 7), a small pool of read
//! connections, and ONE writer thread that commits many requests per fsync (group commit,
//! DESIGN rule 8).
//!
//! A write is a closure that runs inside the writer's transaction: it checks what it needs,
//! appends its events ([`WriteTxn::append`]) and updates its projections. The writer takes
//! every job waiting in its queue (up to [`MAX_BATCH`]), runs each inside its own SAVEPOINT,
//! and commits the batch once. A job that returns `Err` is rolled back to its savepoint, so a
//! refusal leaves no trace and does not disturb the other jobs of the batch; the chain head is
//! restored with it, so the log stays linear and gap-free.
//!
//! The writer counts what it commits into [`StoreMetrics`]: handles of the `metrics` facade that
//! the hub registers with its own registry (no global recorder; a store opened without them
//! counts nothing).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use rusqlite::Connection;

use crate::clock::Clock;
use crate::eventlog::{self, ChainHead, EventRow, NewEvent};

/// Most jobs committed together in one transaction.
pub const MAX_BATCH: usize = 512;

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_init.sql"),
    include_str!("../migrations/0002_catalog.sql"),
    include_str!("../migrations/0003_outcomes.sql"),
    include_str!("../migrations/0004_people.sql"),
    include_str!("../migrations/0005_standing.sql"),
    include_str!("../migrations/0006_admission.sql"),
    include_str!("../migrations/0007_help.sql"),
    include_str!("../migrations/0008_read_indexes.sql"),
    include_str!("../migrations/0009_names_in_memory.sql"),
    include_str!("../migrations/0010_log_heads.sql"),
    include_str!("../migrations/0011_forum.sql"),
    include_str!("../migrations/0012_ronin.sql"),
];

/// Store failures. Messages are for logs; callers present them as `internal`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The writer thread is gone (the store is shutting down).
    #[error("the store is shutting down")]
    Closed,
    /// A caller broke an invariant of the store (a bug, not bad input).
    #[error("invalid store use: {0}")]
    Invalid(String),
    /// A blocking task panicked or was cancelled.
    #[error("store task failed: {0}")]
    Task(String),
}

/// The open store. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    clock: Arc<dyn Clock>,
}

/// The transaction a write job runs in. It appends events and exposes the connection for
/// projection updates. Nothing it does is visible to readers until the batch commits.
pub struct WriteTxn<'c> {
    conn: &'c Connection,
    head: &'c mut ChainHead,
    now_ms: i64,
    appended: Vec<EventRow>,
    epoch: u64,
}

impl<'c> WriteTxn<'c> {
    /// The connection, inside the open transaction.
    pub fn conn(&self) -> &Connection {
        self.conn
    }

    /// The time this job started, Unix milliseconds (from the store's clock).
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Appends one event to the global log, linked to the previous row.
    ///
    /// # Errors
    /// [`StoreError`] when the insert fails; the job should return it so its savepoint is
    /// rolled back.
    pub fn append(&mut self, event: NewEvent) -> Result<EventRow, StoreError> {
        let row = eventlog::append(self.conn, self.head, self.now_ms, event)?;
        self.appended.push(row.clone());
        Ok(row)
    }

    /// The chain head as this job sees it: the last row committed or appended so far in this
    /// transaction (seq 0 and [`eventlog::GENESIS_HASH`] for an empty log).
    pub fn head(&self) -> &ChainHead {
        self.head
    }

    /// The `row_hash` the next [`WriteTxn::append`] links to: the head of the chain inside this
    /// transaction ([`eventlog::GENESIS_HASH`] for an empty log). A record that must name its
    /// own row's `prev_hash` before it is appended (a forum post's kd-forum-v2 frame) reads it
    /// here; the appended row's `prev_hash` is this value.
    pub fn prev_hash(&self) -> &str {
        &self.head.row_hash
    }

    /// The events this job has appended so far.
    pub fn appended(&self) -> &[EventRow] {
        &self.appended
    }

    /// The writer's epoch: how many batches so far either found the log grown by another
    /// process (an import, a second hub on the same file) since this writer's previous batch,
    /// or failed and were rolled back. A projection a hub keeps in memory and updates only
    /// from its own writes cannot trust what it learned before the epoch changed.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
}

/// What the writer counts, as `metrics` handles the owner registered (DESIGN rule 10). The
/// default counts nothing.
#[derive(Clone, Debug)]
pub struct StoreMetrics {
    /// Batches committed.
    pub batches: metrics::Counter,
    /// Jobs committed (jobs whose savepoint was kept in a committed batch).
    pub jobs: metrics::Counter,
    /// Jobs per batch, refused ones included.
    pub batch_size: metrics::Histogram,
    /// Seconds the batch's `COMMIT` (its one fsync) took.
    pub commit_seconds: metrics::Histogram,
}

impl Default for StoreMetrics {
    fn default() -> Self {
        Self {
            batches: metrics::Counter::noop(),
            jobs: metrics::Counter::noop(),
            batch_size: metrics::Histogram::noop(),
            commit_seconds: metrics::Histogram::noop(),
        }
    }
}

type Finish = Box<dyn FnOnce(Result<(), String>) + Send>;
type Job = Box<dyn FnOnce(&mut WriteTxn<'_>) -> (bool, Finish) + Send>;

impl Store {
    /// Opens (creating if needed) the database at `path`, applies migrations, and starts the
    /// writer thread.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the file cannot be opened or migrated.
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        Self::open_with_metrics(path, clock, StoreMetrics::default())
    }

    /// [`Store::open`] with the writer counting into `metrics`.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_with_metrics(
        path: &Path,
        clock: Arc<dyn Clock>,
        metrics: StoreMetrics,
    ) -> Result<Self, StoreError> {
        let mut writer = open_connection(path)?;
        migrate(&mut writer)?;
        let head = ChainHead::load(&writer)?;
        let (sender, receiver) = mpsc::channel::<Job>();
        let writer_clock = Arc::clone(&clock);
        std::thread::Builder::new()
            .name("kd-store-writer".into())
            .spawn(move || writer_loop(writer, head, receiver, writer_clock, &metrics))
            .map_err(|error| StoreError::Task(error.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                readers: Mutex::new(Vec::new()),
                jobs: Mutex::new(Some(sender)),
                clock,
            }),
        })
    }

    /// The clock the store stamps events with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `read` on a pooled read connection, off the async threads, inside one read
    /// transaction: every query of `read` sees the same snapshot of the store (a batch the
    /// writer commits meanwhile is seen by all of them or by none).
    ///
    /// # Errors
    /// Whatever `read` returns, or [`StoreError`] (converted into `E`) when no connection can be
    /// had.
    pub async fn read<T, E, F>(&self, read: F) -> Result<T, E>
    where
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.read_blocking(read))
            .await
            .map_err(|error| E::from(StoreError::Task(error.to_string())))?
    }

    /// [`Store::read`] for code that is already on a blocking thread (CLI commands, tests).
    ///
    /// # Errors
    /// As [`Store::read`].
    pub fn read_blocking<T, E, F>(&self, read: F) -> Result<T, E>
    where
        F: FnOnce(&Connection) -> Result<T, E>,
        E: From<StoreError>,
    {
        let pooled = self.inner.readers.lock().map_err(|_| poisoned())?.pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => open_connection(&self.inner.path)?,
        };
        // One snapshot for the whole closure (SQLite takes the WAL read lock at the first
        // query and keeps it until COMMIT), instead of one per statement.
        conn.prepare_cached("BEGIN DEFERRED")
            .and_then(|mut begin| begin.execute([]))
            .map_err(StoreError::from)?;
        let result = read(&conn);
        let ended = conn
            .prepare_cached("COMMIT")
            .and_then(|mut commit| commit.execute([]));
        if let Err(error) = ended {
            tracing::error!(%error, "could not end a read transaction");
        }
        // A read transaction has nothing to commit; a connection that could not end it (or
        // whose closure left one open) is dropped, never pooled.
        if !conn.is_autocommit() {
            return result;
        }
        if let Ok(mut readers) = self.inner.readers.lock() {
            readers.push(conn);
        }
        result
    }

    /// Runs `write` inside the writer's transaction and waits until its batch is durable.
    ///
    /// Returns `Ok(Ok(value))` once committed, `Ok(Err(refusal))` when the job refused (its
    /// changes were rolled back; nothing was written), and `Err(StoreError)` when the commit
    /// itself failed.
    ///
    /// # Errors
    /// [`StoreError::Closed`] when the writer is gone; [`StoreError::Task`] when the commit
    /// failed.
    pub async fn write<T, E, F>(&self, write: F) -> Result<Result<T, E>, StoreError>
    where
        F: FnOnce(&mut WriteTxn<'_>) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: Send + 'static,
    {
        let (done_sender, done_receiver) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |txn: &mut WriteTxn<'_>| {
            let result = write(txn);
            let ok = result.is_ok();
            let finish: Finish = Box::new(move |committed: Result<(), String>| {
                let _ = done_sender.send(committed.map(|()| result));
            });
            (ok, finish)
        });
        self.inner
            .jobs
            .lock()
            .map_err(|_| poisoned())?
            .as_ref()
            .ok_or(StoreError::Closed)?
            .send(job)
            .map_err(|_| StoreError::Closed)?;
        match done_receiver.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(message)) => Err(StoreError::Task(message)),
            Err(_) => Err(StoreError::Closed),
        }
    }

    /// Stops accepting writes; the writer thread ends after the jobs already queued.
    pub fn close(&self) {
        if let Ok(mut jobs) = self.inner.jobs.lock() {
            jobs.take();
        }
    }
}

fn poisoned() -> StoreError {
    StoreError::Task("a store lock was poisoned".into())
}

fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: every committed batch is on disk before any of its callers hears "done".
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Savepoint sub-journals stay in memory: each job's savepoint otherwise spills to a temp file once it passes 64 KiB, costing the writer pwrites (measured by kd-bench).
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(conn)
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let applied: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let known = i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX);
    if applied > known {
        return Err(StoreError::Invalid(format!(
            "the database is at schema version {applied}, written by a newer karmadue; this one knows versions up to {known}"
        )));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let version =
            i64::try_from(index + 1).map_err(|_| StoreError::Invalid("migrations".into()))?;
        if version <= applied {
            continue;
        }
        let txn = conn.transaction()?;
        txn.execute_batch(sql)?;
        txn.pragma_update(None, "user_version", version)?;
        txn.commit()?;
    }
    Ok(())
}

fn writer_loop(
    conn: Connection,
    mut head: ChainHead,
    receiver: mpsc::Receiver<Job>,
    clock: Arc<dyn Clock>,
    metrics: &StoreMetrics,
) {
    let mut epoch = 0;
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let committed_head = head.clone();
        let outcome = run_batch(&conn, &mut head, &mut epoch, batch, clock.as_ref(), metrics);
        let (finishes, result) = outcome;
        if result.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
            head = ChainHead::load(&conn).unwrap_or(committed_head);
            // What the batch's jobs taught in-memory projections was rolled back with it.
            epoch += 1;
        }
        for finish in finishes {
            finish(result.clone());
        }
    }
}

fn run_batch(
    conn: &Connection,
    head: &mut ChainHead,
    epoch: &mut u64,
    batch: Vec<Job>,
    clock: &dyn Clock,
    metrics: &StoreMetrics,
) -> (Vec<Finish>, Result<(), String>) {
    let mut finishes = Vec::with_capacity(batch.len());
    let size = batch.len();
    let mut kept: u64 = 0;
    if let Err(error) = conn.execute_batch("BEGIN IMMEDIATE") {
        tracing::error!(%error, "could not begin a write batch");
        // Dropping the jobs unrun tells each caller the store failed.
        return (finishes, Err(error.to_string()));
    }
    // Another process (an import, a second hub on the same file) may have appended since the
    // last batch: the head is read inside the write lock, never trusted from memory.
    match ChainHead::load(conn) {
        Ok(current) => {
            if current != *head {
                *epoch += 1;
            }
            *head = current;
        }
        Err(error) => {
            let _ = conn.execute_batch("ROLLBACK");
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
        };
        let (ok, finish) = job(&mut txn);
        finishes.push(finish);
        kept += u64::from(ok);
        let end = if ok {
            "RELEASE job"
        } else {
            "ROLLBACK TO job; RELEASE job"
        };
        if !ok {
            *head = before;
        }
        if let Err(error) = conn.execute_batch(end) {
            tracing::error!(%error, "savepoint release failed");
            return (finishes, Err(error.to_string()));
        }
    }
    let commit = std::time::Instant::now();
    match conn.execute_batch("COMMIT") {
        Ok(()) => {
            metrics
                .commit_seconds
                .record(commit.elapsed().as_secs_f64());
            metrics.batches.increment(1);
            metrics.jobs.increment(kept);
            metrics.batch_size.record(size as f64);
            (finishes, Ok(()))
        }
        Err(error) => {
            tracing::error!(%error, "batch commit failed");
            (finishes, Err(error.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::eventlog::{count, verify_chain};

    fn event(kind: &'static str, n: i64) -> NewEvent {
        NewEvent {
            kind,
            actor: "hub".into(),
            subject: format!("s{n}"),
            payload: serde_json::json!({ "n": n, "text": "café\n" }),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_form_one_gap_free_chain() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            &dir.path().join("kd.sqlite"),
            Arc::new(ManualClock::new(1_000)),
        )
        .unwrap();
        let mut tasks = Vec::new();
        for n in 0..200 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                store
                    .write(move |txn| -> Result<i64, StoreError> {
                        Ok(txn.append(event("test.event", n))?.seq)
                    })
                    .await
                    .unwrap()
                    .unwrap()
            }));
        }
        let mut seqs = Vec::new();
        for task in tasks {
            seqs.push(task.await.unwrap());
        }
        seqs.sort_unstable();
        assert_eq!(seqs, (1..=200).collect::<Vec<_>>());
        let report = store.read_blocking(verify_chain).unwrap().unwrap();
        assert_eq!(report.rows, 200);
    }

    #[tokio::test]
    async fn a_refused_job_leaves_nothing_and_does_not_break_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            &dir.path().join("kd.sqlite"),
            Arc::new(ManualClock::new(1_000)),
        )
        .unwrap();
        let refused = store
            .write(|txn| -> Result<(), String> {
                txn.append(event("test.event", 1))
                    .map_err(|e| e.to_string())?;
                Err("refused after appending".into())
            })
            .await
            .unwrap();
        assert_eq!(refused, Err("refused after appending".to_owned()));
        let appended = store
            .write(|txn| -> Result<i64, StoreError> { Ok(txn.append(event("test.event", 2))?.seq) })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(appended, 1);
        assert_eq!(store.read_blocking(count).unwrap(), 1);
        assert!(store.read_blocking(verify_chain).unwrap().is_ok());
    }

    /// The epoch (`WriteTxn::epoch`) moves when another store appended to the file
    /// and when a batch failed, never for this writer's own batches.
    #[tokio::test]
    async fn the_epoch_moves_on_foreign_appends_and_failed_batches_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kd.sqlite");
        let store = Store::open(&path, Arc::new(ManualClock::new(1_000))).unwrap();
        let epoch = |store: &Store| {
            let store = store.clone();
            async move {
                store
                    .write(|txn| -> Result<(u64, i64), StoreError> {
                        let row = txn.append(event("test.event", 0))?;
                        Ok((txn.epoch(), row.seq))
                    })
                    .await
                    .unwrap()
                    .unwrap()
            }
        };
        let (start, seq) = epoch(&store).await;
        assert_eq!(seq, 1);
        assert_eq!(epoch(&store).await, (start, 2), "own batches keep it");
        let other = Store::open(&path, Arc::new(ManualClock::new(2_000))).unwrap();
        epoch(&other).await;
        assert_eq!(
            epoch(&store).await,
            (start + 1, 4),
            "another store appended"
        );
        // A job that ends its own savepoint makes the batch's RELEASE fail: the batch rolls
        // back, and the epoch moves.
        let failed = store
            .write(|txn| -> Result<(), StoreError> {
                txn.append(event("test.event", 9))?;
                txn.conn().execute_batch("RELEASE job")?;
                Ok(())
            })
            .await;
        assert!(failed.is_err(), "{failed:?}");
        assert_eq!(epoch(&store).await, (start + 2, 5));
        assert!(store.read_blocking(verify_chain).unwrap().is_ok());
    }

    #[tokio::test]
    async fn a_newer_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kd.sqlite");
        drop(Store::open(&path, Arc::new(ManualClock::new(1_000))).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", MIGRATIONS.len() + 1)
            .unwrap();
        drop(conn);
        let error = Store::open(&path, Arc::new(ManualClock::new(1_000))).unwrap_err();
        assert!(error.to_string().contains("newer karmadue"), "{error}");
    }

    #[tokio::test]
    async fn two_stores_on_one_file_keep_one_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kd.sqlite");
        let first = Store::open(&path, Arc::new(ManualClock::new(1_000))).unwrap();
        let second = Store::open(&path, Arc::new(ManualClock::new(2_000))).unwrap();
        for n in 0..6 {
            let store = if n % 2 == 0 { &first } else { &second };
            store
                .write(move |txn| -> Result<(), StoreError> {
                    txn.append(event("test.event", n)).map(|_| ())
                })
                .await
                .unwrap()
                .unwrap();
        }
        let report = first.read_blocking(verify_chain).unwrap().unwrap();
        assert_eq!(report.rows, 6);
    }

    #[tokio::test]
    async fn the_log_refuses_updates_and_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            &dir.path().join("kd.sqlite"),
            Arc::new(ManualClock::new(1_000)),
        )
        .unwrap();
        store
            .write(|txn| -> Result<(), StoreError> {
                txn.append(event("test.event", 1)).map(|_| ())
            })
            .await
            .unwrap()
            .unwrap();
        let update = store
            .write(|txn| -> Result<usize, StoreError> {
                Ok(txn
                    .conn()
                    .execute("UPDATE events SET kind = 'x' WHERE seq = 1", [])?)
            })
            .await
            .unwrap();
        assert!(update.is_err());
        let delete = store
            .write(|txn| -> Result<usize, StoreError> {
                Ok(txn.conn().execute("DELETE FROM events", [])?)
            })
            .await
            .unwrap();
        assert!(delete.is_err());
        assert_eq!(store.read_blocking(count).unwrap(), 1);
    }

    #[tokio::test]
    async fn verify_names_the_first_corrupted_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kd.sqlite");
        let store = Store::open(&path, Arc::new(ManualClock::new(1_000))).unwrap();
        for n in 0..5 {
            store
                .write(move |txn| -> Result<(), StoreError> {
                    txn.append(event("test.event", n)).map(|_| ())
                })
                .await
                .unwrap()
                .unwrap();
        }
        store.close();
        let tamper = Connection::open(&path).unwrap();
        tamper
            .execute_batch(
                "DROP TRIGGER events_append_only_update;
                 UPDATE events SET payload = '{\"n\": 99, \"text\": \"café\\n\"}' WHERE seq = 3;",
            )
            .unwrap();
        let broken = eventlog::verify_chain(&tamper).unwrap().unwrap_err();
        assert_eq!(broken.seq, 3);
        assert!(broken.reason.contains("row_hash"), "{}", broken.reason);
    }
}
