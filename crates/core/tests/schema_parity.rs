//! The migrations make the same schema on both backends: the same tables, columns (with
//! matching types, nullability and defaults), primary keys, unique constraints and indexes,
//! after migrating from empty. Runs when `KD_TEST_PG_URL` names a server (required with
//! `KD_REQUIRE_PG=1`, as scripts/test sets).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;

use kd_core::db::{Backend, Connection, Location, migrate};

/// table -> column -> (type family, not null, default, primary key position)
type Columns = BTreeMap<String, BTreeMap<String, (String, bool, Option<String>, i64)>>;

fn family(declared: &str) -> String {
    match declared.to_ascii_lowercase().as_str() {
        "integer" | "bigint" => "integer".into(),
        "text" => "text".into(),
        "real" | "double precision" => "real".into(),
        "blob" | "bytea" => "blob".into(),
        other => other.into(),
    }
}

fn sqlite_columns(conn: &Connection) -> Columns {
    let tables: Vec<String> = conn
        .prepare_cached(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut all = Columns::new();
    for table in tables {
        let columns = conn
            .prepare_cached(&format!(
                "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('{table}')"
            ))
            .unwrap()
            .query_map([], |row| {
                Ok((
                    row.get::<String>(0)?,
                    (
                        family(&row.get::<String>(1)?),
                        row.get::<bool>(2)? || row.get::<i64>(4)? > 0,
                        row.get::<Option<String>>(3)?,
                        row.get::<i64>(4)?,
                    ),
                ))
            })
            .unwrap()
            .collect::<Result<BTreeMap<_, _>, _>>()
            .unwrap();
        all.insert(table, columns);
    }
    all
}

fn postgres_columns(conn: &Connection) -> Columns {
    let rows = conn
        .prepare_cached(
            "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO', c.column_default,
                    COALESCE((SELECT k.ordinal_position FROM information_schema.key_column_usage k
                              JOIN information_schema.table_constraints t
                                ON t.constraint_name = k.constraint_name AND t.table_name = k.table_name
                              WHERE t.constraint_type = 'PRIMARY KEY' AND k.table_name = c.table_name
                                AND k.column_name = c.column_name), 0)
             FROM information_schema.columns c
             WHERE c.table_schema = current_schema() AND c.table_name <> 'schema_migrations'
             ORDER BY c.table_name, c.column_name",
        )
        .unwrap()
        .query_map([], |row| {
            Ok((
                row.get::<String>(0)?,
                row.get::<String>(1)?,
                (
                    family(&row.get::<String>(2)?),
                    row.get::<bool>(3)?,
                    row.get::<Option<String>>(4)?,
                    row.get::<i64>(5)?,
                ),
            ))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let mut all = Columns::new();
    for (table, column, shape) in rows {
        all.entry(table).or_default().insert(column, shape);
    }
    all
}

/// index name -> (table, unique, partial), from a query of (name, table, CREATE INDEX text).
fn indexes(conn: &Connection, sql: &str) -> BTreeMap<String, (String, bool, bool)> {
    conn.prepare_cached(sql)
        .unwrap()
        .query_map([], |row| {
            let text = row.get::<String>(2)?.to_ascii_uppercase();
            Ok((
                row.get::<String>(0)?,
                (
                    row.get::<String>(1)?,
                    text.starts_with("CREATE UNIQUE"),
                    text.contains(" WHERE "),
                ),
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn sqlite_indexes(conn: &Connection) -> BTreeMap<String, (String, bool, bool)> {
    indexes(
        conn,
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
    )
}

/// The indexes of the schema, without those backing a constraint (primary keys, UNIQUE).
fn postgres_indexes(conn: &Connection) -> BTreeMap<String, (String, bool, bool)> {
    indexes(
        conn,
        "SELECT indexname, tablename, indexdef FROM pg_indexes
         WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'
           AND indexname NOT IN (SELECT conname FROM pg_constraint)",
    )
}

/// Unique constraints declared inline (`UNIQUE` on a column): (table, column).
fn sqlite_unique_columns(conn: &Connection) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (table, _) in sqlite_columns(conn) {
        let indexes: Vec<(String, String)> = conn
            .prepare_cached(&format!(
                "SELECT name, origin FROM pragma_index_list('{table}')"
            ))
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (index, origin) in indexes {
            if origin == "u" {
                let columns: Vec<String> = conn
                    .prepare_cached(&format!("SELECT name FROM pragma_index_info('{index}')"))
                    .unwrap()
                    .query_map([], |row| row.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                found.push((table.clone(), columns.join(",")));
            }
        }
    }
    found.sort();
    found
}

fn postgres_unique_columns(conn: &Connection) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = conn
        .prepare_cached(
            "SELECT t.table_name, string_agg(k.column_name, ',' ORDER BY k.ordinal_position)
             FROM information_schema.table_constraints t
             JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name
             WHERE t.constraint_type = 'UNIQUE' AND t.table_schema = current_schema()
             GROUP BY t.table_name, t.constraint_name",
        )
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    found.sort();
    found
}

/// Every column of every table has the same type, NOT NULL, primary key position and default
/// literal on both backends (the tables and their column names already compared equal).
fn assert_same_columns(lite: &Columns, pg: &Columns) {
    for (table, columns) in lite {
        let other = &pg[table];
        assert_eq!(
            columns.keys().collect::<Vec<_>>(),
            other.keys().collect::<Vec<_>>(),
            "columns of {table}"
        );
        for (column, (kind, not_null, default, pk)) in columns {
            let (other_kind, other_not_null, other_default, other_pk) = &other[column];
            assert_eq!(kind, other_kind, "{table}.{column} type");
            assert_eq!(not_null, other_not_null, "{table}.{column} NOT NULL");
            assert_eq!(pk, other_pk, "{table}.{column} primary key position");
            // Defaults print differently ('[]' vs '[]'::text): compare the literal.
            let literal = |text: &Option<String>| {
                text.as_deref()
                    .map(|text| text.split("::").next().unwrap_or(text).to_owned())
            };
            assert_eq!(
                literal(default),
                literal(other_default),
                "{table}.{column} default"
            );
        }
    }
}

#[test]
fn both_backends_migrate_to_the_same_schema() {
    let Some(url) = kd_core::db::testing::scratch_postgres() else {
        eprintln!("skipped: no PostgreSQL (KD_TEST_PG_URL)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Connection::open_sqlite(dir.path().join("parity.sqlite")).unwrap();
    let postgres = Connection::open(&Location::Postgres(url)).unwrap();
    for conn in [&sqlite, &postgres] {
        migrate::migrate(conn, 0).unwrap();
        assert_eq!(migrate::version(conn).unwrap(), migrate::latest());
        // Migrating again is a no-op.
        migrate::migrate(conn, 0).unwrap();
    }
    assert_eq!(sqlite.backend(), Backend::Sqlite);

    let lite = sqlite_columns(&sqlite);
    let mut pg = postgres_columns(&postgres);
    // PostgreSQL's stand-in for SQLite's implicit rowid (migrations 0002, 0003).
    for table in ["resources", "outcome_reports"] {
        let rowid = pg.get_mut(table).unwrap().remove("rowid").unwrap();
        assert_eq!(rowid.0, "integer");
    }
    assert_eq!(
        lite.keys().collect::<Vec<_>>(),
        pg.keys().collect::<Vec<_>>(),
        "the same tables"
    );
    assert_same_columns(&lite, &pg);
    let mut pg_indexes = postgres_indexes(&postgres);
    pg_indexes.remove("resources_rowid");
    pg_indexes.remove("outcome_reports_rowid");
    assert_eq!(sqlite_indexes(&sqlite), pg_indexes, "the same indexes");
    assert_eq!(
        sqlite_unique_columns(&sqlite),
        postgres_unique_columns(&postgres),
        "the same unique constraints"
    );
    // The append-only guards exist on both.
    for (table, insert) in [
        (
            "events",
            "INSERT INTO events (seq, prev_hash, row_hash, kind, actor, subject, payload, created_ms) VALUES (1, 'p', 'r', 'k', 'a', 's', '{}', 0)",
        ),
        (
            "log_heads",
            "INSERT INTO log_heads (day, seq, row_hash, signed_text, signature, key_id, published_ms) VALUES ('2026-01-01', 1, 'r', 't', 's', 'k', 0)",
        ),
        (
            "ronin_events",
            "INSERT INTO ronin_events (id, pubkey, kind, created_at, event_json, received_ms, log_seq) VALUES ('i', 'p', 1, 0, '{}', 0, 1)",
        ),
    ] {
        for conn in [&sqlite, &postgres] {
            conn.execute(insert, []).unwrap();
            for change in [
                format!("DELETE FROM {table}"),
                format!("UPDATE {table} SET created_ms = 1"),
            ] {
                let change = change
                    .replace(
                        "created_ms",
                        if table == "events" {
                            "created_ms"
                        } else {
                            "received_ms"
                        },
                    )
                    .replace("log_heads SET received_ms", "log_heads SET published_ms");
                let refused = conn.execute(&change, []).unwrap_err();
                assert!(
                    refused.to_string().contains("append-only"),
                    "{change}: {refused}"
                );
            }
        }
    }
}
