//! The storage seam holds: the database drivers are named only inside `kd_core::db`
//! (DESIGN rule 7; docs/architecture.md "The storage seam"). Every other file reaches the
//! database through `kd_core::db::Connection`, so the one suite runs on SQLite and PostgreSQL.

/// Files that may name a driver, and why.
const ALLOWED: &[&str] = &[
    // The seam itself.
    "crates/core/src/db/",
    "crates/core/Cargo.toml",
    // kd-protocol's differential test prints jsonb on a real server; kd-protocol sits below
    // kd-core and cannot use the seam.
    "crates/protocol/tests/pg_differential.rs",
    "crates/protocol/Cargo.toml",
    // This lint.
    "crates/karmadue/tests/api/seam.rs",
];

fn names_a_driver(text: &str) -> Option<&'static str> {
    for needle in [
        "rusqlite",
        "postgres::",
        "use postgres",
        "tokio_postgres",
        "tokio-postgres",
    ] {
        if text.contains(needle) {
            return Some(needle);
        }
    }
    // A dependency line in a manifest: `postgres = …` or `postgres.workspace = true`.
    text.lines()
        .any(|line| {
            let line = line.trim_start();
            line.starts_with("postgres =") || line.starts_with("postgres.")
        })
        .then_some("a postgres dependency")
}

#[test]
fn only_the_seam_names_the_database_drivers() {
    let files = crate::sql::workspace_files(|path| {
        path.extension().is_some_and(|ext| ext == "rs")
            || path.file_name().is_some_and(|name| name == "Cargo.toml")
    });
    let mut offenders = Vec::new();
    let mut checked = 0;
    for (relative, path) in &files {
        if ALLOWED.iter().any(|allowed| relative.starts_with(allowed)) {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(path).unwrap();
        if let Some(found) = names_a_driver(&text) {
            offenders.push(format!("{relative}: {found}"));
        }
    }
    assert!(checked > 50, "the lint read only {checked} files");
    assert!(
        offenders.is_empty(),
        "drivers named outside kd_core::db: {offenders:?}"
    );
}

#[test]
fn the_lint_sees_each_way_of_naming_a_driver() {
    for text in [
        "use rusqlite::Connection;",
        "let x: rusqlite::Result<()> = todo!();",
        "postgres::Client::connect(url, NoTls)",
        "use postgres::NoTls;",
        "[dependencies]\npostgres.workspace = true\n",
        "[dependencies]\npostgres = \"0.19\"\n",
    ] {
        assert!(names_a_driver(text).is_some(), "{text}");
    }
    for text in [
        "let url = \"postgres://u@h/db\";",
        "/// runs on PostgreSQL too",
        "kd_core::db::Connection::open(&location)",
    ] {
        assert!(names_a_driver(text).is_none(), "{text}");
    }
}
