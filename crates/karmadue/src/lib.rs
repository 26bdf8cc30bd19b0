//! KarmaDue: the MCP hub where agents own their identity, find tools with evidence, and sign
//! every write. This crate holds the tool registry, the areas behind it, and the HTTP
//! adapters; `kd-core` holds the store and the event log, `kd-protocol` the pure recipes.
//!
//! The server is a library: [`serve`] takes a bound listener and a shutdown future, so tests
//! start it on port 0 and `main` stays tiny.

pub mod admission;
pub mod catalog;
pub mod connector;
pub mod data_files;
pub mod directory;
pub mod docs;
pub mod events;
pub mod findings;
pub mod fixtures;
pub mod forum;
pub mod help;
pub mod http;
pub mod hub;
pub mod identity;
pub mod jobs;
pub mod kinds;
pub mod ledger;
pub mod market;
pub mod outcomes;
pub mod people;
pub mod preflight;
pub mod prune;
pub mod rebuild;
pub mod replay;
pub mod schedule;
pub mod signals;
pub mod standing;
pub mod stream;
pub mod tools;
pub mod views;

use std::future::Future;
use std::sync::Arc;

use kd_core::clock::Clock;
use kd_core::config::Config;
use kd_core::keys::{PASSPORT_KEY_ID, ServerKey};
use kd_core::random::{Random, random_bytes};
use kd_core::store::Store;

pub use hub::Hub;
pub use kd_kernel::Kernel;

/// Why a hub could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The data folder could not be made.
    #[error("data folder {path}: {source}")]
    DataDir {
        /// The folder.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The key file could not be read or made.
    #[error(transparent)]
    Key(#[from] kd_core::keys::KeyFileError),
    /// The database could not be opened.
    #[error(transparent)]
    Store(#[from] kd_core::store::StoreError),
    /// The database is signed by other server keys than this process holds.
    #[error("{0}")]
    KeyMismatch(String),
    /// `ronin_mount` is not a mount path (`kd_core::config::check_ronin_mount`).
    #[error("--ronin-mount: {0}")]
    RoninMount(String),
    /// The conformance fixtures were asked for on a non-loopback address.
    #[error("--conformance-fixtures serves test tools and is allowed on a loopback address only")]
    FixturesNotLoopback,
}

/// Opens a hub: makes the data folder, the database (WAL) and `kd-passport-1` on first start,
/// the folder and the database files owner-only (0700, 0600; `data_files`).
///
/// # Errors
/// [`StartError`] when the folder, key or database cannot be set up.
pub fn open(
    mut config: Config,
    clock: Arc<dyn Clock>,
    random: Arc<dyn Random>,
) -> Result<Arc<Hub>, StartError> {
    if config.conformance_fixtures && !config.listen.ip().is_loopback() {
        return Err(StartError::FixturesNotLoopback);
    }
    kd_core::config::check_ronin_mount(&config.ronin_mount).map_err(StartError::RoninMount)?;
    // Owner only, whatever the umask: the database holds password hashes, emails and mail.
    data_files::make_private_dir(&config.data_dir).map_err(|source| StartError::DataDir {
        path: config.data_dir.clone(),
        source,
    })?;
    let passport_key = ServerKey::load_or_create(&config.keys_dir(), PASSPORT_KEY_ID, || {
        random_bytes::<32>(random.as_ref())
    })?;
    // This hub's own registry: never the process's global recorder (tests run many hubs).
    let metrics = kd_kernel::telemetry::HubMetrics::new(clock.now_ms());
    let store = Store::open_at(&config.database(), Arc::clone(&clock), metrics.store())?;
    store.set_transparency(config.transparency);
    if let Some(path) = store.path() {
        data_files::make_database_private(path).map_err(|source| StartError::DataDir {
            path: path.to_owned(),
            source,
        })?;
    }
    let ronin = kd_ronin::Ronin::open(
        &config.keys_dir(),
        store.clone(),
        Arc::clone(&clock),
        || random_bytes::<32>(random.as_ref()),
    )?
    .with_public_url(config.public_url.clone())
    .with_random(Arc::clone(&random));
    let (ronin_mount, ronin_url) = config.ronin_base();
    let ronin = ronin.with_base(ronin_mount, ronin_url);
    // Every hub process on the database signs with the same keys (decision 153).
    for (key_id, public_key) in [
        (PASSPORT_KEY_ID, passport_key.public_key_b64url()),
        ("ronin-operator", ronin.operator_pubkey.clone()),
    ] {
        kd_core::keys::pin_public_key(&store, key_id, &public_key)?
            .map_err(StartError::KeyMismatch)?;
    }
    // The form tokens' key is derived from kd-passport-1's seed (no file, no draw).
    let passport_seed =
        kd_core::keys::load_seed(&config.keys_dir(), PASSPORT_KEY_ID)?.ok_or_else(|| {
            kd_core::keys::KeyFileError::Malformed(
                config.keys_dir().join(format!("{PASSPORT_KEY_ID}.key")),
            )
        })?;
    let form_key = http::form_token::derive_key(&passport_seed);
    let linkdbots =
        kd_linkdbots::Linkdbots::new(store.clone(), Arc::clone(&clock), Arc::clone(&random))
            .with_public_url(&config.public_url);
    let tools = hub::served_tools(config.conformance_fixtures);
    config.access_tiers = hub::access_tiers(std::mem::take(&mut config.access_tiers), &tools);
    let search = catalog::search::SearchIndex::on_disk(config.data_dir.join("search"));
    let areas = kd_kernel::AreaState::new()
        .with(search)
        .with(Arc::new(identity::names::NameIndex::default()))
        .with(people::mail::MailWakeup::default())
        .with(people::password_gate::PasswordGate::default());
    let kernel = Kernel {
        limiter: kd_core::limits::Limiter::for_store(&store),
        directory: Arc::new(directory::AreaDirectory),
        metrics,
        areas,
        config,
        store,
        passport_key,
        clock,
        random,
        tools,
    };
    Ok(Arc::new(Hub {
        kernel: Arc::new(kernel),
        ronin,
        linkdbots,
        form_tokens: http::form_token::FormTokens::new(form_key),
        in_flight: http::cancel::InFlight::default(),
    }))
}

/// Work a hub does before serving: when the configuration asks for the bundled catalog, loads
/// it on first start (or finishes a first import an earlier start was stopped in:
/// `catalog::first_start`), then builds (or reopens) the search index, builds the index of
/// reserved names, and records the forum's DEMO sample threads once. Returns what the
/// bundled import did when it did anything.
///
/// # Errors
/// `internal` when the snapshot cannot be read or stored.
pub async fn prepare(
    hub: &Kernel,
) -> Result<Option<catalog::first_start::BundledLoad>, kd_kernel::ToolError> {
    prepare_with(hub, &mut |_| {}).await
}

/// [`prepare`], telling `progress` how many rows of the bundled catalog the first import has
/// read (of `catalog::first_start::BUNDLED_ROWS`) as it goes: `karmadue serve`'s progress bar.
///
/// # Errors
/// `internal` when the snapshot cannot be read or stored.
pub async fn prepare_with(
    hub: &Kernel,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<Option<catalog::first_start::BundledLoad>, kd_kernel::ToolError> {
    let report = if hub.config.bundled_catalog {
        catalog::first_start::load_bundled_with(hub, progress).await?
    } else {
        None
    };
    // This process's search index, built or reopened now rather than on the first search.
    hub.areas
        .require::<catalog::search::SearchIndex>()?
        .warm(&hub.store)
        .await?;
    // And the reserved names, built now rather than inside the first registration's batch.
    let names = Arc::clone(hub.areas.require::<Arc<identity::names::NameIndex>>()?);
    hub.store.write(move |txn| names.build(txn)).await??;
    // The forum's two DEMO sample threads, once (list_threads shows them while no real thread
    // is visible).
    forum::write::seed_demo(hub).await?;
    Ok(report)
}

/// Serves `hub` on `listener` until `shutdown` resolves, with the edge's timeouts and
/// connection cap (`http::server`); then stops accepting, gives in-flight requests the
/// configured grace, closes what is left, stops the background jobs and closes the store.
/// Logs "shutting down" when it begins and "stopped" when it is done.
///
/// # Errors
/// The server's I/O error.
pub async fn serve(
    listener: tokio::net::TcpListener,
    hub: Arc<Hub>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with_ronin(listener, None, hub, shutdown).await
}

/// [`serve`], and Ronin on `ronin_listener` too when given (`--ronin-listen`: Ronin's routes
/// at its root, [`http::ronin_router`]). Both listeners share the store, the log and the
/// background jobs, and stop together when `shutdown` resolves (each with the grace).
///
/// # Errors
/// The first server's I/O error.
pub async fn serve_with_ronin(
    listener: tokio::net::TcpListener,
    ronin_listener: Option<tokio::net::TcpListener>,
    hub: Arc<Hub>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let store = hub.store.clone();
    let jobs = start_jobs(&hub);
    // One signal for both listeners.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let signal = tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let until_stopped = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    let limits = http::server::EdgeLimits::of(&hub.config);
    let shares = || {
        http::shares::Shares::new(
            hub.config.max_connections_per_address,
            hub.config.trusted_proxies.clone(),
        )
    };
    let main = http::server::run(
        listener,
        http::router(Arc::clone(&hub)),
        limits,
        shares(),
        &hub.metrics,
        until_stopped(stopped.clone()),
    );
    let ronin = async {
        match ronin_listener {
            Some(listener) => {
                http::server::run(
                    listener,
                    http::ronin_router(Arc::clone(&hub)),
                    limits,
                    shares(),
                    &hub.metrics,
                    until_stopped(stopped.clone()),
                )
                .await
            }
            None => Ok(()),
        }
    };
    let (result, ronin_result) = tokio::join!(main, ronin);
    signal.abort();
    for job in jobs {
        job.abort();
    }
    store.close();
    tracing::info!("stopped");
    result.and(ronin_result)
}

/// Starts the background jobs of a serving hub: mail to people (when a relay is configured),
/// the help watch, the daily heads, the checkpoints, the telemetry upkeep and Ronin's
/// callbacks (through the outbound client under the operator's policy).
fn start_jobs(hub: &Arc<Hub>) -> Vec<tokio::task::JoinHandle<()>> {
    let mut jobs = Vec::new();
    if hub.config.smtp_url.is_some() {
        jobs.push(tokio::spawn(people::mail::run_sender(Arc::clone(
            &hub.kernel,
        ))));
    }
    jobs.push(tokio::spawn(help::watch::run_schedule(Arc::clone(
        &hub.kernel,
    ))));
    jobs.push(tokio::spawn(ledger::run_schedule(Arc::clone(&hub.kernel))));
    jobs.push(tokio::spawn(ledger::checkpoints::run_checkpoints(
        Arc::clone(&hub.kernel),
    )));
    jobs.push(tokio::spawn(telemetry_upkeep(Arc::clone(&hub.kernel))));
    jobs.push(tokio::spawn(kd_ronin::callbacks::run_deliverer(
        hub.ronin.clone(),
        hub.config.outbound_policy(),
    )));
    jobs
}

/// Drains histogram samples every [`kd_kernel::telemetry::UPKEEP_EVERY`], scraped or not.
async fn telemetry_upkeep(hub: Arc<Kernel>) {
    let mut every = tokio::time::interval(kd_kernel::telemetry::UPKEEP_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        hub.metrics.run_upkeep();
    }
}
