//! `karmadue linkdbots import [FILE]`: published benchmark rows as Linkdbots cards with
//! provenance `imported` (docs/decisions.md 204, 344). Without a file, the bundled Aider rows.
//!
//! `karmadue linkdbots pairing-code --email --name`: the operator's way to mint a pairing code
//! for a hub account (docs/decisions.md 343).
//!
//! `karmadue linkdbots categories [accept|reject ID]`: the hub's operator is the platform
//! moderator of proposed categories (docs/decisions.md 338): without a decision it lists the
//! proposals waiting for one; `accept ID` makes one a category everywhere, `reject ID`
//! refuses it.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use kd_core::clock::SystemClock;
use kd_core::config::{Config, DEFAULT_DATA_DIR, DEFAULT_LISTEN};

/// `karmadue linkdbots …`.
#[derive(Debug, clap::Args)]
pub struct LinkdbotsArgs {
    #[command(subcommand)]
    command: LinkdbotsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum LinkdbotsCommand {
    /// Import benchmark rows (JSON Lines, optionally .gz: the Aider rows of agent-costs.jsonl,
    /// or the per-task SWE-bench rows of agent-costs-swebench-instances.jsonl, CC-BY-NC-4.0)
    /// as cards with provenance `imported`. Idempotent: cards already there are skipped.
    /// Without FILE, the bundled Aider rows.
    Import {
        /// The hub's data folder.
        #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// The file to import (default: the bundled rows).
        file: Option<PathBuf>,
        /// The hub's PostgreSQL database, when it runs on one (as `serve --database-url`).
        #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// The moderator's decisions on proposed categories: without arguments, the proposals
    /// waiting for a decision; `accept ID` or `reject ID` decides one.
    Categories {
        /// The hub's data folder.
        #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// The hub's PostgreSQL database, when it runs on one (as `serve --database-url`).
        #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
        /// `accept` or `reject` (with ID).
        #[arg(value_parser = ["accept", "reject"], requires = "id")]
        decision: Option<String>,
        /// The proposal's id (`cat_…`), as the list shows it.
        id: Option<String>,
    },
    /// Mint a pairing code for the hub account with EMAIL, carrying the profile's display
    /// NAME (as the account's signed-in person would: single use, 15 minutes, 10 a day per
    /// account). Prints the code alone on stdout. Safe while the hub runs.
    PairingCode {
        /// The hub's data folder.
        #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// The hub's PostgreSQL database, when it runs on one (as `serve --database-url`).
        #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
        /// The email of the hub account that will own the profile.
        #[arg(long)]
        email: String,
        /// The profile's display name, 1 to 60 characters.
        #[arg(long)]
        name: String,
    },
}

/// The hub's store, opened as `serve` opens it.
fn open_store(
    data_dir: PathBuf,
    database_url: Option<String>,
) -> anyhow::Result<kd_core::store::Store> {
    let mut config = Config::new(DEFAULT_LISTEN.parse()?, data_dir, None);
    config.database_url = database_url.map(kd_core::config::Secret::new);
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("cannot make {}", config.data_dir.display()))?;
    Ok(kd_core::store::Store::open_at(
        &config.database(),
        Arc::new(SystemClock),
        kd_core::store::StoreMetrics::default(),
    )?)
}

/// Runs the command.
pub fn run(args: LinkdbotsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        LinkdbotsCommand::Import {
            data_dir,
            file,
            database_url,
        } => import(open_store(data_dir, database_url)?, file),
        LinkdbotsCommand::Categories {
            data_dir,
            database_url,
            decision,
            id,
        } => categories(open_store(data_dir, database_url)?, decision, id),
        LinkdbotsCommand::PairingCode {
            data_dir,
            database_url,
            email,
            name,
        } => pairing_code(data_dir, database_url, &email, &name),
    }
}

/// Mints a pairing code for the account with `email`; refuses an address with no account
/// (exit 1, nothing stored).
fn pairing_code(
    data_dir: PathBuf,
    database_url: Option<String>,
    email: &str,
    name: &str,
) -> anyhow::Result<ExitCode> {
    let Some(email) = kd_core::people::normalize_email(email) else {
        anyhow::bail!("`{email}` is not an email address");
    };
    let store = open_store(data_dir, database_url)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let lookup = email.clone();
    let person = store
        .read_blocking(move |conn| kd_core::people::find_by_email(conn, &lookup))?
        .map(|(person, _)| person);
    let Some(person) = person else {
        store.close();
        anyhow::bail!("no hub account has the email {email}: the person signs up first");
    };
    let minted = runtime.block_on(kd_linkdbots::mint_pairing_code(
        &store,
        &kd_core::random::SystemRandom,
        &person.person_id,
        name,
    ));
    store.close();
    let minted = minted.map_err(|error| anyhow::anyhow!("{error}"))?;
    say!("{}", minted.code);
    eprintln!(
        "a pairing code for {email}'s profile \"{}\": single use, until {}; the agent's MCP server redeems it from LINKDBOTS_PAIRING_CODE",
        name.trim(),
        kd_core::clock::rfc3339_ms(minted.expires_ms)
    );
    Ok(ExitCode::SUCCESS)
}

/// `karmadue linkdbots categories [accept|reject ID]`.
fn categories(
    store: kd_core::store::Store,
    decision: Option<String>,
    id: Option<String>,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        match (decision.as_deref(), id) {
            (Some(decision), Some(id)) => {
                let now_ms = kd_core::clock::Clock::now_ms(&SystemClock);
                let decided =
                    kd_linkdbots::categories::decide(&store, now_ms, &id, decision == "accept")
                        .await?;
                say!(
                    "{}: `{}` {}",
                    id,
                    decided["name"].as_str().unwrap_or_default(),
                    decided["status"].as_str().unwrap_or_default()
                );
                Ok(())
            }
            _ => {
                let pending = store.read(kd_linkdbots::categories::pending).await?;
                if pending.is_empty() {
                    say!("No category proposal waits for a decision.");
                }
                for proposal in &pending {
                    say!(
                        "{}  {}  {}  (proposed {})",
                        proposal["id"].as_str().unwrap_or_default(),
                        proposal["name"].as_str().unwrap_or_default(),
                        proposal["description"].as_str().unwrap_or_default(),
                        proposal["proposedAt"].as_str().unwrap_or_default()
                    );
                }
                Ok::<_, kd_linkdbots::ApiError>(())
            }
        }
    });
    store.close();
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => {
            say!("refused: {error}");
            Ok(ExitCode::from(2))
        }
    }
}

/// `karmadue linkdbots import [FILE]`.
fn import(store: kd_core::store::Store, file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let reader: Box<dyn BufRead + Send> = match &file {
        None => Box::new(BufReader::new(flate2::read::GzDecoder::new(
            kd_linkdbots::import::BUNDLED_AIDER,
        ))),
        Some(path) => {
            let opened = std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            if path.extension().is_some_and(|ext| ext == "gz") {
                Box::new(BufReader::new(flate2::read::GzDecoder::new(opened)))
            } else {
                Box::new(BufReader::new(opened))
            }
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = runtime
        .block_on(kd_linkdbots::import(&store, reader))
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    store.close();
    let name = file.map_or_else(
        || "bundled Aider rows".to_owned(),
        |path| path.display().to_string(),
    );
    say!(
        "{name}: {} rows, {} cards imported, {} already there, {} rows of another source, {} bad",
        report.rows,
        report.cards,
        report.already,
        report.other_sources,
        report.bad.len()
    );
    for (line, reason) in &report.bad {
        say!("  line {line}: {reason}");
    }
    Ok(if report.bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
