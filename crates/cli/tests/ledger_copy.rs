//! `karmadue ledger copy` and `ledger verify --database-url`, through the built binary: a hub
//! made on SQLite is moved to PostgreSQL and served from there; a target with hub rows is
//! refused; a chain that does not verify is rolled back. `karmadue ledger rebuild` finds the
//! projections of a sound hub equal to the log's and names a tampered cell, on both backends. The PostgreSQL tests need
//! `KD_TEST_PG_URL` (an admin URL); without it they say so and pass, unless `KD_REQUIRE_PG=1`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kd_core::db::{Connection, Location};

mod common;

use common::{BIN, Hub};

/// A hub served from `data_dir` (SQLite unless `extra` names a database: a
/// `KARMADUE_DATABASE_URL` of the test environment is not inherited).
fn start_hub(data_dir: &Path, extra: &[&OsStr]) -> Hub {
    let mut command = Command::new(BIN);
    command.env_remove("KARMADUE_DATABASE_URL");
    common::start_hub_as(command, data_dir, extra)
}

fn agent(hub: &Hub, key_file: &Path, args: &[&str]) -> serde_json::Value {
    let output = Command::new(BIN)
        .arg("agent")
        .args(args)
        .env("KARMADUE_HUB", &hub.url)
        .env("KARMADUE_AGENT_FILE", key_file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

fn karmadue(args: &[&OsStr]) -> (Output, String, String) {
    let output = Command::new(BIN)
        .args(args)
        .env_remove("KARMADUE_DATABASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stdout, stderr)
}

fn copy(from: &Path, to: &str) -> (Output, String, String) {
    karmadue(&[
        "ledger".as_ref(),
        "copy".as_ref(),
        "--from".as_ref(),
        from.as_os_str(),
        "--to".as_ref(),
        to.as_ref(),
    ])
}

/// A fresh database on the test server, dropped when the test ends.
struct Scratch {
    admin: String,
    name: String,
    url: String,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = kd_core::db::drop_postgres_database(&self.admin, &self.name);
    }
}

fn scratch() -> Option<Scratch> {
    let Some(admin) = kd_core::db::testing::admin_url() else {
        eprintln!("skipped: KD_TEST_PG_URL is not set (no PostgreSQL server to copy into)");
        return None;
    };
    let name = kd_core::db::testing::fresh_name();
    let url = kd_core::db::create_postgres_database(&admin, &name, None).unwrap();
    Some(Scratch { admin, name, url })
}

fn pg(url: &str) -> Connection {
    Connection::open(&Location::Postgres(url.to_owned())).unwrap()
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
        row.get(0)
    })
    .unwrap()
}

/// A SQLite hub in `dir/data` with an agent (registered, then renamed) and two imported
/// resources; returns the data folder, the agent's key file and id.
fn sqlite_hub_with_activity(dir: &Path) -> (PathBuf, PathBuf, String) {
    let data = dir.join("data");
    let key_file = dir.join("agent.json");
    let hub = start_hub(&data, &[]);
    let registered = agent(&hub, &key_file, &["new", "--name", "Moving Agent"]);
    let agent_id = registered["data"]["agent_id"].as_str().unwrap().to_owned();
    let args = r#"{"name": "Moving Agent Renamed"}"#;
    agent(&hub, &key_file, &["call", "rename_agent", "--args", args]);
    drop(hub);
    let rows = dir.join("rows.jsonl");
    std::fs::write(
        &rows,
        concat!(
            r#"{"id":"kd:res:npm:move-test-one","locator":"npm:move-test-one","title":"move-test-one","type":"package","version":"1.0.0","downloads_a_month":12,"description":"first","selection":"sample"}"#, "\n",
            r#"{"id":"kd:res:npm:move-test-two","locator":"npm:move-test-two","title":"move-test-two","type":"package","version":"2.0.0","downloads_a_month":3,"description":"second","selection":"sample"}"#, "\n",
        ),
    )
    .unwrap();
    let (imported, said, _) = karmadue(&[
        "import".as_ref(),
        "--data-dir".as_ref(),
        data.as_os_str(),
        rows.as_os_str(),
    ]);
    assert!(imported.status.success(), "{said}");
    // Three Linkdbots cards, logged as linkdbots.card_filed (decision 345).
    let tasks = dir.join("swebench.jsonl");
    let task = |n: u32, resolved: bool| {
        format!(
            r#"{{"leaderboard":"bash-only","folder":"20251124_mini-v1.16.0_move-model","instance_id":"repo__repo-{n}","api_calls":9,"cost":0.5,"resolved":{resolved},"source":"SWE-bench/swe-bench.github.io:data/leaderboards.json@f1176b65ae29"}}"#
        )
    };
    std::fs::write(
        &tasks,
        [task(1, true), task(2, false), task(3, true)].join("\n"),
    )
    .unwrap();
    let (imported, said, _) = karmadue(&[
        "linkdbots".as_ref(),
        "import".as_ref(),
        "--data-dir".as_ref(),
        data.as_os_str(),
        tasks.as_os_str(),
    ]);
    assert!(imported.status.success(), "{said}");
    assert!(said.contains("3 cards imported"), "{said}");
    (data, key_file, agent_id)
}

fn resource_order(conn: &Connection) -> Vec<(i64, String)> {
    let mut statement = conn
        .prepare_cached("SELECT rowid, resource_id FROM resources ORDER BY rowid")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

#[test]
fn a_hub_copied_to_postgres_serves_its_agent_and_its_ledger_verifies_there() {
    let Some(target) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, key_file, agent_id) = sqlite_hub_with_activity(dir.path());
    let source = Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    // SQLite's rowids have gaps once rows were deleted: the copy keeps them as they are.
    source
        .execute_batch("UPDATE resources SET rowid = rowid + 10")
        .unwrap();
    let events = count(&source, "events");

    let (copied, said, stderr) = copy(&data.join("karmadue.sqlite"), &target.url);
    assert!(copied.status.success(), "{said} {stderr}");
    println!("{said}");
    assert!(
        said.contains(&format!("ok: chain verified on the target: {events} rows")),
        "{said}"
    );
    assert!(!said.contains("MISMATCH"), "{said}");
    let conn = pg(&target.url);
    assert_eq!(count(&conn, "events"), events);
    // Insertion order survives, and the next resource goes after the copied ones.
    let order = resource_order(&source);
    assert_eq!(
        order.iter().map(|(rowid, _)| *rowid).collect::<Vec<_>>(),
        [11, 12]
    );
    assert_eq!(resource_order(&conn), order);
    let next: i64 = conn
        .query_row(
            "SELECT nextval(pg_get_serial_sequence('resources', 'rowid'))",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(next, order[1].0 + 1);

    let hub = start_hub(&data, &["--database-url".as_ref(), target.url.as_ref()]);
    let verify_url = format!("{}/functions/v1/public-api/v1/verify/{agent_id}", hub.url);
    let text = ureq::get(&verify_url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let verified: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        verified["data"]["display_label"], "Moving Agent Renamed",
        "{text}"
    );
    // The chain goes on from the copied head: a signed write on the PostgreSQL hub.
    let args = r#"{"name": "Moving Agent Arrived"}"#;
    let renamed = agent(&hub, &key_file, &["call", "rename_agent", "--args", args]);
    assert_eq!(renamed["data"]["previous_name"], "Moving Agent Renamed");
    drop(hub);

    let output = Command::new(BIN)
        .args(["ledger", "verify", "--data-dir"])
        .arg(&data)
        .env("KARMADUE_DATABASE_URL", &target.url)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{said}");
    assert!(
        said.starts_with(&format!("ok: {} rows verified", events + 1)),
        "{said}"
    );
    assert!(
        said.contains("daily heads match the log; signatures verified"),
        "{said}"
    );
}

#[test]
fn ledger_verify_on_postgres_names_the_first_corrupted_row() {
    let Some(target) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, _, _) = sqlite_hub_with_activity(dir.path());
    let (copied, said, stderr) = copy(&data, &target.url);
    assert!(copied.status.success(), "{said} {stderr}");
    let verify = || {
        karmadue(&[
            "ledger".as_ref(),
            "verify".as_ref(),
            "--data-dir".as_ref(),
            data.as_os_str(),
            "--database-url".as_ref(),
            target.url.as_ref(),
        ])
    };
    let (sound, said, _) = verify();
    assert!(sound.status.success(), "{said}");
    let conn = pg(&target.url);
    let seq: i64 = conn
        .query_row(
            "SELECT seq FROM events WHERE kind = 'agent.renamed'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_append_only_update ON events;
         UPDATE events SET payload = replace(payload, 'Moving Agent Renamed', 'Moving Agent Forged')
         WHERE kind = 'agent.renamed';",
    )
    .unwrap();
    let (broken, said, _) = verify();
    assert!(!broken.status.success(), "{said}");
    assert!(said.contains(&format!("broken: row {seq}")), "{said}");
    // A database without a hub is named as such, not verified as an empty log.
    let empty = scratch().unwrap();
    let (refused, _, stderr) = karmadue(&[
        "ledger".as_ref(),
        "verify".as_ref(),
        "--database-url".as_ref(),
        empty.url.as_ref(),
    ]);
    assert!(!refused.status.success());
    assert!(stderr.contains("holds no hub"), "{stderr}");
}

#[test]
fn copy_refuses_a_target_that_already_holds_hub_rows_and_changes_nothing() {
    let Some(target) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, _, _) = sqlite_hub_with_activity(dir.path());
    let (first, said, stderr) = copy(&data, &target.url);
    assert!(first.status.success(), "{said} {stderr}");
    let conn = pg(&target.url);
    let before = (
        count(&conn, "events"),
        count(&conn, "agents"),
        count(&conn, "schema_migrations"),
    );
    let (again, _, stderr) = copy(&data, &target.url);
    assert!(!again.status.success());
    assert!(
        stderr.contains("already holds hub rows (in events, "),
        "{stderr}"
    );
    assert!(stderr.contains("Nothing was changed"), "{stderr}");
    let after = (
        count(&conn, "events"),
        count(&conn, "agents"),
        count(&conn, "schema_migrations"),
    );
    assert_eq!(after, before);

    // Rows in any hub table count, not only events; and the refused target is not migrated.
    let other = scratch().unwrap();
    let conn = pg(&other.url);
    conn.execute_batch(
        "CREATE TABLE agents (agent_id TEXT); INSERT INTO agents VALUES ('someone');",
    )
    .unwrap();
    let (refused, _, stderr) = copy(&data, &other.url);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("already holds hub rows (in agents)"),
        "{stderr}"
    );
    assert!(!kd_core::db::dialect::table_exists(&conn, "events").unwrap());
    assert!(!kd_core::db::dialect::table_exists(&conn, "schema_migrations").unwrap());
}

#[test]
fn a_copy_whose_chain_does_not_verify_on_the_target_is_rolled_back() {
    let Some(target) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, _, _) = sqlite_hub_with_activity(dir.path());
    let source = Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    let seq: i64 = source
        .query_row(
            "SELECT seq FROM events WHERE kind = 'agent.renamed'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    source
        .execute_batch(
            "DROP TRIGGER events_append_only_update;
             UPDATE events SET payload = replace(payload, 'Moving Agent Renamed', 'Moving Agent Forged')
             WHERE kind = 'agent.renamed';",
        )
        .unwrap();
    drop(source);
    let (copied, said, _) = copy(&data, &target.url);
    assert!(!copied.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "mismatch: the chain on the target is broken: row {seq}"
        )),
        "{said}"
    );
    assert!(said.contains("nothing was copied"), "{said}");
    let conn = pg(&target.url);
    assert_eq!(count(&conn, "events"), 0);
    assert_eq!(count(&conn, "agents"), 0);
    assert_eq!(count(&conn, "resources"), 0);
}

#[test]
fn copy_refuses_bad_flags_and_makes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.sqlite");
    let (refused, _, stderr) = copy(&missing, "postgres://postgres@127.0.0.1:1/none");
    assert!(!refused.status.success());
    assert!(stderr.contains("--from: no SQLite database at"), "{stderr}");
    assert!(!missing.exists(), "a refused copy makes no file");
    let other = dir.path().join("other.sqlite");
    let (refused, _, stderr) = copy(&missing, other.to_str().unwrap());
    assert!(!refused.status.success());
    assert!(stderr.contains("--to must be a PostgreSQL URL"), "{stderr}");
    assert!(!other.exists());
    // A file that is not a hub's database is named as such.
    let stray = dir.path().join("stray.sqlite");
    Connection::open_sqlite(&stray)
        .unwrap()
        .execute_batch("CREATE TABLE t (a INTEGER)")
        .unwrap();
    let (refused, _, stderr) = copy(&stray, "postgres://postgres@127.0.0.1:1/none");
    assert!(!refused.status.success());
    assert!(stderr.contains("is at schema version 0"), "{stderr}");
}

fn rebuild(data: &Path, database_url: Option<&str>) -> (Output, String, String) {
    let mut args: Vec<&OsStr> = vec![
        "ledger".as_ref(),
        "rebuild".as_ref(),
        "--data-dir".as_ref(),
        data.as_os_str(),
    ];
    if let Some(url) = database_url {
        args.extend([OsStr::new("--database-url"), OsStr::new(url)]);
    }
    karmadue(&args)
}

/// `ledger rebuild` on `data` (and `database_url`) finds no difference; after one cell of
/// `agents` is changed behind the log's back it reports exactly that cell and exits 1.
fn assert_rebuild_finds_the_tampered_cell(
    data: &Path,
    database_url: Option<&str>,
    conn: &Connection,
    agent_id: &str,
) {
    let (output, said, stderr) = rebuild(data, database_url);
    assert!(output.status.success(), "{said} {stderr}");
    assert!(
        said.contains("agents, owner_grants, stamps, capabilities, resources, claims"),
        "{said}"
    );
    assert!(
        said.contains("ok: the rebuilt projections equal the live tables"),
        "{said}"
    );
    assert!(said.contains("linkdbots_cards"), "{said}");
    conn.execute(
        "UPDATE agents SET name = 'Tampered' WHERE agent_id = ?1",
        [agent_id],
    )
    .unwrap();
    let (output, said, stderr) = rebuild(data, database_url);
    assert_eq!(output.status.code(), Some(1), "{said} {stderr}");
    let differs: Vec<&str> = said
        .lines()
        .filter(|line| line.starts_with("differs: "))
        .collect();
    assert_eq!(
        differs,
        [format!(
            "differs: agents [{agent_id}] name: live \"Tampered\" | rebuilt \"Moving Agent Renamed\""
        )],
        "{said}"
    );
    assert!(said.contains("1 differences"), "{said}");
}

#[test]
fn ledger_rebuild_finds_a_sound_hub_equal_and_names_a_tampered_cell() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _, agent_id) = sqlite_hub_with_activity(dir.path());
    let conn = Connection::open_sqlite(data.join("karmadue.sqlite")).unwrap();
    assert!(count(&conn, "resources") >= 2);
    assert_eq!(count(&conn, "linkdbots_cards"), 3);
    assert_rebuild_finds_the_tampered_cell(&data, None, &conn, &agent_id);
}

#[test]
fn ledger_rebuild_reads_a_hub_on_postgres() {
    let Some(target) = scratch() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (data, _, agent_id) = sqlite_hub_with_activity(dir.path());
    let (copied, said, stderr) = copy(&data.join("karmadue.sqlite"), &target.url);
    assert!(copied.status.success(), "{said} {stderr}");
    let conn = pg(&target.url);
    assert_rebuild_finds_the_tampered_cell(&data, Some(&target.url), &conn, &agent_id);
}
