//! The store: one database (an embedded SQLite file in WAL mode, or a PostgreSQL server that
//! several hub processes share; DESIGN rule 7), a small pool of read connections, and ONE
//! writer thread per process that commits many requests per fsync (group commit, DESIGN rule
//! 8).
//!
//! A write is a closure that runs inside the writer's transaction: it checks what it needs,
//! appends its events ([`WriteTxn::append`]) and updates its projections. The writer takes
//! every job waiting in its queue (up to [`MAX_BATCH`]), runs each inside its own SAVEPOINT,
//! and commits the batch once. A job that returns `Err` is rolled back to its savepoint, so a
//! refusal leaves no trace and does not disturb the other jobs of the batch; the chain head is
//! restored with it, so the log stays linear and gap-free. Each batch takes the chain head
//! first ([`dialect::begin_write`]: SQLite's write lock, PostgreSQL's advisory lock), so
//! writers of several processes append one batch at a time.
//!
//! The writer counts what it commits into [`StoreMetrics`]: handles of the `metrics` facade that
//! the hub registers with its own registry (no global recorder; a store opened without them
//! counts nothing).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};

use crate::clock::Clock;
use crate::db::{Backend, Connection, DbError, Location, dialect, migrate};
use crate::eventlog::{self, ChainHead, EventRow, NewEvent};

mod batch;

use batch::writer_loop;

/// Most jobs committed together in one transaction.
pub const MAX_BATCH: usize = 512;

/// Most read connections one process keeps open to PostgreSQL (SQLite readers are files and
/// cost nothing to the server; they are not capped).
pub const MAX_PG_READERS: usize = 16;

/// Store failures. Messages are for logs; callers present them as `internal`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed.
    #[error("database: {0}")]
    Db(#[from] DbError),
    /// The writer thread is gone (the store is shutting down).
    #[error("the store is shutting down")]
    Closed,
    /// The writer dropped the job unrun: its batch could not begin (the database refused the
    /// write lock, for example SQLite's "database is locked", or the chain head could not be
    /// read). Nothing of the job was written; the writer logged the database's error.
    #[error("the write batch could not start (the database refused it); nothing was written")]
    NotRun,
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
    location: Location,
    readers: Mutex<Readers>,
    returned: Condvar,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    clock: Arc<dyn Clock>,
    /// Whether the writer extends the transparency log at the end of each batch (on unless
    /// [`Store::set_transparency`] turned it off).
    transparency: Arc<AtomicBool>,
}

#[derive(Debug, Default)]
struct Readers {
    idle: Vec<Connection>,
    open: usize,
}

/// The transaction a write job runs in. It appends events and exposes the connection for
/// projection updates. Nothing it does is visible to readers until the batch commits.
pub struct WriteTxn<'c> {
    conn: &'c Connection,
    head: &'c mut ChainHead,
    now_ms: i64,
    appended: Vec<EventRow>,
    epoch: u64,
    batch: &'c crate::tlog::receipt::BatchSlot,
    auth_method: Option<&'static str>,
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

    /// Where the writer leaves this job's batch once it is committed with the transparency log
    /// on: the rows every kept job of the batch appended, from which a write receipt is made
    /// ([`crate::tlog::receipt::Batch::receipt`]). Empty until the batch commits; stays empty
    /// when the log is off or the job's batch failed.
    pub fn batch_slot(&self) -> crate::tlog::receipt::BatchSlot {
        std::sync::Arc::clone(self.batch)
    }

    /// Appends one event to the global log, linked to the previous row.
    ///
    /// # Errors
    /// [`StoreError`] when the insert fails; the job should return it so its savepoint is
    /// rolled back.
    pub fn append(&mut self, mut event: NewEvent) -> Result<EventRow, StoreError> {
        if let (Some(method), Some(fields)) = (self.auth_method, event.payload.as_object_mut()) {
            fields.insert(eventlog::AUTH_METHOD_KEY.to_owned(), method.into());
        }
        let row = eventlog::append(self.conn, self.head, self.now_ms, event)?;
        self.appended.push(row.clone());
        Ok(row)
    }

    /// Marks every event this job appends from now on as written by `method` (`"oauth"`: a
    /// connected app's hosted agent): the payload carries [`eventlog::AUTH_METHOD_KEY`].
    pub fn set_auth_method(&mut self, method: &'static str) {
        self.auth_method = Some(method);
    }

    /// Appends one event of a declared kind ([`eventlog::EventPayload`]): `payload` under its
    /// kind, by `actor`, about `subject`.
    ///
    /// # Errors
    /// As [`WriteTxn::append`]; [`StoreError::Invalid`] when the payload does not serialise.
    pub fn record<P: eventlog::EventPayload>(
        &mut self,
        actor: impl Into<String>,
        subject: impl Into<String>,
        payload: &P,
    ) -> Result<EventRow, StoreError> {
        self.append(payload.event(actor, subject)?)
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
    /// process (an import, a second hub on the same database) since this writer's previous
    /// batch, or failed and were rolled back. A projection a hub keeps in memory and updates
    /// only from its own writes cannot trust what it learned before the epoch changed.
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
    /// Opens (creating if needed) the SQLite database at `path`, applies migrations, and
    /// starts the writer thread.
    ///
    /// # Errors
    /// [`StoreError::Db`] when the file cannot be opened or migrated.
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<Self, StoreError> {
        Self::open_at(
            &Location::Sqlite(path.to_owned()),
            clock,
            StoreMetrics::default(),
        )
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
        Self::open_at(&Location::Sqlite(path.to_owned()), clock, metrics)
    }

    /// Opens the store at `location` (a SQLite file, created if needed, or a PostgreSQL
    /// database), applies migrations, and starts the writer thread.
    ///
    /// # Errors
    /// [`StoreError::Db`] when the database cannot be reached or migrated;
    /// [`StoreError::Invalid`] when its schema is newer than this binary knows.
    pub fn open_at(
        location: &Location,
        clock: Arc<dyn Clock>,
        metrics: StoreMetrics,
    ) -> Result<Self, StoreError> {
        let now_ms = clock.now_ms();
        let (writer, head) = crate::db::off_runtime(|| -> Result<_, StoreError> {
            let writer = Connection::open(location)?;
            migrate::migrate(&writer, now_ms)?;
            let head = ChainHead::load(&writer)?;
            Ok((writer, head))
        })?;
        let (sender, receiver) = mpsc::channel::<Job>();
        let writer_clock = Arc::clone(&clock);
        let writer_location = location.clone();
        let transparency = Arc::new(AtomicBool::new(true));
        let writer_transparency = Arc::clone(&transparency);
        std::thread::Builder::new()
            .name("kd-store-writer".into())
            .spawn(move || {
                writer_loop(
                    writer,
                    &writer_location,
                    head,
                    receiver,
                    writer_clock,
                    &metrics,
                    &writer_transparency,
                );
            })
            .map_err(|error| StoreError::Task(error.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                location: location.clone(),
                readers: Mutex::new(Readers::default()),
                returned: Condvar::new(),
                jobs: Mutex::new(Some(sender)),
                clock,
                transparency,
            }),
        })
    }

    /// Turns the writer's upkeep of the transparency log (`kd_core::tlog::store::extend` at
    /// the end of every batch) on or off; it is on from [`Store::open_at`]. Off is for the
    /// benchmark's tree-off baseline only (docs/decisions.md 242): batches committed while it
    /// is off are added to the tree by the first batch after it is turned on again.
    pub fn set_transparency(&self, on: bool) {
        self.inner.transparency.store(on, Ordering::Relaxed);
    }

    /// Whether the writer keeps the transparency log ([`Store::set_transparency`]).
    pub fn transparency(&self) -> bool {
        self.inner.transparency.load(Ordering::Relaxed)
    }

    /// The clock the store stamps events with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// Where the database lives.
    pub fn location(&self) -> &Location {
        &self.inner.location
    }

    /// The backend the store runs on.
    pub fn backend(&self) -> Backend {
        self.inner.location.backend()
    }

    /// The SQLite database file, when the store is one.
    pub fn path(&self) -> Option<&Path> {
        match &self.inner.location {
            Location::Sqlite(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }

    /// Runs `read` on a pooled read connection inside one read transaction: every query of
    /// `read` sees the same snapshot of the store (a batch the writer commits meanwhile is seen
    /// by all of them or by none).
    ///
    /// On PostgreSQL the read runs on the blocking pool (the driver waits on the network, on a
    /// runtime of its own). On SQLite it runs right here, on the calling async thread: a read
    /// is a few page lookups in this process's memory map, never waits for the writer (WAL),
    /// and takes microseconds, while a hop to the blocking pool and back costs about half of a
    /// whole `get_resource` call (docs/decisions.md 208). Work that may read for long (whole
    /// logs, exports) runs on its own blocking thread instead.
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
        if self.backend() == Backend::Sqlite {
            return self.read_blocking(read);
        }
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.read_blocking(read))
            .await
            .map_err(|error| E::from(StoreError::Task(error.to_string())))?
    }

    /// [`Store::read`] for code that is already on a blocking thread (CLI commands, tests).
    /// Never call it from async code on PostgreSQL: the driver blocks on a runtime of its own.
    ///
    /// # Errors
    /// As [`Store::read`].
    pub fn read_blocking<T, E, F>(&self, read: F) -> Result<T, E>
    where
        F: FnOnce(&Connection) -> Result<T, E>,
        E: From<StoreError>,
    {
        let conn = self.take_reader()?;
        // One snapshot for the whole closure (SQLite takes the WAL read lock at the first
        // query and keeps it until COMMIT; PostgreSQL's REPEATABLE READ takes it there too),
        // instead of one per statement.
        if let Err(error) = dialect::begin_read(&conn) {
            self.give_back(conn, false);
            return Err(E::from(error.into()));
        }
        let result = read(&conn);
        if let Err(error) = dialect::end_read(&conn) {
            tracing::error!(%error, "could not end a read transaction");
        }
        // A connection that could not end its transaction (or whose closure left one open),
        // or that lost its server, is dropped, never pooled.
        let reusable = conn.is_autocommit() && conn.is_usable();
        self.give_back(conn, reusable);
        result
    }

    /// Runs `work` on a pooled connection in autocommit mode (each statement its own
    /// transaction), off the async threads: for one-statement side work such as a shared
    /// rate-limit charge ([`crate::limits`]), where a `BEGIN` and `COMMIT` would only add
    /// round trips.
    ///
    /// # Errors
    /// Whatever `work` returns, or [`StoreError`] (converted into `E`).
    pub async fn autocommit<T, E, F>(&self, work: F) -> Result<T, E>
    where
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            let conn = store.take_reader()?;
            let result = work(&conn);
            let reusable = conn.is_autocommit() && conn.is_usable();
            store.give_back(conn, reusable);
            result
        })
        .await
        .map_err(|error| E::from(StoreError::Task(error.to_string())))?
    }

    /// Runs `work` in a read-write transaction of its own on a pooled connection, outside the
    /// writer's batches, on a thread that may block: for shared state that is not a fact and
    /// never reaches the log (the server keys a database pins, [`crate::keys`]). Commits when
    /// `work` returns `Ok`, rolls back otherwise.
    ///
    /// # Errors
    /// Whatever `work` returns, or [`StoreError`] (converted into `E`) when no connection can
    /// be had or the commit fails.
    pub fn transact_blocking<T, E, F>(&self, work: F) -> Result<T, E>
    where
        F: FnOnce(&Connection) -> Result<T, E>,
        E: From<StoreError>,
    {
        let conn = self.take_reader()?;
        if let Err(error) = conn.execute_batch("BEGIN") {
            self.give_back(conn, false);
            return Err(E::from(error.into()));
        }
        let result = work(&conn);
        let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = conn.execute_batch(end);
        let reusable = ended.is_ok() && conn.is_autocommit() && conn.is_usable();
        self.give_back(conn, reusable);
        match (result, ended) {
            (Ok(_), Err(error)) => Err(E::from(error.into())),
            (result, _) => result,
        }
    }

    fn take_reader(&self) -> Result<Connection, StoreError> {
        let cap = match self.backend() {
            Backend::Sqlite => usize::MAX,
            Backend::Postgres => MAX_PG_READERS,
        };
        let mut readers = self.inner.readers.lock().map_err(|_| poisoned())?;
        loop {
            if let Some(conn) = readers.idle.pop() {
                return Ok(conn);
            }
            if readers.open < cap {
                readers.open += 1;
                drop(readers);
                return Connection::open(&self.inner.location).map_err(|error| {
                    if let Ok(mut readers) = self.inner.readers.lock() {
                        readers.open -= 1;
                    }
                    StoreError::from(error)
                });
            }
            readers = self.inner.returned.wait(readers).map_err(|_| poisoned())?;
        }
    }

    fn give_back(&self, conn: Connection, reusable: bool) {
        if let Ok(mut readers) = self.inner.readers.lock() {
            if reusable {
                readers.idle.push(conn);
            } else {
                readers.open = readers.open.saturating_sub(1);
            }
        }
        self.inner.returned.notify_one();
    }

    /// Runs `write` inside the writer's transaction and waits until its batch is durable.
    ///
    /// Returns `Ok(Ok(value))` once committed, `Ok(Err(refusal))` when the job refused (its
    /// changes were rolled back; nothing was written), and `Err(StoreError)` when the commit
    /// itself failed.
    ///
    /// # Errors
    /// [`StoreError::Closed`] when the writer is gone; [`StoreError::NotRun`] when its batch
    /// could not begin (nothing written); [`StoreError::Task`] when the commit failed.
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
            // Dropped unrun: by a batch that could not begin while the store is open, or by
            // the writer ending (issue 35: both read "shutting down").
            Err(_) if self.accepts_writes() => Err(StoreError::NotRun),
            Err(_) => Err(StoreError::Closed),
        }
    }

    /// Whether the store still takes write jobs (false once [`Store::close`] ran).
    fn accepts_writes(&self) -> bool {
        self.inner.jobs.lock().is_ok_and(|jobs| jobs.is_some())
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

#[cfg(test)]
mod tests;
