//! The store's tests, on SQLite and (when configured) PostgreSQL.

use super::*;
use crate::clock::ManualClock;
use crate::db::testing;
use crate::eventlog::{count, verify_chain};

fn event(kind: &'static str, n: i64) -> NewEvent {
    NewEvent {
        kind,
        actor: "hub".into(),
        subject: format!("s{n}"),
        payload: serde_json::json!({ "n": n, "text": "café\n" }),
    }
}

/// A SQLite file in `dir`, and a fresh PostgreSQL database when the test server is
/// configured: every test of the store runs on both.
fn locations(dir: &Path) -> Vec<Location> {
    let mut all = vec![Location::Sqlite(dir.join("kd.sqlite"))];
    if let Some(url) = testing::scratch_postgres() {
        all.push(Location::Postgres(url));
    }
    all
}

fn open(location: &Location, at_ms: i64) -> Store {
    Store::open_at(
        location,
        Arc::new(ManualClock::new(at_ms)),
        StoreMetrics::default(),
    )
    .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn append(store: &Store, n: i64) -> (u64, i64) {
    runtime().block_on(async {
        store
            .write(move |txn| -> Result<(u64, i64), StoreError> {
                let row = txn.append(event("test.event", n))?;
                Ok((txn.epoch(), row.seq))
            })
            .await
            .unwrap()
            .unwrap()
    })
}

#[test]
fn concurrent_writes_form_one_gap_free_chain() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = open(&location, 1_000);
        let mut seqs = runtime().block_on(async {
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
            seqs
        });
        seqs.sort_unstable();
        assert_eq!(seqs, (1..=200).collect::<Vec<_>>(), "{location:?}");
        let report = store.read_blocking(verify_chain).unwrap().unwrap();
        assert_eq!(report.rows, 200);
    }
}

#[test]
fn a_refused_job_leaves_nothing_and_does_not_break_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = open(&location, 1_000);
        let refused = runtime().block_on(store.write(|txn| -> Result<(), String> {
            txn.append(event("test.event", 1))
                .map_err(|e| e.to_string())?;
            Err("refused after appending".into())
        }));
        assert_eq!(refused.unwrap(), Err("refused after appending".to_owned()));
        assert_eq!(append(&store, 2).1, 1, "{location:?}");
        assert_eq!(store.read_blocking(count).unwrap(), 1);
        assert!(store.read_blocking(verify_chain).unwrap().is_ok());
    }
}

/// The epoch (`WriteTxn::epoch`) moves when another store appended to the database
/// and when a batch failed, never for this writer's own batches.
#[test]
fn the_epoch_moves_on_foreign_appends_and_failed_batches_only() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = open(&location, 1_000);
        let (start, seq) = append(&store, 0);
        assert_eq!(seq, 1);
        assert_eq!(append(&store, 0), (start, 2), "own batches keep it");
        let other = open(&location, 2_000);
        append(&other, 0);
        assert_eq!(append(&store, 0), (start + 1, 4), "another store appended");
        // A job that ends its own savepoint makes the batch's RELEASE fail: the batch
        // rolls back, and the epoch moves.
        let failed = runtime().block_on(store.write(|txn| -> Result<(), StoreError> {
            txn.append(event("test.event", 9))?;
            txn.conn().execute_batch("RELEASE SAVEPOINT job")?;
            Ok(())
        }));
        assert!(failed.is_err(), "{failed:?}");
        assert_eq!(append(&store, 0), (start + 2, 5), "{location:?}");
        assert!(store.read_blocking(verify_chain).unwrap().is_ok());
    }
}

/// A job that swallows a failed statement on PostgreSQL (the transaction is then aborted)
/// fails alone; the batch's other jobs commit.
#[test]
fn a_job_that_swallows_an_error_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()).into_iter().skip(1) {
        let store = open(&location, 1_000);
        let runtime = runtime();
        let (bad, good) = runtime.block_on(async {
            let bad = store.write(|txn| -> Result<(), StoreError> {
                txn.append(event("test.event", 1))?;
                let _ = txn
                    .conn()
                    .execute("INSERT INTO no_such_table VALUES (1)", []);
                Ok(())
            });
            let good = store.write(|txn| -> Result<i64, StoreError> {
                Ok(txn.append(event("test.event", 2))?.seq)
            });
            tokio::join!(bad, good)
        });
        assert!(bad.is_err(), "{bad:?}");
        assert_eq!(good.unwrap().unwrap(), 1);
        assert!(store.read_blocking(verify_chain).unwrap().is_ok());
        assert_eq!(store.read_blocking(count).unwrap(), 1);
    }
}

#[test]
fn a_newer_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        open(&location, 1_000).close();
        let conn = Connection::open(&location).unwrap();
        let newer = migrate::latest() + 1;
        match location.backend() {
            Backend::Sqlite => conn
                .execute_batch(&format!("PRAGMA user_version = {newer}"))
                .unwrap(),
            Backend::Postgres => {
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_ms) VALUES (?1, 0)",
                    [newer],
                )
                .unwrap();
            }
        }
        drop(conn);
        let error = Store::open_at(
            &location,
            Arc::new(ManualClock::new(1_000)),
            StoreMetrics::default(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("newer karmadue"), "{error}");
    }
}

#[test]
fn two_stores_on_one_database_keep_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let first = open(&location, 1_000);
        let second = open(&location, 2_000);
        for n in 0..6 {
            append(if n % 2 == 0 { &first } else { &second }, n);
        }
        let report = first.read_blocking(verify_chain).unwrap().unwrap();
        assert_eq!(report.rows, 6, "{location:?}");
    }
}

#[test]
fn the_log_refuses_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = open(&location, 1_000);
        append(&store, 1);
        for sql in [
            "UPDATE events SET kind = 'x' WHERE seq = 1",
            "DELETE FROM events",
        ] {
            let refused =
                runtime().block_on(store.write(move |txn| -> Result<usize, StoreError> {
                    Ok(txn.conn().execute(sql, [])?)
                }));
            let error = refused.unwrap().unwrap_err();
            assert!(
                error.to_string().contains("append-only"),
                "{location:?}: {error}"
            );
        }
        assert_eq!(store.read_blocking(count).unwrap(), 1);
    }
}

#[test]
fn verify_names_the_first_corrupted_row() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = open(&location, 1_000);
        for n in 0..5 {
            append(&store, n);
        }
        store.close();
        let tamper = Connection::open(&location).unwrap();
        let drop_trigger = match location.backend() {
            Backend::Sqlite => "DROP TRIGGER events_append_only_update",
            Backend::Postgres => "DROP TRIGGER events_append_only_update ON events",
        };
        tamper
            .execute_batch(&format!(
                "{drop_trigger}; UPDATE events SET payload = '{{\"n\": 99, \"text\": \"café\\n\"}}' WHERE seq = 3;"
            ))
            .unwrap();
        let broken = eventlog::verify_chain(&tamper).unwrap().unwrap_err();
        assert_eq!(broken.seq, 3);
        assert!(broken.reason.contains("row_hash"), "{}", broken.reason);
    }
}

/// Issue 35: a write whose batch cannot begin because another connection holds SQLite's
/// write lock is `NotRun` ("nothing was written"), not `Closed` ("shutting down"), and the
/// store writes again once the lock is gone. (SQLite's busy timeout makes this wait 10 s.)
#[test]
fn a_batch_that_cannot_begin_is_not_run_and_not_shutting_down() {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::Sqlite(dir.path().join("kd.sqlite"));
    let store = open(&location, 1_000);
    assert_eq!(append(&store, 1).1, 1);
    let holder = Connection::open(&location).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let blocked = runtime().block_on(store.write(move |txn| -> Result<(), StoreError> {
        txn.append(event("test.event", 2))?;
        Ok(())
    }));
    assert!(matches!(blocked, Err(StoreError::NotRun)), "{blocked:?}");
    assert_eq!(
        StoreError::NotRun.to_string(),
        "the write batch could not start (the database refused it); nothing was written"
    );
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(
        append(&store, 3).1,
        2,
        "nothing of the blocked job was written"
    );
    store.close();
    let closed = runtime().block_on(store.write(|_txn| -> Result<(), StoreError> { Ok(()) }));
    assert!(matches!(closed, Err(StoreError::Closed)), "{closed:?}");
}
