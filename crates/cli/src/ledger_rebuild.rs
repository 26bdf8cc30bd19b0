//! `karmadue ledger rebuild`: replays the event log into a scratch SQLite store in a temporary
//! folder and compares the projections it rebuilds with the live tables
//! (`kd_karmadue::rebuild`), printing each difference as table, key, column, live and rebuilt
//! value. Exit 0 when there are none, 1 otherwise.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Flags of `karmadue ledger rebuild`.
#[derive(Debug, clap::Args)]
pub struct RebuildArgs {
    /// The hub's data folder.
    #[arg(long, env = "KARMADUE_DATA_DIR", default_value = kd_core::config::DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// The hub's database when it is not the data folder's SQLite file: a PostgreSQL URL
    /// (postgres://user:password@host:port/database). It is only read, in one snapshot.
    #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Where the scratch store goes (a temporary folder inside it, removed afterwards).
    /// Default: the system's temporary folder.
    #[arg(long)]
    scratch_dir: Option<PathBuf>,
}

/// Most differences printed one by one; the rest are counted per table.
const SHOWN: usize = 200;

/// Runs `karmadue ledger rebuild`.
///
/// # Errors
/// The database cannot be read, the scratch store cannot be made, or a row does not replay.
pub fn run(args: RebuildArgs) -> anyhow::Result<ExitCode> {
    let live = crate::ledger_connection(&args.data_dir, args.database_url.as_deref())?;
    let total = kd_core::eventlog::count(&live)?;
    let scratch = match &args.scratch_dir {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .context("cannot make the scratch folder")?;
    let bar = indicatif::ProgressBar::new(u64::try_from(total).unwrap_or(0));
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "replaying [{bar:30}] {human_pos}/{human_len} rows, {per_sec} ({eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let differences = kd_karmadue::rebuild::rebuild(&live, scratch.path(), &mut |seq| {
        bar.set_position(u64::try_from(seq).unwrap_or(0));
    })?;
    bar.finish_and_clear();
    let tables: Vec<&str> = kd_karmadue::rebuild::REBUILT
        .iter()
        .map(|projection| projection.table)
        .collect();
    say!("replayed {total} rows; compared {}", tables.join(", "));
    say!(
        "not compared: {} tables (working state, or rows the log does not record; see `kd_karmadue::rebuild::NOT_REBUILT`)",
        kd_karmadue::rebuild::NOT_REBUILT.len()
    );
    for difference in differences.iter().take(SHOWN) {
        say!("differs: {difference}");
    }
    if differences.len() > SHOWN {
        say!("... and {} more", differences.len() - SHOWN);
    }
    if differences.is_empty() {
        say!("ok: the rebuilt projections equal the live tables");
        Ok(ExitCode::SUCCESS)
    } else {
        say!("{} differences", differences.len());
        Ok(ExitCode::FAILURE)
    }
}
