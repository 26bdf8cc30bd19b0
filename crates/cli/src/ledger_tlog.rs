//! The transparency log from the command line (kd_core::tlog; docs/transparency.md):
//! `ledger verify`'s tree check, `ledger prove-inclusion`, `ledger prove-consistency` and
//! `ledger monitor`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use kd_core::keys::ServerKey;
use kd_core::tlog::{self, parse_b64, proof};
use serde_json::Value;

/// The tree and checkpoint check of `ledger verify`: prints what it saw; `false` when broken.
///
/// # Errors
/// The store's error.
pub fn verify_tree(
    conn: &kd_core::db::Connection,
    key: Option<&ServerKey>,
) -> anyhow::Result<bool> {
    match tlog::check::check(conn, key)? {
        Ok(report) => {
            let behind = if report.behind > 0 {
                format!("; {} newer rows not in it yet", report.behind)
            } else {
                String::new()
            };
            say!(
                "ok: the transparency log's {} leaves match the rows{behind}; {} checkpoints match the tree",
                report.size,
                report.checkpoints
            );
            Ok(true)
        }
        Err(problem) => {
            say!("broken: transparency log: {problem}");
            Ok(false)
        }
    }
}

fn hashes(value: &Value) -> anyhow::Result<Vec<tlog::Hash>> {
    value
        .as_array()
        .context("proof is not a list")?
        .iter()
        .map(|hash| parse_b64(hash.as_str().unwrap_or_default()).map_err(anyhow::Error::msg))
        .collect()
}

fn field(value: &Value, name: &str) -> anyhow::Result<tlog::Hash> {
    parse_b64(value[name].as_str().unwrap_or_default()).map_err(anyhow::Error::msg)
}

/// Whether an inclusion proof (as the route and `prove-inclusion` print it) verifies.
///
/// # Errors
/// When it is malformed.
pub fn inclusion_verifies(proved: &Value) -> anyhow::Result<bool> {
    let index = proved["leaf_index"].as_u64().context("no leaf_index")?;
    let size = proved["tree_size"].as_u64().context("no tree_size")?;
    let leaf = tlog::event_leaf(proved["row_hash"].as_str().unwrap_or_default())
        .map_err(anyhow::Error::msg)?;
    Ok(proof::verify_inclusion(
        index,
        size,
        &leaf,
        &hashes(&proved["proof"])?,
        &field(proved, "root_hash")?,
    ))
}

/// Whether a consistency proof (as the route prints it) verifies.
///
/// # Errors
/// When it is malformed.
pub fn consistency_verifies(proved: &Value) -> anyhow::Result<bool> {
    let old = proved["old_size"].as_u64().context("no old_size")?;
    let new = proved["new_size"].as_u64().context("no new_size")?;
    Ok(proof::verify_consistency(
        old,
        new,
        &field(proved, "old_root")?,
        &field(proved, "new_root")?,
        &hashes(&proved["proof"])?,
    ))
}

fn print_proof(
    proved: Result<Value, tlog::serve::Refusal>,
    verified: fn(&Value) -> anyhow::Result<bool>,
) -> anyhow::Result<ExitCode> {
    match proved {
        Ok(proved) => {
            say!("{}", serde_json::to_string_pretty(&proved)?);
            if verified(&proved)? {
                say!("ok: the proof verifies");
                Ok(ExitCode::SUCCESS)
            } else {
                say!("broken: the proof does not verify against the stored tree");
                Ok(ExitCode::FAILURE)
            }
        }
        Err((_, reason)) => {
            say!("refused: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `ledger prove-inclusion SEQ [--size M]`.
///
/// # Errors
/// The store's error.
pub fn prove_inclusion(
    conn: &kd_core::db::Connection,
    seq: u64,
    size: Option<u64>,
) -> anyhow::Result<ExitCode> {
    print_proof(tlog::serve::inclusion(conn, seq, size)?, inclusion_verifies)
}

/// `ledger prove-consistency OLD NEW`.
///
/// # Errors
/// The store's error.
pub fn prove_consistency(
    conn: &kd_core::db::Connection,
    old: u64,
    new: u64,
) -> anyhow::Result<ExitCode> {
    print_proof(
        tlog::serve::consistency(conn, old, Some(new))?,
        consistency_verifies,
    )
}

/// The arguments of `ledger monitor`.
#[derive(Debug, clap::Args)]
pub struct MonitorArgs {
    /// The hub's public URL, e.g. https://hub.example.
    url: String,
    /// The file keeping the last checkpoint seen (default: ~/.karmadue/monitor-<host>.txt).
    #[arg(long)]
    state: Option<PathBuf>,
    /// The hub's public key (base64url Ed25519); default: kd-passport-1 from its JWKS, pinned
    /// in the state file on first use.
    #[arg(long)]
    key: Option<String>,
    /// Check once and exit (0 when consistent, 1 with an ALARM line otherwise).
    #[arg(long)]
    once: bool,
    /// Seconds between checks.
    #[arg(long, default_value_t = 30)]
    interval_s: u64,
}

struct Http {
    base: String,
    agent: ureq::Agent,
}

impl Http {
    fn get(&self, path: &str) -> anyhow::Result<(u16, String)> {
        let url = format!("{}{path}", self.base);
        let mut response = self
            .agent
            .get(&url)
            .call()
            .with_context(|| format!("cannot reach {url}"))?;
        Ok((
            response.status().as_u16(),
            response.body_mut().read_to_string()?,
        ))
    }
}

/// What the monitor keeps between runs: the pinned key and the last checkpoint.
fn read_state(path: &Path) -> anyhow::Result<Option<(String, String)>> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let (key, note) = text.split_once('\n').context("malformed monitor state")?;
            Ok(Some((key.to_owned(), note.to_owned())))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.into()),
    }
}

fn public_key(text: &str) -> anyhow::Result<[u8; 32]> {
    kd_protocol::b64::decode_url(text)
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .context("the key is not base64url of 32 bytes")
}

/// Whether the tree the hub serves is the one `checkpoint` signs: the inclusion proof of its
/// last leaf under its size must lead to its root. A hub whose rows (and tree) were cut or
/// rewritten under a checkpoint it still serves fails this even before it signs another.
///
/// # Errors
/// When the hub cannot be reached.
fn proves_its_checkpoint(http: &Http, checkpoint: &tlog::note::Checkpoint) -> anyhow::Result<bool> {
    let size = checkpoint.size;
    let (status, body) = http.get(&format!("/log/proof/inclusion?seq={size}&size={size}"))?;
    let proved: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    Ok(status == 200
        && proved["tree_size"].as_u64() == Some(size)
        && field(&proved, "root_hash").ok() == Some(checkpoint.root)
        && inclusion_verifies(&proved).unwrap_or(false))
}

/// One check: `Ok(Err(alarm))` when the hub misbehaved.
fn check_once(
    http: &Http,
    state: &Path,
    key: Option<&str>,
) -> anyhow::Result<Result<String, String>> {
    let previous = read_state(state)?;
    let key = match (key, &previous) {
        (Some(key), _) => key.to_owned(),
        (None, Some((pinned, _))) => pinned.clone(),
        (None, None) => {
            let (_, jwks) = http.get("/.well-known/jwks.json")?;
            let jwks: Value = serde_json::from_str(&jwks).context("the JWKS is not JSON")?;
            jwks["keys"][0]["x"]
                .as_str()
                .context("no key in the JWKS")?
                .to_owned()
        }
    };
    let public = public_key(&key)?;
    let (status, note) = http.get("/.well-known/kd-checkpoint")?;
    if status != 200 {
        bail!("the hub answered {status} for its checkpoint: {note}");
    }
    let origin = note.split('\n').next().unwrap_or_default().to_owned();
    let current = match tlog::note::verify(&note, &origin, &public) {
        Ok(current) => current,
        Err(reason) => return Ok(Err(format!("the checkpoint does not verify: {reason}"))),
    };
    if !proves_its_checkpoint(http, &current)? {
        return Ok(Err(format!(
            "the hub cannot prove its own checkpoint {}: the tree it serves is not the one it signed",
            current.size
        )));
    }
    let mut seen = format!("ok: checkpoint {} of {origin} verifies", current.size);
    if let Some((_, old_note)) = previous {
        let Ok(old) = tlog::note::verify(&old_note, &origin, &public) else {
            return Ok(Err(format!(
                "the checkpoint seen before is not a checkpoint of {origin} by this key"
            )));
        };
        if current.size < old.size {
            return Ok(Err(format!(
                "the tree shrank from {} to {}",
                old.size, current.size
            )));
        }
        if current.size == old.size && current.root != old.root {
            return Ok(Err(format!("two different roots for size {}", old.size)));
        }
        if current.size > old.size {
            let (status, body) = http.get(&format!(
                "/log/proof/consistency?old={}&new={}",
                old.size, current.size
            ))?;
            let proved: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let matches = status == 200
                && field(&proved, "old_root").ok() == Some(old.root)
                && field(&proved, "new_root").ok() == Some(current.root)
                && consistency_verifies(&proved).unwrap_or(false);
            if !matches {
                return Ok(Err(format!(
                    "checkpoint {} is not consistent with checkpoint {} seen before",
                    current.size, old.size
                )));
            }
        }
        seen.push_str(&format!(" and is consistent with {}", old.size));
    }
    if let Some(folder) = state.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(state, format!("{key}\n{note}"))?;
    Ok(Ok(seen))
}

/// `ledger monitor URL`.
///
/// # Errors
/// When the hub cannot be reached or the state file cannot be written.
pub fn monitor(args: &MonitorArgs) -> anyhow::Result<ExitCode> {
    let base = args.url.trim_end_matches('/').to_owned();
    let state = match &args.state {
        Some(state) => state.clone(),
        None => {
            let home = std::env::var_os("HOME").context("no HOME for the monitor's state")?;
            let host = tlog::note::origin_of(&base).replace(['/', ':'], "_");
            PathBuf::from(home)
                .join(".karmadue")
                .join(format!("monitor-{host}.txt"))
        }
    };
    let http = Http {
        base,
        agent: ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into(),
    };
    loop {
        match check_once(&http, &state, args.key.as_deref())? {
            Ok(seen) => say!("{seen}"),
            Err(alarm) => {
                say!("ALARM: {alarm}");
                return Ok(ExitCode::FAILURE);
            }
        }
        if args.once {
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(std::time::Duration::from_secs(args.interval_s.max(1)));
    }
}
