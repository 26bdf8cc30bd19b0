//! The search index: a tantivy projection of the `resources` and `claims` tables, one per hub
//! process (DESIGN "search": an index each process keeps as a projection).
//!
//! It lives in `<data>/search/` (or in memory when that folder cannot be used). Each commit
//! records `{version, seq, row_hash}`: the schema version and the last event the index has
//! seen. On open the index is reused only when the store's event at `seq` still has that
//! `row_hash` (the log is a hash chain, so the whole history up to there is the same);
//! otherwise it is rebuilt from the store. Before every search the store's head is compared
//! with `seq`, and events since then whose subject is a resource id refresh that resource: a
//! resource written by one call is found by the next.
//!
//! Ranking must not depend on how an index came to be (fresh build or years of updates), so
//! BM25 reads [`AliveStatistics`] (in `schema`): document counts and document frequencies of live records
//! only, and fixed average field lengths.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use kd_core::db::Connection;
use serde_json::json;
use tantivy::directory::MmapDirectory;
use tantivy::merge_policy::{LogMergePolicy, NoMergePolicy};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term};

pub use super::schema::{
    AliveStatistics, Analyzers, Fields, Record, Signals, document, locator_words, record_names,
};
use kd_kernel::error::ToolError;

/// Bumped whenever the schema, the analyzers or what a document holds changes; an index made
/// by another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 2;

/// Threads one search spreads its segments over.
const SEARCH_THREADS: usize = 2;

/// More new events than this since the index's seq: rebuild rather than replay.
const REPLAY_LIMIT: i64 = 20_000;

/// Where an index is kept.
#[derive(Debug, Clone)]
enum Place {
    Disk(PathBuf),
    Memory,
}

/// One hub's search index: built (or reopened) by [`SearchIndex::warm`] at start or on first
/// use, then kept current from the event log. Clones share the same index.
#[derive(Clone)]
pub struct SearchIndex {
    place: Place,
    analyzers: Analyzers,
    live: Arc<Mutex<Option<Arc<Live>>>>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SearchIndex")
            .field("place", &self.place)
            .finish_non_exhaustive()
    }
}

/// A built index, ready to search.
pub struct Live {
    /// The tantivy index.
    pub index: Index,
    /// Its fields.
    pub fields: Fields,
    reader: IndexReader,
    writer: Mutex<Writer>,
    seq: AtomicI64,
    /// Whether it is on disk (false: in memory).
    pub on_disk: bool,
}

struct Writer {
    writer: IndexWriter,
    seq: i64,
}

/// How an index came to be current, for logs and the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Already at the store's head.
    Current,
    /// Events since the last search were applied.
    CaughtUp,
    /// Built from the store.
    Rebuilt,
    /// Opened from disk as it was left (then caught up if the store had moved).
    Reopened,
}

impl SearchIndex {
    /// An index kept in `dir` (made when missing). Falls back to memory when the folder cannot
    /// be used (another process holds it, or the disk refuses).
    pub fn on_disk(dir: impl Into<PathBuf>) -> Self {
        Self {
            place: Place::Disk(dir.into()),
            analyzers: Analyzers::new(),
            live: Arc::new(Mutex::new(None)),
        }
    }

    /// An index kept in memory only.
    pub fn in_memory() -> Self {
        Self {
            place: Place::Memory,
            analyzers: Analyzers::new(),
            live: Arc::new(Mutex::new(None)),
        }
    }

    /// Builds or reopens the index and brings it to the store's head, on a blocking thread, so
    /// that the first search does not wait for it (`kd_karmadue::prepare` calls this).
    ///
    /// # Errors
    /// `internal` when the store or the index fails.
    pub async fn warm(&self, store: &kd_core::store::Store) -> Result<Freshness, ToolError> {
        let index = self.clone();
        store
            .read(move |conn| index.current(conn).map(|(_, freshness)| freshness))
            .await
    }

    /// The shared analyzers.
    pub fn analyzers(&self) -> &Analyzers {
        &self.analyzers
    }

    /// The index, brought up to the store's head: built or opened on first use, then the
    /// events since the last call applied.
    ///
    /// # Errors
    /// `internal` when the store or the index fails.
    pub fn current(&self, conn: &Connection) -> Result<(Arc<Live>, Freshness), ToolError> {
        let head = head(conn)?;
        let (live, opened) = {
            let mut slot = lock(&self.live)?;
            match slot.as_ref() {
                Some(live) => (Arc::clone(live), None),
                None => {
                    let (live, how) = self.open(conn, &head)?;
                    let live = Arc::new(live);
                    *slot = Some(Arc::clone(&live));
                    (live, Some(how))
                }
            }
        };
        if live.seq.load(Ordering::Acquire) >= head.seq {
            return Ok((live, opened.unwrap_or(Freshness::Current)));
        }
        let mut writer = lock(&live.writer)?;
        if writer.seq < head.seq {
            let records = if head.seq - writer.seq > REPLAY_LIMIT {
                None
            } else {
                Some(changed_since(conn, writer.seq, head.seq)?)
            };
            match records {
                Some(changed) => live.apply(&mut writer, conn, &changed, &head, &self.analyzers)?,
                None => live.rebuild(&mut writer, conn, &head, &self.analyzers)?,
            }
        }
        let freshness = if opened == Some(Freshness::Rebuilt) {
            Freshness::Rebuilt
        } else {
            Freshness::CaughtUp
        };
        Ok((Arc::clone(&live), freshness))
    }

    fn open(&self, conn: &Connection, head: &Head) -> Result<(Live, Freshness), ToolError> {
        if let Place::Disk(dir) = &self.place {
            match self.open_on_disk(dir, conn, head) {
                Ok(opened) => return Ok(opened),
                Err(error) => tracing::warn!(
                    dir = %dir.display(),
                    error = %error.cause_text(),
                    "search index folder unusable; keeping the index in memory"
                ),
            }
        }
        let (schema, fields) = Fields::schema();
        let index = Index::create_in_ram(schema);
        let live = Live::new(index, fields, &self.analyzers, false)?;
        {
            let mut writer = lock(&live.writer)?;
            live.rebuild(&mut writer, conn, head, &self.analyzers)?;
        }
        Ok((live, Freshness::Rebuilt))
    }

    fn open_on_disk(
        &self,
        dir: &Path,
        conn: &Connection,
        head: &Head,
    ) -> Result<(Live, Freshness), ToolError> {
        // 0700: tantivy makes its files with the umask's mode, unreachable behind this folder
        // (docs/decisions.md 491).
        crate::data_files::make_private_dir(dir).map_err(ToolError::internal_from)?;
        let (schema, fields) = Fields::schema();
        if let Ok(index) = Index::open_in_dir(dir) {
            if index.schema() == schema {
                let reusable = payload_still_valid(&index, conn);
                // Takes the folder's writer lock: another process using it makes this fail,
                // and the caller keeps its index in memory instead.
                let live = Live::new(index, fields, &self.analyzers, true)?;
                if reusable {
                    return Ok((live, Freshness::Reopened));
                }
                let mut writer = lock(&live.writer)?;
                live.rebuild(&mut writer, conn, head, &self.analyzers)?;
                drop(writer);
                return Ok((live, Freshness::Rebuilt));
            }
            // Another version's index: hold its lock while checking nobody uses it, then start
            // again.
            let writer: IndexWriter = index
                .writer_with_num_threads(1, 15_000_000)
                .map_err(ToolError::internal_from)?;
            drop(writer);
        }
        clear_dir(dir)?;
        let directory = MmapDirectory::open(dir).map_err(ToolError::internal_from)?;
        let index = Index::create(directory, schema, tantivy::IndexSettings::default())
            .map_err(ToolError::internal_from)?;
        let live = Live::new(index, fields, &self.analyzers, true)?;
        let mut writer = lock(&live.writer)?;
        live.rebuild(&mut writer, conn, head, &self.analyzers)?;
        drop(writer);
        Ok((live, Freshness::Rebuilt))
    }
}

fn clear_dir(dir: &Path) -> Result<(), ToolError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(ToolError::internal_from)?;
    }
    crate::data_files::make_private_dir(dir).map_err(ToolError::internal_from)
}

fn lock<T>(mutex: &Mutex<T>) -> Result<MutexGuard<'_, T>, ToolError> {
    mutex
        .lock()
        .map_err(|_| ToolError::internal("search index lock poisoned"))
}

/// The store's event head.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Head {
    seq: i64,
    row_hash: String,
}

fn head(conn: &Connection) -> Result<Head, ToolError> {
    let head = crate::ledger::store::head(conn)?.map(|(seq, row_hash)| Head { seq, row_hash });
    Ok(head.unwrap_or(Head {
        seq: 0,
        row_hash: String::new(),
    }))
}

fn payload_still_valid(index: &Index, conn: &Connection) -> bool {
    let Ok(metas) = index.load_metas() else {
        return false;
    };
    let Some(payload) = metas.payload.as_deref() else {
        return false;
    };
    let Ok(payload) = serde_json::from_str::<serde_json::Value>(payload) else {
        return false;
    };
    if payload["version"].as_u64() != Some(u64::from(SCHEMA_VERSION)) {
        return false;
    }
    let Some(seq) = payload["seq"].as_i64() else {
        return false;
    };
    let Some(row_hash) = payload["row_hash"].as_str() else {
        return false;
    };
    if seq == 0 {
        return row_hash.is_empty();
    }
    crate::ledger::store::row_hash_at(conn, seq)
        .ok()
        .flatten()
        .is_some_and(|stored| stored == row_hash)
}

/// Resource ids named as the subject of events in (after, upto].
fn changed_since(conn: &Connection, after: i64, upto: i64) -> Result<Vec<String>, ToolError> {
    Ok(crate::ledger::store::resources_named_between(
        conn, after, upto,
    )?)
}

impl Live {
    fn new(
        mut index: Index,
        fields: Fields,
        analyzers: &Analyzers,
        on_disk: bool,
    ) -> Result<Live, ToolError> {
        analyzers.register(&index);
        // Segments are searched in parallel: one search uses both cores of a small machine.
        index
            .set_multithread_executor(SEARCH_THREADS)
            .map_err(ToolError::internal_from)?;
        let writer = index
            .writer_with_num_threads(1, 60_000_000)
            .map_err(ToolError::internal_from)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(ToolError::internal_from)?;
        let seq = committed_seq(&index);
        Ok(Live {
            index,
            fields,
            reader,
            writer: Mutex::new(Writer { writer, seq }),
            seq: AtomicI64::new(seq),
            on_disk,
        })
    }

    /// A searcher over the last commit.
    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// The last event seq this index reflects.
    pub fn seq(&self) -> i64 {
        self.seq.load(Ordering::Acquire)
    }

    fn rebuild(
        &self,
        writer: &mut Writer,
        conn: &Connection,
        head: &Head,
        analyzers: &Analyzers,
    ) -> Result<(), ToolError> {
        // No background merges while building: the build ends with its own, below.
        writer.writer.set_merge_policy(Box::new(NoMergePolicy));
        writer
            .writer
            .delete_all_documents()
            .map_err(ToolError::internal_from)?;
        let mut failed = None;
        crate::catalog::store::for_each_record(conn, |record| {
            if let Err(error) = writer.writer.add_document(self.document(record, analyzers)) {
                failed = Some(error);
            }
            Ok(())
        })?;
        if let Some(error) = failed {
            return Err(ToolError::internal_from(error));
        }
        self.commit(writer, head)?;
        self.compact(writer)?;
        writer
            .writer
            .set_merge_policy(Box::new(LogMergePolicy::default()));
        Ok(())
    }

    /// Merges a fresh build into at most [`SEARCH_THREADS`] segments of similar size and waits,
    /// so that searches neither compete with background merges nor walk many small segments.
    fn compact(&self, writer: &mut Writer) -> Result<(), ToolError> {
        let mut segments = self
            .index
            .searchable_segment_metas()
            .map_err(ToolError::internal_from)?;
        if segments.len() <= SEARCH_THREADS {
            return Ok(());
        }
        segments.sort_by_key(|meta| std::cmp::Reverse(meta.num_docs()));
        let mut groups: Vec<(u64, Vec<tantivy::index::SegmentId>)> =
            vec![(0, Vec::new()); SEARCH_THREADS];
        for meta in segments {
            if let Some(group) = groups.iter_mut().min_by_key(|(docs, _)| *docs) {
                group.0 += u64::from(meta.num_docs());
                group.1.push(meta.id());
            }
        }
        let merges: Vec<_> = groups
            .into_iter()
            .filter(|(_, ids)| ids.len() > 1)
            .map(|(_, ids)| writer.writer.merge(&ids))
            .collect();
        for merge in merges {
            merge.wait().map_err(ToolError::internal_from)?;
        }
        self.reader.reload().map_err(ToolError::internal_from)
    }

    fn apply(
        &self,
        writer: &mut Writer,
        conn: &Connection,
        changed: &[String],
        head: &Head,
        analyzers: &Analyzers,
    ) -> Result<(), ToolError> {
        // Storing a GitHub folder's archived copy changes whether the folder is archived
        // (docs/decisions.md 246): its twin is refreshed too.
        let mut refresh: Vec<String> = changed.to_vec();
        refresh.extend(
            changed
                .iter()
                .filter_map(|id| crate::catalog::model::archive_twin(id).map(|(twin, _)| twin)),
        );
        refresh.sort_unstable();
        refresh.dedup();
        for resource_id in &refresh {
            writer
                .writer
                .delete_term(Term::from_field_text(self.fields.id, resource_id));
            if let Some(record) = crate::catalog::store::record(conn, resource_id)? {
                writer
                    .writer
                    .add_document(self.document(&record, analyzers))
                    .map_err(ToolError::internal_from)?;
            }
        }
        self.commit(writer, head)
    }

    fn commit(&self, writer: &mut Writer, head: &Head) -> Result<(), ToolError> {
        let payload =
            json!({ "version": SCHEMA_VERSION, "seq": head.seq, "row_hash": head.row_hash })
                .to_string();
        let mut prepared = writer
            .writer
            .prepare_commit()
            .map_err(ToolError::internal_from)?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(ToolError::internal_from)?;
        self.reader.reload().map_err(ToolError::internal_from)?;
        writer.seq = head.seq;
        self.seq.store(head.seq, Ordering::Release);
        Ok(())
    }

    /// The document of one record.
    pub fn document(&self, record: &Record, analyzers: &Analyzers) -> TantivyDocument {
        document(&self.fields, record, analyzers)
    }
}

fn committed_seq(index: &Index) -> i64 {
    index
        .load_metas()
        .ok()
        .and_then(|metas| metas.payload)
        .and_then(|payload| serde_json::from_str::<serde_json::Value>(&payload).ok())
        .and_then(|payload| payload["seq"].as_i64())
        .unwrap_or(-1)
}
