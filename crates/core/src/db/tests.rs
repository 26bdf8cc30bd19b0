//! The seam on both backends: binding, reading, errors, streaming. The PostgreSQL half runs
//! when `KD_TEST_PG_URL` names a server (scripts/test starts one) and is required when
//! `KD_REQUIRE_PG=1`.

use super::*;

/// A SQLite file in `dir`, and a fresh PostgreSQL database when a server is configured.
pub(crate) fn connections(dir: &std::path::Path) -> Vec<Connection> {
    let mut all = vec![Connection::open_sqlite(dir.join("t.sqlite")).unwrap()];
    if let Some(url) = crate::db::testing::scratch_postgres() {
        all.push(Connection::open(&Location::Postgres(url)).unwrap());
    }
    all
}

#[test]
fn values_round_trip_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    for conn in connections(dir.path()) {
        let schema = dialect::migration_text(
            "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n INTEGER) STRICT;",
            conn.backend(),
        );
        conn.execute_batch(&schema).unwrap();
        let blob = vec![0_u8, 255, 7];
        let changed = conn
            .execute(
                "INSERT INTO t (i, r, s, b, n) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![i64::MAX, 0.25_f64, "café\n", blob, None::<i64>],
            )
            .unwrap();
        assert_eq!(changed, 1);
        let row: (i64, f64, String, Vec<u8>, Option<i64>) = conn
            .query_row("SELECT i, r, s, b, n FROM t", [], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get("s")?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })
            .unwrap();
        assert_eq!(row, (i64::MAX, 0.25, "café\n".to_owned(), blob, None));
        // Comparisons read as integers on both; SUM and AVG need no cast.
        let (equal, sum, average): (bool, i64, f64) = conn
            .query_row(
                "SELECT MAX(s) = ?1, SUM(CAST(?2 AS BIGINT)), AVG(r) FROM t",
                params!["café\n", 3_i64],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .unwrap();
        assert_eq!((equal, sum, average), (true, 3, 0.25));
        let missing = conn
            .query_row("SELECT i FROM t WHERE s = ?1", ["nobody"], |row| {
                row.get::<i64>(0)
            })
            .optional()
            .unwrap();
        assert_eq!(missing, None, "{:?}", conn.backend());
        let wrong = conn.query_row("SELECT s FROM t", [], |row| row.get::<i64>(0));
        assert!(
            matches!(wrong, Err(DbError::Conversion { .. })),
            "{wrong:?}"
        );
        let unsigned = conn.execute("INSERT INTO t (i) VALUES (?1)", [u64::MAX]);
        assert!(unsigned.is_err(), "u64::MAX does not fit");
    }
}

#[test]
fn constraint_violations_are_named_and_rows_stream_in_order() {
    let dir = tempfile::tempdir().unwrap();
    for conn in connections(dir.path()) {
        conn.execute_batch("CREATE TABLE k (id TEXT PRIMARY KEY, n BIGINT NOT NULL)")
            .unwrap();
        for n in 0..50_i64 {
            conn.execute(
                "INSERT INTO k (id, n) VALUES (?, ?)",
                params![format!("k{n:03}"), n],
            )
            .unwrap();
        }
        let duplicate = conn
            .execute(
                "INSERT INTO k (id, n) VALUES (?1, ?2)",
                params!["k000", 1_i64],
            )
            .unwrap_err();
        assert!(duplicate.is_constraint_violation(), "{duplicate}");
        let ignored = conn
            .execute(
                "INSERT INTO k (id, n) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING",
                params!["k000", 1_i64],
            )
            .unwrap();
        assert_eq!(ignored, 0);
        let mut seen = Vec::new();
        conn.prepare_cached("SELECT n FROM k WHERE n >= ?1 ORDER BY id")
            .unwrap()
            .for_each([10_i64], |row| {
                seen.push(row.get::<i64>(0)?);
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, (10..50).collect::<Vec<_>>());
        let mapped: Vec<String> = conn
            .prepare_cached("SELECT id FROM k ORDER BY n DESC LIMIT CAST(?1 AS BIGINT)")
            .unwrap()
            .query_map([2_i64], |row| row.get(0))
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(mapped, ["k049", "k048"]);
    }
}

#[test]
fn urls_are_redacted_and_rewritten() {
    assert_eq!(
        redact_url("postgres://kd:secret@db.example:5432/hub"),
        "postgres://kd:***@db.example:5432/hub"
    );
    assert_eq!(redact_url("postgres://kd@h/hub"), "postgres://kd@h/hub");
    assert_eq!(
        postgres_url_with_database("postgres://u@127.0.0.1:5/postgres?sslmode=disable", "kd_x"),
        "postgres://u@127.0.0.1:5/kd_x?sslmode=disable"
    );
    assert_eq!(
        postgres_url_with_database("postgres://u@127.0.0.1:5", "kd_x"),
        "postgres://u@127.0.0.1:5/kd_x"
    );
    assert_eq!(
        Location::parse("postgresql://h/d").backend(),
        Backend::Postgres
    );
    assert_eq!(
        Location::parse("sqlite:/tmp/x.sqlite"),
        Location::Sqlite("/tmp/x.sqlite".into())
    );
    assert!(create_postgres_database("postgres://h/d", "Robert'); DROP", None).is_err());
}
