//! `karmadue linkdbots import [FILE]`: published benchmark rows as Linkdbots cards with
//! provenance `imported` (docs/decisions.md 204, 344). Without a file, the bundled Aider rows.

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
}

/// Runs the command.
pub fn run(args: LinkdbotsArgs) -> anyhow::Result<ExitCode> {
    let LinkdbotsCommand::Import {
        data_dir,
        file,
        database_url,
    } = args.command;
    let mut config = Config::new(DEFAULT_LISTEN.parse()?, data_dir, None);
    config.database_url = database_url.map(kd_core::config::Secret::new);
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("cannot make {}", config.data_dir.display()))?;
    let store = kd_core::store::Store::open_at(
        &config.database(),
        Arc::new(SystemClock),
        kd_core::store::StoreMetrics::default(),
    )?;
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
