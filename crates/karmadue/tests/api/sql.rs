//! Lints over the project's own SQL text.

/// A bound parameter as the row count of a `LIMIT` makes SQLite (3.50, bundled) compile the
/// statement again every time the parameter is bound (it plans by the count), so a cached
/// statement cost a fresh prepare per call: 12 µs instead of 1 µs single-threaded, about
/// 0.5 ms under 64 concurrent readers (docs/performance.md "Reads"; decision 102). The SQL
/// writes `LIMIT CAST(?N AS BIGINT)` instead (BIGINT: the same 64-bit integer on PostgreSQL), which SQLite does not plan by. (A bound OFFSET
/// does not re-prepare.) This lint reads every Rust file of the workspace for a `LIMIT` (any
/// case) whose count is a bare parameter (`?N`, `:name`, `@name`, `$name`, or one in
/// parentheses), in either form (`LIMIT n` or `LIMIT offset, n`).
#[test]
fn no_sql_binds_a_bare_limit_count() {
    let mut offenders = Vec::new();
    let files = workspace_files(|path| {
        path.extension().is_some_and(|ext| ext == "rs")
            // This file's own examples are SQL on purpose.
            && !path.ends_with("tests/api/sql.rs")
    });
    for (relative, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        for count in limit_counts(&text) {
            if bare_parameter(count) {
                offenders.push(format!("{relative}: LIMIT {count}"));
            }
        }
    }
    assert!(
        files.len() > 50,
        "the lint found only {} source files",
        files.len()
    );
    assert!(offenders.is_empty(), "bare LIMIT parameters: {offenders:?}");
}

/// The files under `crates/` and `bench/` that `keep` accepts, as (path relative to the
/// workspace, path), for the lints over the project's own text.
pub(crate) fn workspace_files(
    keep: impl Fn(&std::path::Path) -> bool,
) -> Vec<(String, std::path::PathBuf)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut files = Vec::new();
    let mut stack = vec![root.join("crates"), root.join("bench")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if keep(&path) {
                let relative = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((relative, path));
            }
        }
    }
    files
}

/// The row-count operand of every `LIMIT` in `text`, as a whitespace-separated token.
fn limit_counts(text: &str) -> Vec<&str> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut counts = Vec::new();
    for (at, word) in words.iter().enumerate() {
        if !word.eq_ignore_ascii_case("limit") {
            continue;
        }
        match words.get(at + 1) {
            // `LIMIT offset, count`: the count comes second. A count that ends a string
            // literal (`LIMIT ?2",`) is followed by the literal's comma, not a count.
            Some(first) if first.ends_with(',') && !first.ends_with("\",") => {
                counts.extend(words.get(at + 2));
            }
            Some(first) => counts.push(*first),
            None => {}
        }
    }
    counts
}

fn bare_parameter(token: &str) -> bool {
    let token = token.trim_start_matches('(');
    token.starts_with(['?', ':', '@', '$'])
}

#[test]
fn the_lint_sees_each_form_of_a_bare_limit_count() {
    let flagged = |sql: &str| limit_counts(sql).into_iter().any(bare_parameter);
    for sql in [
        "SELECT 1 LIMIT ?2",
        "select 1 limit ?2",
        "SELECT 1 LIMIT\n   ?2",
        "SELECT 1 LIMIT (?2)",
        "SELECT 1 LIMIT :count",
        "SELECT 1 LIMIT 3, ?1",
        "conn.prepare_cached(\"SELECT 1 LIMIT ?2\",",
    ] {
        assert!(flagged(sql), "{sql}");
    }
    for sql in [
        "SELECT 1 LIMIT CAST(?2 AS INTEGER)",
        "SELECT 1 LIMIT 50 OFFSET ?3",
        "SELECT 1 LIMIT ?1, 3",
        "SELECT 1 LIMIT 1",
    ] {
        assert!(!flagged(sql), "{sql}");
    }
}
