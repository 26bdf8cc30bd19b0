//! Rows by name on both backends (the PostgreSQL half as `db::tests` runs it).

use super::*;
use crate::db::tests::connections;
use crate::db::{OptionalExtension, dialect};

/// A row of the test table, its `label` column read into `name`.
#[derive(Debug, PartialEq)]
struct Item {
    id: String,
    name: Option<String>,
    count: i64,
    flag: bool,
}

crate::db_row! {
    impl FromRow, ToRow for Item { id, label => name, count, flag }
}

/// The same row, borrowed: it binds, and cannot be read.
struct NewItem<'a> {
    id: &'a str,
    count: i64,
}

crate::db_row! {
    impl ToRow for NewItem<'_> { id, count, }
}

fn item(id: &str, count: i64) -> Item {
    Item {
        id: id.to_owned(),
        name: Some(format!("{id}!")),
        count,
        flag: count % 2 == 0,
    }
}

const SCHEMA: &str = "CREATE TABLE items (id TEXT PRIMARY KEY, label TEXT, count BIGINT NOT NULL, flag BIGINT NOT NULL, state TEXT NOT NULL, made BIGINT NOT NULL, seen BIGINT NOT NULL)";

/// A connection of each backend with the empty test table.
fn with_items(dir: &std::path::Path) -> Vec<Connection> {
    let all = connections(dir);
    for conn in &all {
        conn.execute_batch(&dialect::migration_text(SCHEMA, conn.backend()))
            .unwrap();
    }
    all
}

#[test]
fn a_struct_binds_by_its_columns_names_and_reads_back_by_them_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    for conn in with_items(dir.path()) {
        // The placeholders are out of column order, one stands in two columns, a value is a
        // literal, and a later clause reuses one.
        let insert = "INSERT INTO items (count, id, label, flag, state, made, seen)
             VALUES (?2, ?1, ?3, ?4, 'new', ?2, ?2)
             ON CONFLICT (id) DO UPDATE SET count = ?2, label = excluded.label";
        for n in 1..=3 {
            assert_eq!(
                conn.insert_row(insert, &item(&format!("i{n}"), n)).unwrap(),
                1
            );
        }
        let changed = Item {
            name: None,
            ..item("i2", 20)
        };
        assert_eq!(conn.insert_row(insert, &changed).unwrap(), 1);
        // The select list in another order than the struct's, with an alias and an extra.
        let read: Vec<Item> = conn
            .prepare_cached(
                "SELECT made, flag, count, label AS label, id, state FROM items ORDER BY id",
            )
            .unwrap()
            .query_map([], Item::from_row)
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(
            read,
            [item("i1", 1), changed, item("i3", 3)],
            "{:?}",
            conn.backend()
        );
        let (state, seen): (String, i64) = conn
            .query_row("SELECT state, seen FROM items WHERE id = 'i3'", [], |row| {
                Ok((row.get_by_name("STATE")?, row.get("seen")?))
            })
            .unwrap();
        assert_eq!((state.as_str(), seen), ("new", 3));
        let borrowed = NewItem { id: "b", count: 7 };
        conn.insert_row(
            "INSERT INTO items (id, label, count, flag, state, made, seen) VALUES (?1, NULL, ?2, 0, 'b', 0, 0)",
            &borrowed,
        )
        .unwrap();
        let count: Option<i64> = conn
            .query_row("SELECT count FROM items WHERE id = ?1", ["b"], |row| {
                row.get_by_name("count")
            })
            .optional()
            .unwrap();
        assert_eq!(count, Some(7));
    }
}

#[test]
fn a_missing_or_mistyped_column_is_named_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    for conn in with_items(dir.path()) {
        conn.insert_row(
            "INSERT INTO items (id, label, count, flag, state, made, seen) VALUES (?1, ?2, ?3, ?4, 's', 0, 0)",
            &item("a", 1),
        )
        .unwrap();
        let missing = conn.query_row("SELECT id, count, flag FROM items", [], Item::from_row);
        assert!(
            matches!(&missing, Err(DbError::Column { name, .. }) if name == "label"),
            "{missing:?}"
        );
        assert_eq!(
            missing.unwrap_err().to_string(),
            "column label: the result has no column of this name"
        );
        let mistyped = conn.query_row("SELECT id FROM items", [], |row| {
            row.get_by_name::<i64>("id")
        });
        assert!(
            matches!(&mistyped, Err(DbError::Column { name, message }) if name == "id" && message.contains("expected an integer")),
            "{mistyped:?}"
        );
        // The row has no field for a column the insert binds.
        let unbound = conn.insert_row(
            "INSERT INTO items (id, label, count, flag, state, made, seen) VALUES (?1, NULL, ?2, 0, ?3, 0, 0)",
            &NewItem { id: "x", count: 1 },
        );
        assert!(
            matches!(&unbound, Err(DbError::Column { name, .. }) if name == "state"),
            "{unbound:?}"
        );
    }
}

#[test]
fn an_insert_s_placeholders_map_to_its_columns_or_it_is_refused() {
    let columns = |sql| placeholder_columns(sql);
    assert_eq!(
        columns(
            "INSERT INTO t (a, b, c, d) VALUES (?2, 'x, ?9 (', ?1, ?2) ON CONFLICT (a) DO UPDATE SET b = ?1"
        ),
        Ok(vec!["c", "a"])
    );
    assert_eq!(
        columns("insert into t (a,\n  b) values (?1,\n ?2)"),
        Ok(vec!["a", "b"])
    );
    for (sql, why) in [
        (
            "INSERT INTO t (a, b) VALUES (?1, COALESCE(?2, 0))",
            "?2 stands in no column",
        ),
        ("INSERT INTO t (a, b) VALUES (?1, ?3)", "?2 is not used"),
        (
            "INSERT INTO t (a) VALUES (?1, ?2)",
            "1 columns but 2 values",
        ),
        (
            "INSERT INTO t (a) VALUES (?1) RETURNING ?4",
            "?4 stands in no column",
        ),
        ("INSERT INTO t (a) VALUES (?)", "?0 stands in no column"),
        ("INSERT INTO t (a) SELECT 1", "no VALUES"),
        ("UPDATE t SET a = ?1", "no column list"),
    ] {
        let refused = columns(sql).unwrap_err();
        assert!(refused.starts_with(why), "{sql}: {refused}");
    }
}
