//! The stored tree on both backends: extended by the writer, proofs served from it, and
//! every tamper of the rows caught by [`super::check::check`].

use std::path::Path;
use std::sync::Arc;

use crate::clock::ManualClock;
use crate::db::{Backend, Connection, Location, dialect, migrate, params, testing};
use crate::eventlog::{self, ChainHead, EventRow, NewEvent};
use crate::keys::ServerKey;
use crate::store::{Store, StoreError, StoreMetrics};

use super::proof::{self, Hashes, MemHashes};
use super::{Hash, check, event_leaf, serve, store};

const ORIGIN: &str = "hub.example/kd-log";

fn locations(dir: &Path) -> Vec<Location> {
    let mut all = vec![Location::Sqlite(dir.join("kd.sqlite"))];
    if let Some(url) = testing::scratch_postgres() {
        all.push(Location::Postgres(url));
    }
    all
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn key() -> ServerKey {
    ServerKey::from_seed("kd-passport-1", [9; 32])
}

/// `count` events appended in one batch each, from `first`.
fn append(store: &Store, first: i64, count: i64) {
    let rt = runtime();
    for n in first..first + count {
        rt.block_on(store.write(move |txn| -> Result<(), StoreError> {
            txn.append(NewEvent {
                kind: "test.event",
                actor: "hub".into(),
                subject: format!("s{n}"),
                payload: serde_json::json!({ "n": n }),
            })?;
            Ok(())
        }))
        .unwrap()
        .unwrap();
    }
}

fn publish(store: &Store) -> u64 {
    let key = key();
    runtime()
        .block_on(store.write(move |txn| {
            let now = txn.now_ms();
            store::publish(txn.conn(), &key, ORIGIN, now)
        }))
        .unwrap()
        .unwrap()
        .unwrap()
        .size
}

/// A store with 10 events and checkpoints at 6 and 10; closed, and a connection to tamper.
fn checkpointed(location: &Location) -> Connection {
    let store = Store::open_at(
        location,
        Arc::new(ManualClock::new(1_000)),
        StoreMetrics::default(),
    )
    .unwrap();
    append(&store, 0, 6);
    assert_eq!(publish(&store), 6);
    append(&store, 6, 4);
    assert_eq!(publish(&store), 10);
    store.close();
    let conn = Connection::open(location).unwrap();
    let drop = match location.backend() {
        Backend::Sqlite => {
            "DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete"
        }
        Backend::Postgres => {
            "DROP TRIGGER events_append_only_update ON events; DROP TRIGGER events_append_only_delete ON events"
        }
    };
    conn.execute_batch(drop).unwrap();
    conn
}

fn rows(conn: &Connection) -> Vec<EventRow> {
    eventlog::rows_after(conn, 0, 1000).unwrap()
}

/// Stores `rows` from `from` on, every `prev_hash` and `row_hash` recomputed: a chain that
/// verifies.
fn rewrite(conn: &Connection, mut rows: Vec<EventRow>, from: usize) {
    for at in from..rows.len() {
        rows[at].prev_hash = if at == 0 {
            eventlog::GENESIS_HASH.to_owned()
        } else {
            rows[at - 1].row_hash.clone()
        };
        rows[at].row_hash = rows[at].computed_hash();
        let row = &rows[at];
        conn.execute(
            "UPDATE events SET prev_hash = ?1, row_hash = ?2, subject = ?3, payload = ?4 WHERE seq = ?5",
            params![row.prev_hash, row.row_hash, row.subject, row.payload, row.seq],
        )
        .unwrap();
    }
    assert!(
        eventlog::verify_chain(conn).unwrap().is_ok(),
        "the chain still verifies"
    );
}

fn broken(conn: &Connection) -> String {
    check::check(conn, Some(&key())).unwrap().unwrap_err()
}

#[test]
fn the_writer_keeps_the_tree_and_proofs_verify_under_the_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let conn = checkpointed(&location);
        let report = check::check(&conn, Some(&key())).unwrap().unwrap();
        assert_eq!((report.size, report.behind, report.checkpoints), (10, 0, 2));
        let mut reference = MemHashes::default();
        let leaves: Vec<_> = rows(&conn)
            .iter()
            .map(|row| super::event_leaf(&row.row_hash).unwrap())
            .collect();
        proof::append(&mut reference, 0, &leaves).unwrap();
        let latest = store::latest_checkpoint(&conn).unwrap().unwrap();
        assert_eq!(latest.root, proof::root(&mut reference, 10).unwrap());
        let signed = super::note::verify(&latest.note, ORIGIN, &key().public_key_bytes()).unwrap();
        assert_eq!((signed.size, signed.root), (10, latest.root));
        for seq in 1..=10 {
            let proved = serve::inclusion(&conn, seq, None).unwrap().unwrap();
            let path: Vec<_> = proved["proof"]
                .as_array()
                .unwrap()
                .iter()
                .map(|hash| super::parse_b64(hash.as_str().unwrap()).unwrap())
                .collect();
            assert!(proof::verify_inclusion(
                seq - 1,
                10,
                &leaves[seq as usize - 1],
                &path,
                &latest.root
            ));
            assert_eq!(proved["checkpoint"], latest.note.as_str());
        }
        let consistent = serve::consistency(&conn, 6, None).unwrap().unwrap();
        assert_eq!(consistent["new_size"], 10);
        assert_eq!(
            serve::inclusion(&conn, 11, None).unwrap().unwrap_err().0,
            400
        );
        assert_eq!(
            serve::inclusion(&conn, 1, Some(11)).unwrap().unwrap_err().0,
            400
        );
        assert_eq!(
            serve::consistency(&conn, 0, None).unwrap().unwrap_err().0,
            400
        );
        assert_eq!(
            serve::consistency(&conn, 7, Some(6))
                .unwrap()
                .unwrap_err()
                .0,
            400
        );
        let tile = super::tiles::parse("0/000.p/10").unwrap();
        assert_eq!(serve::tile(&conn, tile).unwrap().unwrap().len(), 320);
        assert!(
            serve::tile(&conn, super::tiles::parse("0/000.p/11").unwrap())
                .unwrap()
                .is_none()
        );
        assert!(
            serve::tile(&conn, super::tiles::parse("0/000").unwrap())
                .unwrap()
                .is_none()
        );
        let entries = serve::tile(&conn, super::tiles::parse("entries/000.p/2").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(entries.len(), 68);
        assert_eq!(hex::encode(&entries[2..34]), rows(&conn)[0].row_hash);
    }
}

#[test]
fn deleting_the_tail_after_a_checkpoint_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let conn = checkpointed(&location);
        conn.execute_batch("DELETE FROM events WHERE seq > 7")
            .unwrap();
        assert!(eventlog::verify_chain(&conn).unwrap().is_ok());
        assert!(
            broken(&conn).contains("deleted"),
            "{location:?}: {}",
            broken(&conn)
        );
        // The tree's own hashes removed too: the checkpoint of size 10 still names the rows.
        conn.execute_batch("DELETE FROM tlog_hashes").unwrap();
        store::extend(&conn).unwrap();
        let problem = broken(&conn);
        assert!(
            problem.contains("checkpoint of size 10") && problem.contains("deleted"),
            "{problem}"
        );
    }
}

#[test]
fn rewriting_a_row_with_every_later_hash_recomputed_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let conn = checkpointed(&location);
        let mut all = rows(&conn);
        all[2].payload = "{\"n\": 99}".into();
        rewrite(&conn, all, 2);
        assert!(
            broken(&conn).contains("stored tree hash"),
            "{}",
            broken(&conn)
        );
        // The tree recomputed from the rewritten rows: the signed checkpoints still differ.
        conn.execute_batch("DELETE FROM tlog_hashes").unwrap();
        store::extend(&conn).unwrap();
        let problem = broken(&conn);
        assert!(
            problem.contains("checkpoint of size 6") && problem.contains("changed"),
            "{problem}"
        );
    }
}

#[test]
fn swapping_two_rows_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let conn = checkpointed(&location);
        let mut all = rows(&conn);
        let (four, five) = (all[3].clone(), all[4].clone());
        (all[3].subject, all[3].payload) = (five.subject, five.payload);
        (all[4].subject, all[4].payload) = (four.subject, four.payload);
        rewrite(&conn, all, 3);
        conn.execute_batch("DELETE FROM tlog_hashes").unwrap();
        store::extend(&conn).unwrap();
        assert!(
            broken(&conn).contains("checkpoint of size 6"),
            "{}",
            broken(&conn)
        );
    }
}

#[test]
fn a_checkpoint_signed_by_another_key_or_edited_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let conn = checkpointed(&location);
        let other = ServerKey::from_seed("kd-passport-1", [1; 32]);
        assert!(check::check(&conn, Some(&other)).unwrap().is_err());
        conn.execute_batch("UPDATE tlog_checkpoints SET note = replace(note, 'hub.example', 'hub.evil') WHERE size = 6")
            .unwrap();
        assert!(
            broken(&conn).contains("checkpoint of size 6"),
            "{}",
            broken(&conn)
        );
    }
}

/// The RFC 6962 root of `rows`, computed in memory.
fn root_of(rows: &[EventRow]) -> Hash {
    let leaves: Vec<Hash> = rows
        .iter()
        .map(|row| event_leaf(&row.row_hash).unwrap())
        .collect();
    let mut tree = MemHashes::default();
    proof::append(&mut tree, 0, &leaves).unwrap();
    proof::root(&mut tree, leaves.len() as u64).unwrap()
}

/// Every stored hash is 32 raw bytes.
fn assert_raw_hashes(conn: &Connection) {
    let stored: Vec<Vec<u8>> = conn
        .prepare_cached("SELECT hash FROM tlog_hashes")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!stored.is_empty());
    assert!(stored.iter().all(|hash| hash.len() == 32), "{stored:?}");
}

fn test_event(n: i64) -> NewEvent {
    NewEvent {
        kind: "test.event",
        actor: "hub".into(),
        subject: format!("s{n}"),
        payload: serde_json::json!({ "n": n }),
    }
}

/// Decision 272: the writer's kept right edge follows a checkpoint job's own extend in the
/// middle of a batch, a refused job's rolled-back row, and hashes deleted behind its back.
#[test]
fn the_writer_s_kept_tree_follows_checkpoints_refusals_and_deleted_hashes() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = Store::open_at(
            &location,
            Arc::new(ManualClock::new(1_000)),
            StoreMetrics::default(),
        )
        .unwrap();
        let rt = runtime();
        append(&store, 0, 5);
        assert_eq!(publish(&store), 5);
        append(&store, 5, 3);
        // One job appends, publishes a checkpoint (extending the tree itself), appends again.
        let signer = key();
        let published = rt
            .block_on(store.write(move |txn| {
                txn.append(test_event(100))?;
                let now = txn.now_ms();
                let checkpoint = store::publish(txn.conn(), &signer, ORIGIN, now)?;
                txn.append(test_event(101))?;
                Ok::<_, StoreError>(checkpoint.map(|checkpoint| checkpoint.size))
            }))
            .unwrap()
            .unwrap();
        assert_eq!(published, Some(9));
        // A refused job's row is rolled back and is no leaf.
        let refused = rt
            .block_on(store.write(|txn| {
                txn.append(test_event(200))?;
                Err::<(), StoreError>(StoreError::Invalid("refused".into()))
            }))
            .unwrap();
        assert!(refused.is_err());
        append(&store, 10, 2);
        // Hashes deleted behind the writer's back (as the CLI's tamper tests do): the next
        // batch finds a stored size other than its own and rebuilds from the rows.
        Connection::open(&location)
            .unwrap()
            .execute_batch("DELETE FROM tlog_hashes")
            .unwrap();
        append(&store, 12, 2);
        assert_eq!(publish(&store), 14);
        append(&store, 14, 3);
        store.close();
        let conn = Connection::open(&location).unwrap();
        let all = rows(&conn);
        assert_eq!(all.len(), 17, "{location:?}");
        assert_eq!(store::size(&conn).unwrap(), 17);
        let report = check::check(&conn, Some(&key())).unwrap().unwrap();
        assert_eq!(report.size, 17);
        let mut stored = store::DbHashes::new(&conn);
        assert_eq!(proof::root(&mut stored, 17).unwrap(), root_of(&all));
        assert_eq!(proof::root(&mut stored, 9).unwrap(), root_of(&all[..9]));
        assert_raw_hashes(&conn);
    }
}

/// The stored hashes of schema 18: 64 hex characters.
struct HexRows<'c>(&'c Connection);

impl Hashes for HexRows<'_> {
    fn hash_at(&mut self, level: u32, index: u64) -> Result<Hash, StoreError> {
        store::DbHashes::new(self.0).hash_at(level, index)
    }

    fn put(&mut self, level: u32, index: u64, hash: &Hash) -> Result<(), StoreError> {
        self.0.execute(
            "INSERT INTO tlog_hashes (level, idx, hash) VALUES (?1, ?2, ?3)",
            params![i64::from(level), index as i64, hex::encode(hash)],
        )?;
        Ok(())
    }
}

/// A database at schema 18 (hashes as hex) holding 7 events and their tree.
fn version_18(location: &Location) -> Connection {
    let conn = Connection::open(location).unwrap();
    for source in &migrate::MIGRATIONS[..18] {
        conn.execute_batch(&dialect::migration_text(source, conn.backend()))
            .unwrap();
    }
    match conn.backend() {
        Backend::Sqlite => conn.execute_batch("PRAGMA user_version = 18").unwrap(),
        Backend::Postgres => {
            migrate::version(&conn).unwrap();
            for version in 1..=18_i64 {
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_ms) VALUES (?1, 0)",
                    [version],
                )
                .unwrap();
            }
        }
    }
    assert_eq!(migrate::version(&conn).unwrap(), 18);
    let mut head = ChainHead::load(&conn).unwrap();
    let mut leaves = Vec::new();
    for n in 0..7 {
        let row = eventlog::append(&conn, &mut head, 1_000 + n, test_event(n)).unwrap();
        leaves.push(event_leaf(&row.row_hash).unwrap());
    }
    proof::append(&mut HexRows(&conn), 0, &leaves).unwrap();
    conn
}

/// Decision 271: a schema-18 database (hex hashes) still verifies read-only, as `ledger
/// verify` opens it, and migrating it to 19 turns every hash into its 32 bytes, the tree
/// unchanged.
#[test]
fn a_schema_18_tree_of_hex_hashes_verifies_and_migrates_to_raw_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let conn = version_18(&location);
        let all = rows(&conn);
        let hex: String = conn
            .query_row(
                "SELECT hash FROM tlog_hashes WHERE level = 0 AND idx = 0",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(hex.len(), 64);
        let report = check::check(&conn, None).unwrap().unwrap();
        assert_eq!((report.size, report.behind), (7, 0), "{location:?}");
        let old_root = proof::root(&mut store::DbHashes::new(&conn), 7).unwrap();
        assert_eq!(old_root, root_of(&all));
        let proof_before = serve::inclusion(&conn, 3, Some(7)).unwrap().unwrap();

        // As a hub does, on a connection of its own (PostgreSQL's cached plans would name
        // the old column type).
        drop(conn);
        let conn = Connection::open(&location).unwrap();
        migrate::migrate(&conn, 2_000).unwrap();
        assert_eq!(migrate::version(&conn).unwrap(), migrate::latest());
        assert_raw_hashes(&conn);
        let first: Vec<u8> = conn
            .query_row(
                "SELECT hash FROM tlog_hashes WHERE level = 0 AND idx = 0",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(hex::encode(first), hex);
        let kind = match location.backend() {
            Backend::Sqlite => "SELECT typeof(hash) FROM tlog_hashes LIMIT 1",
            Backend::Postgres => {
                "SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'tlog_hashes' AND column_name = 'hash'"
            }
        };
        let kind: String = conn.query_row(kind, [], |row| row.get(0)).unwrap();
        assert!(kind == "blob" || kind == "bytea", "{kind}");
        let report = check::check(&conn, None).unwrap().unwrap();
        assert_eq!(report.size, 7);
        assert_eq!(
            proof::root(&mut store::DbHashes::new(&conn), 7).unwrap(),
            old_root
        );
        assert_eq!(
            serve::inclusion(&conn, 3, Some(7)).unwrap().unwrap(),
            proof_before
        );
        // The writer goes on from the migrated tree.
        drop(conn);
        let store = Store::open_at(
            &location,
            Arc::new(ManualClock::new(3_000)),
            StoreMetrics::default(),
        )
        .unwrap();
        append(&store, 7, 3);
        store.close();
        let conn = Connection::open(&location).unwrap();
        let all = rows(&conn);
        assert_eq!(
            proof::root(&mut store::DbHashes::new(&conn), 10).unwrap(),
            root_of(&all)
        );
        check::check(&conn, None).unwrap().unwrap();
    }
}

/// A job that holds the writer for 300 ms (event 10) while five more queue (events 11-15,
/// the third refused), so the five are committed in one batch: each job's seq and batch slot.
fn one_batch_of_six(store: &Store) -> Vec<Result<(i64, super::receipt::BatchSlot), StoreError>> {
    let rt = runtime();
    rt.block_on(async {
        let blocker = store.write(|txn| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let row = txn.append(test_event(10))?;
            Ok::<_, StoreError>((row.seq, txn.batch_slot()))
        });
        let queued: Vec<_> = (11..16)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    store
                        .write(move |txn| {
                            let row = txn.append(test_event(n))?;
                            if n == 13 {
                                return Err(StoreError::Invalid("refused".into()));
                            }
                            Ok((row.seq, txn.batch_slot()))
                        })
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut all = vec![blocker.await.unwrap()];
        for handle in queued {
            all.push(handle.await.unwrap());
        }
        all
    })
}

/// Decision 258: the jobs the writer commits in one batch share one [`super::receipt::Batch`]
/// over the rows they kept (a refused job's row is no leaf), signed once; each job's receipt
/// proves its row under the batch root, which is RFC 6962's root over exactly those rows.
#[test]
fn the_jobs_of_one_batch_share_one_signed_batch_over_the_rows_they_kept() {
    use super::receipt::{self, BatchSlot, Verifier};
    let dir = tempfile::tempdir().unwrap();
    for location in locations(dir.path()) {
        let store = Store::open_at(
            &location,
            Arc::new(ManualClock::new(1_000)),
            StoreMetrics::default(),
        )
        .unwrap();
        append(&store, 0, 3);
        let written = one_batch_of_six(&store);
        let mut kept: Vec<(i64, BatchSlot)> = written.into_iter().filter_map(Result::ok).collect();
        kept.sort_by_key(|(seq, _)| *seq);
        assert_eq!(kept.len(), 5, "{location:?}");
        let (seqs, slots): (Vec<i64>, Vec<BatchSlot>) = kept.into_iter().unzip();
        assert_eq!(
            seqs,
            vec![4, 5, 6, 7, 8],
            "the refused row's seq was reused"
        );
        let batch = slots[1].get().unwrap();
        assert!(
            slots[1..]
                .iter()
                .all(|slot| Arc::ptr_eq(slot.get().unwrap(), batch))
        );
        assert!(!Arc::ptr_eq(slots[0].get().unwrap(), batch));
        let signer = key();
        let public_key = signer.public_key_bytes();
        let verifier = Verifier {
            key_id: signer.key_id(),
            public_key: &public_key,
        };
        let receipts: Vec<_> = seqs[1..]
            .iter()
            .map(|seq| {
                batch
                    .receipt(&signer, ORIGIN, "https://hub.example", *seq)
                    .unwrap()
            })
            .collect();
        store.close();
        let conn = Connection::open(&location).unwrap();
        let all = rows(&conn);
        for receipt in &receipts {
            assert_eq!(receipt["batch"], receipts[0]["batch"]);
            let signed = receipt::verify_receipt(verifier, receipt).unwrap();
            assert_eq!(
                (signed.first_seq, signed.size, signed.time_ms),
                (5, 4, 1_000)
            );
            assert_eq!(signed.root, root_of(&all[4..8]));
        }
        assert!(batch.receipt(&signer, ORIGIN, "https://h", 4).is_none());
    }
}
