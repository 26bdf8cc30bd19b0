//! `karmadue serve`: the hub's options, the first start's progress, the banner and the
//! shutdown signal.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use kd_core::clock::SystemClock;
use kd_core::config::{Config, DEFAULT_DATA_DIR, DEFAULT_LISTEN};
use kd_core::random::SystemRandom;

use crate::rows_bar;

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "KARMADUE_LISTEN", default_value = DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Folder for the database and server keys.
    #[arg(long, env = "KARMADUE_DATA_DIR", default_value = DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// Public base URL used in absolute links (default: http://<listen>).
    #[arg(long, env = "KARMADUE_PUBLIC_URL")]
    public_url: Option<String>,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "KARMADUE_MAX_BODY_BYTES", default_value_t = kd_core::config::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Also serve the MCP conformance suite's fixture tools (loopback addresses only).
    #[arg(long, env = "KARMADUE_CONFORMANCE_FIXTURES")]
    conformance_fixtures: bool,
    /// Load the bundled catalog snapshot on first start (when the catalog is empty).
    #[arg(long, env = "KARMADUE_BUNDLED_CATALOG", default_value_t = true, action = clap::ArgAction::Set)]
    bundled_catalog: bool,
    /// SMTP relay for mail to people (smtp://host:port, smtps://user:password@host). Without
    /// it, mail waits in the outbox (`karmadue outbox`).
    #[arg(long, env = "KARMADUE_SMTP_URL", hide_env_values = true)]
    smtp_url: Option<String>,
    /// From address of mail to people (default: KarmaDue <no-reply@the public URL's host>).
    #[arg(long, env = "KARMADUE_MAIL_FROM")]
    mail_from: Option<String>,
    /// The access_tiers table as a JSON file: {tiers, tool_reads_per_minute,
    /// default_tool_reads_per_minute}, as GET /functions/v1/public-api/v1/tiers shows them. A
    /// tier without `unlocks` gets the tools that declare that tier. Default: the permissions
    /// document's table.
    #[arg(long, env = "KARMADUE_ACCESS_TIERS")]
    access_tiers: Option<PathBuf>,
    /// Serve GET /metrics (Prometheus text: counts by tool, route and code; no ids, no
    /// addresses) on the listen address. `--metrics false` turns it off.
    #[arg(long, env = "KARMADUE_METRICS", default_value_t = true, action = clap::ArgAction::Set)]
    metrics: bool,
    /// Reverse proxies to believe about the client's address: comma-separated addresses and
    /// CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8). A request from one of them counts for the
    /// client its X-Forwarded-For names (the first hop from the right that is not a trusted
    /// proxy). Default: none; X-Forwarded-For is ignored.
    #[arg(long, env = "KARMADUE_TRUSTED_PROXIES", default_value = "")]
    trusted_proxies: String,
    /// The public ledger folder: the hub writes one signed log head per UTC day there as
    /// heads/YYYY-MM-DD.json, with the verifier scripts/verify_head.py. Commit it to a public
    /// repository on a schedule. Default: <data-dir>/ledger.
    #[arg(long, env = "KARMADUE_LEDGER_DIR")]
    ledger_dir: Option<PathBuf>,
    /// Connections served at once; a connection past the cap is closed as soon as it is
    /// accepted (logged, and counted in karmadue_connections_refused_total). Keep it below the
    /// process's open-file limit (`ulimit -n`).
    #[arg(long, env = "KARMADUE_MAX_CONNECTIONS", default_value_t = kd_core::config::DEFAULT_MAX_CONNECTIONS, value_parser = at_least_one)]
    max_connections: usize,
    /// Connections one client address (an IPv6 /64) may hold at once; past it its new
    /// connections are closed as soon as they are accepted (logged, and counted in
    /// karmadue_connections_refused_per_address_total). Connections from --trusted-proxies are
    /// not counted.
    #[arg(long, env = "KARMADUE_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = kd_core::config::DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, value_parser = at_least_one)]
    max_connections_per_address: usize,
    /// The database: a PostgreSQL URL (postgres://user:password@host:port/database), which
    /// several hub processes may share behind one address. Default: the SQLite file
    /// karmadue.sqlite in the data folder.
    #[arg(long, env = "KARMADUE_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Seconds between the transparency log's signed checkpoints while the log grows
    /// (served at /.well-known/kd-checkpoint; docs/transparency.md).
    #[arg(long, env = "KARMADUE_CHECKPOINT_INTERVAL_S", default_value_t = kd_core::config::DEFAULT_CHECKPOINT_INTERVAL.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_interval_s: u64,
    /// Let the hub's outbound requests (Ronin's callbacks) reach loopback, private (RFC 1918),
    /// link-local, CGNAT and unique-local addresses. Off by default: a callback URL could
    /// otherwise make the hub call services on its own network. For tests and local setups.
    #[arg(long, env = "KARMADUE_OUTBOUND_ALLOW_PRIVATE")]
    outbound_allow_private: bool,
    /// A PEM file of one or more CA certificates the hub's outbound https requests (Ronin's
    /// callbacks, OAuth client metadata documents) trust next to the public roots: a private CA
    /// of the operator's network. Read at start; a file that cannot be read, is not PEM or holds
    /// no certificate stops the start.
    #[arg(long, env = "KARMADUE_OUTBOUND_CA_FILE", value_name = "PATH", value_parser = ca_file)]
    outbound_ca_file: Option<kd_core::outbound::TrustedCas>,
    /// Where Ronin is mounted on the listen address: / and one or more segments, no trailing
    /// slash (e.g. /hire; default /ronin). Its API is then <mount>/api/v1. Refused with
    /// --ronin-listen, which serves Ronin at the root of its own address instead.
    #[arg(long, env = "KARMADUE_RONIN_MOUNT", value_parser = ronin_mount, conflicts_with = "ronin_listen")]
    ronin_mount: Option<String>,
    /// Serve Ronin on an address of its own, at its root (/api/v1/..., /q, /AGENTS.md), and not
    /// on --listen at all (so --ronin-mount cannot be given with it).
    #[arg(long, env = "KARMADUE_RONIN_LISTEN")]
    ronin_listen: Option<SocketAddr>,
    /// Public base URL of --ronin-listen, used in Ronin's absolute links and checked in its
    /// NIP-98 tokens (default: http://<ronin-listen>).
    #[arg(long, env = "KARMADUE_RONIN_PUBLIC_URL", requires = "ronin_listen", value_parser = public_url)]
    ronin_public_url: Option<String>,
}

/// An `--outbound-ca-file` value: the CAs of the PEM file it names
/// ([`kd_core::outbound::TrustedCas::from_pem_file`]).
fn ca_file(text: &str) -> Result<kd_core::outbound::TrustedCas, String> {
    kd_core::outbound::TrustedCas::from_pem_file(std::path::Path::new(text)).map_err(|error| {
        match error {
            kd_core::outbound::OutboundError::CaFile { reason, .. } => reason,
            other => other.to_string(),
        }
    })
}

/// A `--ronin-mount` value ([`kd_core::config::check_ronin_mount`]).
fn ronin_mount(text: &str) -> Result<String, String> {
    kd_core::config::check_ronin_mount(text).map(|()| text.to_owned())
}

/// An absolute http(s) URL with a host and nothing after it but an optional path
/// (`--ronin-public-url`); a trailing slash is dropped.
fn public_url(text: &str) -> Result<String, String> {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or_else(|| format!("{text:?} must start with http:// or https://"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{text:?} names no host"));
    }
    if rest
        .split('/')
        .next()
        .is_some_and(|authority| authority.contains('@'))
    {
        return Err(format!("{text:?} must not hold a user name or password"));
    }
    if rest.contains(['?', '#', ' ']) {
        return Err(format!(
            "{text:?} must not hold a query, a fragment or a space"
        ));
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// A whole number of 1 or more (`--max-connections`).
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) | Err(_) => Err(format!("{text:?} is not a whole number of 1 or more")),
        Ok(count) => Ok(count),
    }
}

pub(crate) fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Colours only on a terminal: a log redirected to a file or a pipe stays plain text.
    tracing_subscriber::fmt()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KARMADUE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let mut config = Config::new(args.listen, args.data_dir, args.public_url);
    config.max_body_bytes = args.max_body_bytes;
    config.conformance_fixtures = args.conformance_fixtures;
    config.bundled_catalog = args.bundled_catalog;
    config.metrics = args.metrics;
    config.ledger_dir = args.ledger_dir;
    config.database_url = args.database_url.map(kd_core::config::Secret::new);
    config.max_connections = args.max_connections;
    config.max_connections_per_address = args.max_connections_per_address;
    config.checkpoint_interval = std::time::Duration::from_secs(args.checkpoint_interval_s);
    config.trusted_proxies = kd_core::config::TrustedProxies::parse(&args.trusted_proxies)
        .map_err(|reason| anyhow::anyhow!("--trusted-proxies: {reason}"))?;
    config.smtp_url = args.smtp_url.map(kd_core::config::Secret::new);
    config.outbound_allow_private = args.outbound_allow_private;
    config.outbound_trusted_cas = args.outbound_ca_file.unwrap_or_default();
    if let Some(mount) = args.ronin_mount {
        config.ronin_mount = mount;
    }
    config.ronin_listen = args.ronin_listen;
    config.ronin_public_url = args.ronin_public_url;
    if let Some(from) = args.mail_from {
        config.mail_from = from;
    }
    if let Some(path) = &args.access_tiers {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.access_tiers = kd_core::tiers::AccessTiers::from_json(&text)
            .with_context(|| format!("in {}", path.display()))?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let bound = listener.local_addr()?;
        if config.public_url == kd_core::config::default_public_url(config.listen) {
            config.public_url = kd_core::config::default_public_url(bound);
        }
        // Ronin's own address, when it has one: bound now, so port 0 names the real port.
        let ronin_listener = match config.ronin_listen {
            Some(address) => {
                let listener = tokio::net::TcpListener::bind(address)
                    .await
                    .with_context(|| format!("cannot listen on {address} (--ronin-listen)"))?;
                let bound = listener.local_addr()?;
                config.ronin_listen = Some(bound);
                Some(listener)
            }
            None => None,
        };
        let hub = kd_karmadue::open(config, Arc::new(SystemClock), Arc::new(SystemRandom))?;
        let started = std::time::Instant::now();
        let bar = rows_bar(
            kd_karmadue::catalog::first_start::BUNDLED_ROWS,
            "first start: bundled catalog",
        );
        let mut progress = |rows: u64| bar.set_position(rows);
        let prepared = kd_karmadue::prepare_with(&hub, &mut progress)
            .await
            .map_err(|error| anyhow::anyhow!("{}", error.cause_text()));
        bar.finish_and_clear();
        if let Some(load) = prepared? {
            say_first_import(&load, started.elapsed().as_secs_f64());
        }
        print_banner(&hub, bound);
        kd_karmadue::serve_with_ronin(listener, ronin_listener, hub, shutdown_signal()).await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The stderr line of a start that loaded (or finished loading) the bundled catalog.
fn say_first_import(load: &kd_karmadue::catalog::first_start::BundledLoad, seconds: f64) {
    use kd_karmadue::catalog::first_start::FirstImport;
    let report = &load.report;
    match load.how {
        FirstImport::Loaded => eprintln!(
            "first start: loaded the bundled catalog ({} resources, {} bad rows) in {seconds:.1} s",
            report.imported,
            report.bad.len(),
        ),
        FirstImport::Resumed => eprintln!(
            "resumed the bundled catalog's first import, which an earlier start did not finish: {} more resources ({} were already there, {} bad rows) in {seconds:.1} s",
            report.imported,
            report.unchanged,
            report.bad.len(),
        ),
        FirstImport::FoundComplete => {
            eprintln!("the bundled catalog's first import was already complete; marked it done");
        }
    }
}

fn print_banner(hub: &kd_karmadue::Hub, bound: SocketAddr) {
    let url = &hub.config.public_url;
    say!("KarmaDue hub listening on {bound}");
    say!("  MCP endpoint   {url}/functions/v1/mcp");
    say!("  REST tools     {url}/functions/v1/public-api/v1/tools/<tool>");
    say!("  verify         {url}/functions/v1/public-api/v1/verify/<agent_id>");
    say!(
        "  JWKS           {url}/.well-known/jwks.json  (kd-passport-1 {})",
        hub.passport_key.public_key_b64url()
    );
    say!(
        "  log head       {url}/.well-known/kd-log-head.json  (ledger folder {})",
        hub.config.ledger_path().display()
    );
    say!("  docs           {url}/");
    match (&hub.ronin.own_url, hub.config.ronin_listen) {
        (Some(ronin), Some(address)) => {
            say!("  Ronin          {ronin}/  (its own address, {address})")
        }
        _ => say!("  Ronin          {}", hub.ronin.base_url()),
    }
    if hub.config.metrics {
        say!("  metrics        {url}/metrics");
    }
    if !hub.config.trusted_proxies.is_empty() {
        say!(
            "  trusted proxies {} (X-Forwarded-For names the client)",
            hub.config.trusted_proxies
        );
    }
    say!("  data folder    {}", hub.config.data_dir.display());
    say!("  database       {:?}", hub.config.database());
    say!("  tools          {}", hub.tools.len());
    if hub.config.conformance_fixtures {
        say!("  conformance fixtures ON (test tools; loopback only)");
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
