//! `karmadue ledger copy --from <sqlite file> --to postgres://…`: moves a hub from SQLite to
//! PostgreSQL.
//!
//! The source is only read, in one snapshot. The target must hold no rows in any of the hub's
//! tables; it is migrated, then every table of the source (the event log first, in `seq`
//! order) is copied column by column in one transaction that also holds the chain-head lock,
//! so no hub on the target can write meanwhile. Before that transaction commits, the chain is
//! verified on the target and every table's row count compared with the source; any mismatch
//! rolls the whole copy back. SQLite's implicit `rowid` of `resources` and `outcome_reports`
//! goes into the identity column of the same name on PostgreSQL, and its sequence is moved
//! past the largest copied value, so insertion order survives the move.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use kd_core::db::{Connection, DbError, Location, Value, dialect, migrate};

/// Flags of `karmadue ledger copy`.
#[derive(Debug, clap::Args)]
pub struct CopyArgs {
    /// The hub's SQLite database (a file, or the data folder holding karmadue.sqlite). It is
    /// only read; stop the hub first, or the writes after the copy's snapshot stay behind.
    #[arg(long)]
    from: PathBuf,
    /// The PostgreSQL database to fill (postgres://user:password@host:port/database). It
    /// must hold no rows in the hub's tables; it is migrated first.
    #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
    to: String,
}

/// Most rows one INSERT carries (fewer for wide tables: see [`batch_rows`]).
const BATCH_ROWS: usize = 500;

/// One table to copy.
struct Table {
    name: String,
    /// The source columns selected, in order (`rowid` last when [`Table::rowid`]).
    columns: Vec<String>,
    /// The target's data type of each column (`information_schema.columns.data_type`).
    types: Vec<String>,
    /// Whether SQLite's rowid goes into the target's identity column `rowid`.
    rowid: bool,
    /// Rows in the source snapshot.
    rows: i64,
}

/// Runs `karmadue ledger copy`.
///
/// # Errors
/// Bad flags, a source that is not a current hub database, a target that already holds hub
/// rows, or a database failure; nothing is written to the target in any of these cases
/// (except its migrations, when the failure comes after them).
pub fn run(args: CopyArgs) -> anyhow::Result<ExitCode> {
    let Location::Postgres(url) = Location::parse(&args.to) else {
        bail!("--to must be a PostgreSQL URL (postgres://user:password@host:port/database)");
    };
    let target_name = kd_core::db::redact_url(&url);
    let path = source_path(&args.from)?;
    let source = Connection::open_sqlite_read_only(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    dialect::begin_read(&source)?;
    let names = source_tables(&source, &path)?;
    let target = Connection::open(&Location::Postgres(url.clone()))
        .with_context(|| format!("cannot connect to {target_name}"))?;
    refuse_occupied(&target, &names, &target_name)?;
    migrate::migrate(&target, now_ms()).with_context(|| format!("migrating {target_name}"))?;
    let tables = plan(&source, &target, &names)?;
    let head = source_head(&source)?;
    let started = Instant::now();
    dialect::begin_write(&target)?;
    // A hub may have started on the target since the first look: look again under the lock.
    if let Err(error) = refuse_occupied(&target, &names, &target_name) {
        target.execute_batch("ROLLBACK")?;
        return Err(error);
    }
    let copied = match copy_all(&source, &target, &tables) {
        Ok(copied) => copied,
        Err(error) => {
            let _ = target.execute_batch("ROLLBACK");
            return Err(error.context("nothing was copied"));
        }
    };
    let problems = check(&target, &tables, head.as_ref())?;
    if !problems.is_empty() {
        target.execute_batch("ROLLBACK")?;
        for problem in &problems {
            println!("mismatch: {problem}");
        }
        println!("nothing was copied: {target_name} is migrated and holds no hub rows");
        return Ok(ExitCode::FAILURE);
    }
    target.execute_batch("COMMIT")?;
    dialect::end_read(&source)?;
    report(&url, &tables, copied, started, head.as_ref())
}

/// The SQLite file `from` names: the file itself, or `karmadue.sqlite` in a data folder.
fn source_path(from: &Path) -> anyhow::Result<PathBuf> {
    let path = if from.is_dir() {
        from.join("karmadue.sqlite")
    } else {
        from.to_owned()
    };
    if !path.is_file() {
        bail!("--from: no SQLite database at {}", path.display());
    }
    Ok(path)
}

/// The source's tables (not SQLite's own), `events` first; refuses a file that is not a hub
/// database at this binary's schema version.
fn source_tables(source: &Connection, path: &Path) -> anyhow::Result<Vec<String>> {
    let version = migrate::version(source)
        .with_context(|| format!("{} is not a SQLite database", path.display()))?;
    let latest = migrate::latest();
    if version != latest {
        bail!(
            "{} is at schema version {version}; this karmadue copies version {latest} (run `karmadue serve` on it once with this binary first)",
            path.display()
        );
    }
    let mut statement = source.prepare_cached(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )?;
    let mut names = statement
        .query_map([], |row| row.get::<String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let Some(at) = names.iter().position(|name| name == "events") else {
        bail!("{} has no events table: not a KarmaDue hub", path.display());
    };
    let events = names.remove(at);
    names.insert(0, events);
    Ok(names)
}

/// Fails naming the hub tables of `target` that already hold rows.
fn refuse_occupied(target: &Connection, names: &[String], target_name: &str) -> anyhow::Result<()> {
    let mut occupied = Vec::new();
    for name in names {
        if dialect::table_exists(target, name)? {
            let sql = format!("SELECT EXISTS (SELECT 1 FROM {})", quote(name));
            if target.query_row(&sql, [], |row| row.get::<bool>(0))? {
                occupied.push(name.as_str());
            }
        }
    }
    if occupied.is_empty() {
        return Ok(());
    }
    bail!(
        "{target_name} already holds hub rows (in {}); ledger copy only fills a database without them (a hub started on a database writes its first rows at once: copy into a new database, then start the hub there). Nothing was changed.",
        occupied.join(", ")
    )
}

/// Each table's columns on both sides and its row count in the source snapshot; refuses a
/// source table or column the migrated target lacks.
fn plan(source: &Connection, target: &Connection, names: &[String]) -> anyhow::Result<Vec<Table>> {
    let mut tables = Vec::with_capacity(names.len());
    for name in names {
        let mut statement =
            source.prepare_cached("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
        let mut columns = statement
            .query_map([name], |row| row.get::<String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut statement = target.prepare_cached(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?1",
        )?;
        let target_columns = statement
            .query_map([name], |row| {
                Ok((row.get::<String>(0)?, row.get::<String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        if target_columns.is_empty() {
            bail!("the target has no table {name} after migrating: not the same schema");
        }
        let rowid = !columns.iter().any(|column| column == "rowid")
            && target_columns.iter().any(|(column, _)| column == "rowid");
        if rowid {
            columns.push("rowid".to_owned());
        }
        let mut types = Vec::with_capacity(columns.len());
        for column in &columns {
            match target_columns.iter().find(|(name, _)| name == column) {
                Some((_, ty)) => types.push(ty.clone()),
                None => bail!("the target's table {name} has no column {column}"),
            }
        }
        let sql = format!("SELECT COUNT(*) FROM {}", quote(name));
        let rows = source.query_row(&sql, [], |row| row.get::<i64>(0))?;
        tables.push(Table {
            name: name.clone(),
            columns,
            types,
            rowid,
            rows,
        });
    }
    Ok(tables)
}

/// The source's last event `(seq, row_hash)`, if it has any.
fn source_head(source: &Connection) -> anyhow::Result<Option<(i64, String)>> {
    use kd_core::db::OptionalExtension;
    Ok(source
        .query_row(
            "SELECT seq, row_hash FROM events ORDER BY seq DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?)
}

/// Copies every table with a progress bar (rows, rows/s) and moves the identity sequences;
/// returns the rows written per table.
fn copy_all(
    source: &Connection,
    target: &Connection,
    tables: &[Table],
) -> anyhow::Result<Vec<i64>> {
    let total: i64 = tables.iter().map(|table| table.rows).sum();
    let bar = indicatif::ProgressBar::new(u64::try_from(total).unwrap_or(0));
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:24} [{bar:30}] {human_pos}/{human_len} rows, {per_sec} ({eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let mut copied = Vec::with_capacity(tables.len());
    for table in tables {
        bar.set_message(table.name.clone());
        let rows = copy_table(source, target, table, &bar)
            .with_context(|| format!("copying table {}", table.name))?;
        if table.rowid {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence(?1, 'rowid'), MAX(rowid)) FROM {}",
                quote(&table.name)
            );
            target.query_row(&sql, [&table.name], |_| Ok(()))?;
        }
        copied.push(rows);
    }
    bar.finish_and_clear();
    Ok(copied)
}

/// Rows per INSERT for a table of `columns` columns (PostgreSQL binds at most 65,535).
fn batch_rows(columns: usize) -> usize {
    (30_000 / columns.max(1)).clamp(1, BATCH_ROWS)
}

/// Streams `table` from the source in batches of INSERTs; returns the rows written.
fn copy_table(
    source: &Connection,
    target: &Connection,
    table: &Table,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<i64> {
    let width = table.columns.len();
    let per_batch = batch_rows(width);
    let select = format!(
        "SELECT {} FROM {}{}",
        table
            .columns
            .iter()
            .map(|column| quote(column))
            .collect::<Vec<_>>()
            .join(", "),
        quote(&table.name),
        if table.name == "events" {
            " ORDER BY seq"
        } else if table.rowid {
            " ORDER BY rowid"
        } else {
            ""
        }
    );
    let full = insert_sql(table, per_batch);
    let mut batch: Vec<Value> = Vec::with_capacity(per_batch * width);
    let mut written = 0_i64;
    let mut read = 0_i64;
    let mut statement = source.prepare_cached(&select)?;
    statement.for_each([], |row| {
        read += 1;
        for (index, ty) in table.types.iter().enumerate() {
            let value = fit(row.get::<Value>(index)?, ty).map_err(|why| DbError::Conversion {
                index,
                message: format!("row {read}, column {}: {why}", table.columns[index]),
            })?;
            batch.push(value);
        }
        if batch.len() == per_batch * width {
            written += insert(target, &full, &batch)?;
            bar.inc(u64::try_from(per_batch).unwrap_or(0));
            batch.clear();
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        let rows = batch.len() / width;
        written += insert(target, &insert_sql(table, rows), &batch)?;
        bar.inc(u64::try_from(rows).unwrap_or(0));
    }
    Ok(written)
}

/// `INSERT INTO t (…) VALUES (?1, …), (…)` for `rows` rows.
fn insert_sql(table: &Table, rows: usize) -> String {
    let width = table.columns.len();
    let columns = table
        .columns
        .iter()
        .map(|column| quote(column))
        .collect::<Vec<_>>();
    let tuples = (0..rows)
        .map(|row| {
            let marks = (1..=width)
                .map(|column| format!("?{}", row * width + column))
                .collect::<Vec<_>>();
            format!("({})", marks.join(", "))
        })
        .collect::<Vec<_>>();
    format!(
        "INSERT INTO {} ({}) VALUES {}",
        quote(&table.name),
        columns.join(", "),
        tuples.join(", ")
    )
}

fn insert(target: &Connection, sql: &str, values: &[Value]) -> Result<i64, DbError> {
    let changed = target.execute(sql, kd_core::db::params_from_iter(values))?;
    Ok(i64::try_from(changed).unwrap_or(i64::MAX))
}

/// `value` as the target column of PostgreSQL type `ty` takes it, or why it does not fit
/// (SQLite's STRICT tables already hold the right types; this is the guard for the rest).
fn fit(value: Value, ty: &str) -> Result<Value, String> {
    let fits = match (&value, ty) {
        (Value::Null, _) => true,
        (Value::Integer(_), "bigint" | "integer" | "smallint" | "boolean") => true,
        #[expect(
            clippy::cast_precision_loss,
            reason = "as SQLite reads an INTEGER as REAL"
        )]
        (Value::Integer(number), "double precision" | "real") => {
            return Ok(Value::Real(*number as f64));
        }
        (Value::Real(_), "double precision" | "real") => true,
        (Value::Text(_), "text" | "character varying" | "jsonb" | "json") => true,
        (Value::Blob(_), "bytea") => true,
        (Value::Text(text), "bytea") => return Ok(Value::Blob(text.clone().into_bytes())),
        _ => false,
    };
    if fits {
        Ok(value)
    } else {
        Err(format!("{} does not fit a {ty} column", value.kind()))
    }
}

/// What differs between the source and the target inside the copy's transaction: each
/// table's row count, and the chain as `verify_chain` reads it on the target.
fn check(
    target: &Connection,
    tables: &[Table],
    head: Option<&(i64, String)>,
) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for table in tables {
        let sql = format!("SELECT COUNT(*) FROM {}", quote(&table.name));
        let rows = target.query_row(&sql, [], |row| row.get::<i64>(0))?;
        if rows != table.rows {
            problems.push(format!(
                "table {}: {} rows in the source, {rows} in the target",
                table.name, table.rows
            ));
        }
    }
    match kd_core::eventlog::verify_chain(target)? {
        Err(broken) => problems.push(format!("the chain on the target is broken: {broken}")),
        Ok(report) => {
            let copied = (report.head.seq, report.head.row_hash);
            let expected = head
                .cloned()
                .unwrap_or((0, kd_core::eventlog::GENESIS_HASH.to_owned()));
            if copied != expected {
                problems.push(format!(
                    "the target's chain ends at seq {} row_hash {}, the source's at seq {} row_hash {}",
                    copied.0, copied.1, expected.0, expected.1
                ));
            }
        }
    }
    Ok(problems)
}

/// Prints the summary after the commit, recounting each table on a fresh connection.
fn report(
    url: &str,
    tables: &[Table],
    copied: Vec<i64>,
    started: Instant,
    head: Option<&(i64, String)>,
) -> anyhow::Result<ExitCode> {
    let seconds = started.elapsed().as_secs_f64();
    let total: i64 = copied.iter().sum();
    let target = Connection::open(&Location::Postgres(url.to_owned()))?;
    let mut code = ExitCode::SUCCESS;
    println!("{:<24} {:>10} {:>10}", "table", "source", "target");
    for table in tables {
        let sql = format!("SELECT COUNT(*) FROM {}", quote(&table.name));
        let rows = target.query_row(&sql, [], |row| row.get::<i64>(0))?;
        let mark = if rows == table.rows { "" } else { "  MISMATCH" };
        if rows != table.rows {
            code = ExitCode::FAILURE;
        }
        println!("{:<24} {:>10} {rows:>10}{mark}", table.name, table.rows);
    }
    #[expect(clippy::cast_precision_loss, reason = "a rate for people")]
    let rate = total as f64 / seconds.max(1e-9);
    println!(
        "copied {} tables, {total} rows in {seconds:.1} s ({rate:.0} rows/s) to {}",
        tables.len(),
        kd_core::db::redact_url(url)
    );
    match head {
        Some((seq, hash)) => {
            println!("ok: chain verified on the target: {seq} rows; head seq {seq} row_hash {hash}")
        }
        None => println!("ok: the event log is empty"),
    }
    println!(
        "serve it with `karmadue serve --database-url … --data-dir <the same data folder>` (the server key lives in <data folder>/keys)"
    );
    Ok(code)
}

/// `name` as a quoted SQL identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn now_ms() -> i64 {
    kd_core::clock::Clock::now_ms(&kd_core::clock::SystemClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cross_to_the_target_column_type_or_are_refused_by_name() {
        assert_eq!(fit(Value::Integer(3), "bigint"), Ok(Value::Integer(3)));
        assert_eq!(
            fit(Value::Integer(3), "double precision"),
            Ok(Value::Real(3.0))
        );
        assert_eq!(fit(Value::Null, "text"), Ok(Value::Null));
        assert_eq!(
            fit(Value::Text("a".into()), "bytea"),
            Ok(Value::Blob(b"a".to_vec()))
        );
        assert_eq!(
            fit(Value::Real(1.5), "bigint"),
            Err("a real does not fit a bigint column".to_owned())
        );
        assert_eq!(
            fit(Value::Integer(1), "text"),
            Err("an integer does not fit a text column".to_owned())
        );
    }

    #[test]
    fn inserts_number_every_placeholder_and_quote_every_name() {
        let table = Table {
            name: "t\"x".into(),
            columns: vec!["a".into(), "rowid".into()],
            types: vec!["text".into(), "bigint".into()],
            rowid: true,
            rows: 2,
        };
        assert_eq!(
            insert_sql(&table, 2),
            r#"INSERT INTO "t""x" ("a", "rowid") VALUES (?1, ?2), (?3, ?4)"#
        );
        assert_eq!(batch_rows(1), BATCH_ROWS);
        assert_eq!(batch_rows(200), 150);
    }
}
