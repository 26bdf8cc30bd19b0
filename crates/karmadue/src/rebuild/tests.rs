//! The table lists name every table once.

use std::collections::BTreeSet;

use super::*;

#[test]
fn rebuilt_and_not_rebuilt_name_every_table_of_the_migrations_once() {
    let dir = tempfile::tempdir().unwrap();
    let conn = scratch(&dir.path().join("s.sqlite")).unwrap();
    let mut tables = BTreeSet::new();
    conn.prepare_cached(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .unwrap()
    .for_each([], |row| {
        tables.insert(row.get::<String>(0)?);
        Ok(())
    })
    .unwrap();
    // PostgreSQL's migration bookkeeping (SQLite keeps user_version instead).
    tables.insert("schema_migrations".to_owned());
    let mut named = BTreeSet::new();
    for table in REBUILT
        .iter()
        .map(|projection| projection.table)
        .chain(NOT_REBUILT.iter().map(|(table, _)| *table))
    {
        assert!(named.insert(table.to_owned()), "{table} is named twice");
    }
    assert_eq!(named, tables);
    for projection in REBUILT {
        for key in projection.key {
            assert!(
                projection.columns.contains(key),
                "{}: key {key} not compared",
                projection.table
            );
        }
    }
}
