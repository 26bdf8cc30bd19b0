//! `karmadue`: serve the hub, verify its ledger, read the mail outbox, and act as a signing
//! agent client.

/// `println!` that survives a closed pipe (`karmadue ledger verify | head -1`): see [`out`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

/// mimalloc instead of the system allocator: a `get_resource` call allocates and frees a few
/// hundred small blocks, and glibc's malloc was a sixth of the hub's CPU (docs/decisions.md
/// 209).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod agent;
mod ledger_copy;
mod ledger_rebuild;
mod ledger_tlog;
mod linkdbots;
mod linkdbots_mcp;
mod out;
mod ronin;
mod serve;

use serve::ServeArgs;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kd_core::clock::SystemClock;
use kd_core::config::{Config, DEFAULT_DATA_DIR, DEFAULT_LISTEN};
use kd_core::random::SystemRandom;

/// The KarmaDue hub and its tools.
#[derive(Debug, Parser)]
#[command(name = "karmadue", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the hub. Makes the data folder, database and server key on first start.
    Serve(ServeArgs),
    /// Check the event log, or move a hub from SQLite to PostgreSQL.
    Ledger {
        #[command(subcommand)]
        command: LedgerCommand,
    },
    /// Print the mail waiting in the outbox (mail to people when no SMTP relay is configured).
    Outbox {
        /// The hub's data folder.
        #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// Also show mail already delivered.
        #[arg(long)]
        all: bool,
        /// The hub's PostgreSQL database, when it runs on one (as `serve --database-url`).
        #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// A signing agent client: keeps your key in ~/.karmadue/agent.json.
    Agent(agent::AgentArgs),
    /// Import catalog rows (JSON Lines, optionally .gz) into a hub's data folder. Idempotent:
    /// unchanged rows are skipped; bad rows are reported with their line number and skipped.
    Import {
        /// The hub's data folder.
        #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// Files to import.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The hub's PostgreSQL database, when it runs on one (as `serve --database-url`).
        #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Linkdbots: import published benchmark rows as cards; mint a pairing code; decide
    /// proposed categories.
    Linkdbots(linkdbots::LinkdbotsArgs),
    /// The Linkdbots MCP server over stdio (newline-delimited JSON-RPC): the Linkdbots API at
    /// LINKDBOTS_API_URL as tools, agent-written text wrapped in <untrusted_content>, the key
    /// from LINKDBOTS_AGENT_KEY, ~/.linkdbots/agent.json or LINKDBOTS_PAIRING_CODE.
    LinkdbotsMcp(linkdbots_mcp::McpArgs),
    /// Ronin from the shell: keygen, register, list, offer, work, deliver, complete, rate,
    /// paid, received, rotate, revoke, me, bench, submit (the key in ~/.ronin/key.json, the
    /// hub at RONIN_URL).
    Ronin(ronin::RoninArgs),
    /// Print the default access_tiers table as JSON: a starting point for a file to pass to
    /// `serve --access-tiers`.
    Tiers,
}

#[derive(Debug, Subcommand)]
enum LedgerCommand {
    /// Recompute every row hash from row 1, then check every signed daily head against the
    /// log and the hub's key, and the head files of the ledger folder against the heads; exit
    /// 1 naming the first broken row, head or file.
    Verify {
        /// The hub's data folder.
        #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// The ledger folder the hub writes its head files to (default: <data-dir>/ledger).
        #[arg(long, env = "KARMADUE_LEDGER_DIR")]
        ledger_dir: Option<PathBuf>,
        /// The hub's database when it is not the data folder's SQLite file: a PostgreSQL URL
        /// (postgres://user:password@host:port/database). The server key is still read from
        /// <data-dir>/keys.
        #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Move a hub from SQLite to PostgreSQL: copy every table into an empty PostgreSQL
    /// database, verify the chain and the row counts there, and print a summary; exit 1 on
    /// any mismatch (the copy is then rolled back).
    Copy(ledger_copy::CopyArgs),
    /// Replay the event log into a scratch store and compare the projections it rebuilds
    /// with the live tables, row by row; print every difference (table, key, column, live
    /// and rebuilt value) and exit 1 when there is one.
    Rebuild(ledger_rebuild::RebuildArgs),
    /// Print the RFC 6962 inclusion proof of event SEQ under the latest checkpoint (or
    /// `--size`), from the hub's database, and check it; exit 1 when it does not verify.
    ProveInclusion {
        /// The event's seq.
        seq: u64,
        /// The tree size (default: the latest checkpoint's).
        #[arg(long)]
        size: Option<u64>,
        #[command(flatten)]
        database: LedgerDatabase,
    },
    /// Print the RFC 6962 consistency proof from tree size OLD to NEW and check it.
    ProveConsistency {
        /// The older tree size.
        old: u64,
        /// The newer tree size.
        new: u64,
        #[command(flatten)]
        database: LedgerDatabase,
    },
    /// Watch a hub's checkpoints: verify each one's signature and its consistency with the
    /// last one seen; print an ALARM line and exit 1 when either fails.
    Monitor(ledger_tlog::MonitorArgs),
}

/// Where a ledger command reads the hub's database.
#[derive(Debug, clap::Args)]
struct LedgerDatabase {
    /// The hub's data folder.
    #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// The hub's PostgreSQL database, when it runs on one (as `serve --database-url`).
    #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::serve(args),
        Command::Ledger {
            command:
                LedgerCommand::Verify {
                    data_dir,
                    ledger_dir,
                    database_url,
                },
        } => {
            let ledger = ledger_dir.unwrap_or_else(|| data_dir.join("ledger"));
            ledger_verify(&data_dir, &ledger, database_url.as_deref())
        }
        Command::Ledger {
            command: LedgerCommand::Copy(args),
        } => ledger_copy::run(args),
        Command::Ledger {
            command: LedgerCommand::Rebuild(args),
        } => ledger_rebuild::run(args),
        Command::Ledger {
            command:
                LedgerCommand::ProveInclusion {
                    seq,
                    size,
                    database,
                },
        } => ledger_connection(&database.data_dir, database.database_url.as_deref())
            .and_then(|conn| ledger_tlog::prove_inclusion(&conn, seq, size)),
        Command::Ledger {
            command: LedgerCommand::ProveConsistency { old, new, database },
        } => ledger_connection(&database.data_dir, database.database_url.as_deref())
            .and_then(|conn| ledger_tlog::prove_consistency(&conn, old, new)),
        Command::Ledger {
            command: LedgerCommand::Monitor(args),
        } => ledger_tlog::monitor(&args),
        Command::Outbox {
            data_dir,
            all,
            database_url,
        } => outbox(&data_dir, all, database_url.as_deref()),
        Command::Agent(args) => agent::run(args),
        Command::Import {
            data_dir,
            files,
            database_url,
        } => import(data_dir, &files, database_url),
        Command::Linkdbots(args) => linkdbots::run(args),
        Command::LinkdbotsMcp(args) => linkdbots_mcp::run(args),
        Command::Ronin(args) => ronin::run(args),
        Command::Tiers => print_tiers(),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn print_tiers() -> anyhow::Result<ExitCode> {
    // The bundled texts and limits with the unlocks the registry's tools declare.
    let table = kd_karmadue::hub::default_access_tiers();
    say!("{}", serde_json::to_string_pretty(&table)?);
    Ok(ExitCode::SUCCESS)
}

/// A progress bar (on stderr, drawn only on a terminal) over `total` rows with the rows per
/// second; it stays hidden until the first rows are counted.
fn rows_bar(total: u64, message: &str) -> indicatif::ProgressBar {
    styled_bar(
        total,
        "{msg} [{bar:30}] {human_pos}/{human_len} rows ({per_sec}, {eta})",
        message,
    )
}

/// A progress bar over `total` drawn with `template`, showing `message`.
fn styled_bar(total: u64, template: &str, message: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(message.to_owned());
    bar
}

fn ledger_verify(
    data_dir: &std::path::Path,
    ledger: &std::path::Path,
    database_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let conn = ledger_connection(data_dir, database_url)?;
    let report = match kd_core::eventlog::verify_chain(&conn)? {
        Ok(report) => report,
        Err(broken) => {
            say!("broken: {broken}");
            return Ok(ExitCode::FAILURE);
        }
    };
    say!(
        "ok: {} rows verified; head seq {} row_hash {}",
        report.rows,
        report.head.seq,
        report.head.row_hash
    );
    // The signatures are checked with the hub's own key when the data folder holds it.
    let key =
        kd_core::keys::ServerKey::load(&data_dir.join("keys"), kd_core::keys::PASSPORT_KEY_ID)?;
    let today = kd_core::clock::utc_day(kd_core::clock::Clock::now_ms(&SystemClock));
    let heads = match kd_core::heads::check(&conn, key.as_ref(), &today)? {
        Ok(heads) => heads,
        Err(problem) => {
            say!("broken: {problem}");
            return Ok(ExitCode::FAILURE);
        }
    };
    let signatures = if key.is_some() {
        "signatures verified"
    } else {
        "signatures NOT checked: no keys/kd-passport-1.key in the data folder"
    };
    say!("ok: {heads} daily heads match the log; {signatures}");
    if !ledger_tlog::verify_tree(&conn, key.as_ref())? {
        return Ok(ExitCode::FAILURE);
    }
    // Each head file must hold exactly the stored head; a missing one is reported, not broken
    // (the hub writes it on its next run).
    let mut missing = 0;
    let stored = if heads > 0 {
        kd_core::heads::since(&conn, "")?
    } else {
        Vec::new()
    };
    for head in stored {
        let file = ledger.join("heads").join(format!("{}.json", head.day));
        match std::fs::read(&file) {
            Ok(bytes) if bytes == kd_karmadue::ledger::head_file_text(&head).as_bytes() => {}
            Ok(_) => {
                say!(
                    "broken: {} differs from the signed head of {}",
                    file.display(),
                    head.day
                );
                return Ok(ExitCode::FAILURE);
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => missing += 1,
            Err(error) => anyhow::bail!("cannot read {}: {error}", file.display()),
        }
    }
    if heads > 0 {
        say!(
            "ok: {} head files in {} match{}",
            heads - missing,
            ledger.display(),
            if missing > 0 {
                format!("; {missing} not written yet")
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The hub's database for `ledger verify`, read-only: the data folder's SQLite file, or the
/// `--database-url` (PostgreSQL in one read-only snapshot, so the chain and the heads are
/// checked against the same rows while hubs keep writing).
fn ledger_connection(
    data_dir: &std::path::Path,
    database_url: Option<&str>,
) -> anyhow::Result<kd_core::db::Connection> {
    let location = database_url.map_or_else(
        || kd_core::db::Location::Sqlite(data_dir.join("karmadue.sqlite")),
        kd_core::db::Location::parse,
    );
    match &location {
        kd_core::db::Location::Sqlite(path) => {
            if !path.exists() {
                anyhow::bail!("no database at {}", path.display());
            }
            kd_core::db::Connection::open_sqlite_read_only(path)
                .with_context(|| format!("cannot open {}", path.display()))
        }
        kd_core::db::Location::Postgres(_) => {
            let conn = kd_core::db::Connection::open(&location)
                .with_context(|| format!("cannot connect to {location:?}"))?;
            if !kd_core::db::dialect::table_exists(&conn, "events")? {
                anyhow::bail!("{location:?} holds no hub: it has no events table");
            }
            kd_core::db::dialect::begin_read(&conn)?;
            Ok(conn)
        }
    }
}

fn outbox(
    data_dir: &std::path::Path,
    all: bool,
    database_url: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let conn = match database_url {
        Some(url) => kd_core::db::Connection::open(&kd_core::db::Location::parse(url))
            .with_context(|| format!("cannot open {}", kd_core::db::redact_url(url)))?,
        None => {
            let path = data_dir.join("karmadue.sqlite");
            if !path.exists() {
                anyhow::bail!("no database at {}", path.display());
            }
            kd_core::db::Connection::open_sqlite_read_only(&path)
                .with_context(|| format!("cannot open {}", path.display()))?
        }
    };
    let mails = kd_core::outbox::list(&conn, !all)?;
    for mail in &mails {
        let state = match mail.sent_ms {
            Some(sent) => format!("sent {}", kd_core::clock::rfc3339_ms(sent)),
            None => "waiting".to_owned(),
        };
        say!(
            "{} ({state}, queued {})\nTo: {}\nSubject: {}\n\n{}\n",
            mail.mail_id,
            kd_core::clock::rfc3339_ms(mail.created_ms),
            mail.to_email,
            mail.subject,
            mail.body
        );
    }
    say!("{} mail(s)", mails.len());
    Ok(ExitCode::SUCCESS)
}

/// `rows` over the time since `started`.
fn per_second(rows: u64, started: std::time::Instant) -> f64 {
    rows as f64 / started.elapsed().as_secs_f64().max(1e-3)
}

fn import(
    data_dir: PathBuf,
    files: &[PathBuf],
    database_url: Option<String>,
) -> anyhow::Result<ExitCode> {
    use std::io::{BufRead, BufReader, Read};
    let mut config = Config::new(DEFAULT_LISTEN.parse()?, data_dir, None);
    config.bundled_catalog = false;
    config.database_url = database_url.map(kd_core::config::Secret::new);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
    let mut any_bad = false;
    for path in files {
        let file =
            std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let size = file.metadata().map(|meta| meta.len()).unwrap_or(0);
        let shown = path.display().to_string();
        let bar = styled_bar(
            size,
            "{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})",
            &shown,
        );
        let started = std::time::Instant::now();
        let counted = bar.wrap_read(file);
        let reader: Box<dyn BufRead> = if path.extension().is_some_and(|ext| ext == "gz") {
            Box::new(BufReader::new(flate2::read::GzDecoder::new(counted)))
        } else {
            Box::new(BufReader::new(counted.take(u64::MAX)))
        };
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let report = runtime
            .block_on(kd_karmadue::catalog::import::import_lines(
                &hub,
                &name,
                reader,
                |rows| {
                    bar.set_message(format!(
                        "{shown}: {rows} rows, {:.0} rows/s",
                        per_second(rows, started)
                    ))
                },
            ))
            .map_err(|error| anyhow::anyhow!("{}", error.cause_text()))?;
        bar.finish_and_clear();
        say!(
            "{}: {} lines, {} imported, {} unchanged, {} bad in {:.1} s ({:.0} rows/s)",
            path.display(),
            report.lines,
            report.imported,
            report.unchanged,
            report.bad.len(),
            started.elapsed().as_secs_f64(),
            per_second(report.lines, started)
        );
        for (line, reason) in &report.bad {
            say!("  line {line}: {reason}");
        }
        any_bad |= !report.bad.is_empty();
    }
    hub.store.close();
    Ok(if any_bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// The allocator asks for no transparent huge pages (docs/decisions.md 394): after the
/// process has allocated through mimalloc, no mapping of it is advised `MADV_HUGEPAGE` (`hg`
/// among `/proc/self/smaps`' `VmFlags`).
#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn the_allocator_advises_no_huge_pages() -> std::io::Result<()> {
        // 64 MiB in blocks of 1 MiB: mimalloc reserves arenas for them.
        let blocks: Vec<Vec<u8>> = (0..64u8).map(|byte| vec![byte; 1 << 20]).collect();
        let smaps = std::fs::read_to_string("/proc/self/smaps")?;
        let advised = smaps
            .lines()
            .filter(|line| line.starts_with("VmFlags:"))
            .filter(|line| line.split_whitespace().any(|flag| flag == "hg"))
            .count();
        assert_eq!(advised, 0, "mappings advised MADV_HUGEPAGE");
        assert_eq!(blocks.iter().map(Vec::len).sum::<usize>(), 64 << 20);
        Ok(())
    }
}
