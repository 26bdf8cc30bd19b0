//! The accept loop (docs/decisions.md 141–142): HTTP/1.1 over hyper's connection builder with
//! a timer, so that no client holds the hub with a half-sent request, an idle socket or a
//! flood of connections.
//!
//! - **Header read timeout** ([`EdgeLimits::header_read_timeout`]): a request's head must
//!   arrive within it, counted from when the connection opened or its previous response was
//!   sent, so it is also the idle timeout of a kept-alive connection. Past it hyper closes the
//!   connection.
//! - **Body idle timeout** ([`EdgeLimits::body_idle_timeout`]): while a body is read, no more
//!   than this between two chunks; past it the body fails (the handler answers 4xx) and the
//!   connection closes.
//! - **Connection cap** ([`EdgeLimits::max_connections`]): a connection past the cap is closed
//!   as soon as it is accepted, counted in `karmadue_connections_refused_total` and logged (at
//!   most once every [`REFUSAL_LOG_EVERY`], with the number refused since).
//! - **Each address's share** ([`EdgeLimits::max_connections_per_address`], [`super::shares`]):
//!   a connection from an address (an IPv6 /64) that already holds its share is closed the
//!   same way, counted in `karmadue_connections_refused_total` and
//!   `karmadue_connections_refused_per_address_total`; a trusted proxy's connections are not
//!   counted. So one client's half-sent requests cannot take every slot of the cap.
//! - **Shutdown**: when the shutdown future resolves the listener is closed, idle connections
//!   close, in-flight requests get [`EdgeLimits::shutdown_grace`] to finish, then whatever is
//!   left is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tower::ServiceExt;

use kd_kernel::telemetry::HubMetrics;

use super::shares::Shares;

/// At most one "connection cap reached" line per this long.
pub const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);
/// How long the loop pauses after a failed `accept` (out of file descriptors, say), so a
/// persistent failure does not spin a core.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The edge's limits, from [`kd_core::config::Config`].
#[derive(Debug, Clone, Copy)]
pub struct EdgeLimits {
    /// Connections served at once; more are closed on accept.
    pub max_connections: usize,
    /// Connections one address (an IPv6 /64) may hold at once; more are closed on accept.
    pub max_connections_per_address: usize,
    /// Time for a request's head (and idle time between requests).
    pub header_read_timeout: Duration,
    /// Longest wait for the next chunk of a request body.
    pub body_idle_timeout: Duration,
    /// Time in-flight requests get after shutdown begins.
    pub shutdown_grace: Duration,
}

impl EdgeLimits {
    /// The limits of `config`.
    pub fn of(config: &kd_core::config::Config) -> Self {
        Self {
            max_connections: config.max_connections,
            max_connections_per_address: config.max_connections_per_address,
            header_read_timeout: config.header_read_timeout,
            body_idle_timeout: config.body_idle_timeout,
            shutdown_grace: config.shutdown_grace,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then shuts down within
/// [`EdgeLimits::shutdown_grace`].
///
/// # Errors
/// None today: accept failures are logged and retried. (`io::Result` keeps the door open.)
pub async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: EdgeLimits,
    shares: Shares,
    metrics: &HubMetrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cap = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let mut address_refusals = Refusals::default();
    let graceful = GracefulShutdown::new();
    let mut connections = tokio::task::JoinSet::new();
    let mut refusals = Refusals::default();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {
                metrics.set_open_connections(connections.len());
                continue;
            }
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(share) = shares.take(peer.ip()) else {
            drop(stream);
            metrics.connection_refused_per_address();
            address_refusals.refused_per_address(limits.max_connections_per_address);
            continue;
        };
        let Ok(permit) = Arc::clone(&cap).try_acquire_owned() else {
            drop(stream);
            metrics.connection_refused();
            refusals.refused(limits.max_connections);
            continue;
        };
        let service = hyper::service::service_fn(connection_service(
            router.clone(),
            peer,
            limits.body_idle_timeout,
        ));
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        connections.spawn(async move {
            // A client that hangs up or times out ends here; nothing to report.
            let _ = watched.await;
            drop(permit);
            drop(share);
        });
        metrics.set_open_connections(connections.len());
    }
    drop(listener);
    tracing::info!(open_connections = connections.len(), "shutting down");
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            open_connections = connections.len(),
            grace_s = limits.shutdown_grace.as_secs_f64(),
            "closing the connections still open after the shutdown grace"
        );
    }
    connections.shutdown().await;
    Ok(())
}

/// The per-connection service: the peer's address as `ConnectInfo` (as
/// `into_make_service_with_connect_info` would set it) and the body's idle timeout.
fn connection_service(
    router: Router,
    peer: SocketAddr,
    body_idle_timeout: Duration,
) -> impl Fn(
    hyper::Request<hyper::body::Incoming>,
) -> tower::util::Oneshot<Router, axum::extract::Request>
+ Clone {
    move |request| {
        let mut request = request.map(|body| {
            axum::body::Body::new(tower_http::timeout::TimeoutBody::new(
                body_idle_timeout,
                body,
            ))
        });
        request.extensions_mut().insert(ConnectInfo(peer));
        router.clone().oneshot(request)
    }
}

/// When the cap was last logged and how many connections were refused since.
#[derive(Debug, Default)]
struct Refusals {
    logged: Option<Instant>,
    since: u64,
}

impl Refusals {
    /// Counts one refusal; true when it is time to log (then the count restarts).
    fn due(&mut self) -> bool {
        self.since += 1;
        if self
            .logged
            .is_some_and(|logged| logged.elapsed() < REFUSAL_LOG_EVERY)
        {
            return false;
        }
        self.logged = Some(Instant::now());
        true
    }

    fn refused(&mut self, cap: usize) {
        if self.due() {
            tracing::warn!(
                max_connections = cap,
                refused = self.since,
                "connection cap reached: closing new connections (--max-connections)"
            );
            self.since = 0;
        }
    }

    fn refused_per_address(&mut self, share: usize) {
        if self.due() {
            tracing::warn!(
                max_connections_per_address = share,
                refused = self.since,
                "an address holds its share of the connection cap: closing its new connections (--max-connections-per-address)"
            );
            self.since = 0;
        }
    }
}
