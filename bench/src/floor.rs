//! The bare HTTP floor: one axum route that answers every POST with a fixed JSON-RPC result,
//! no middleware, no hub. Driven by the same client as the hub's phases, it measures what the
//! HTTP/1.1 stack (hyper through axum, on the hub's runtime) and the client cost per request
//! on this machine: no request to the hub can be cheaper.

use axum::Router;
use axum::http::header;
use axum::routing::post;
use tokio::net::TcpListener;

/// The path the bare server answers.
pub const PATH: &str = "/ping";

/// The one answer, the shape of the hub's answer to a JSON-RPC `ping`.
const BODY: &str = r#"{"jsonrpc":"2.0","id":0,"result":{}}"#;

/// Serves the bare route on `listener` until `shutdown` completes.
///
/// # Errors
/// When accepting connections fails.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new().route(
        PATH,
        post(|_body: axum::body::Bytes| async {
            ([(header::CONTENT_TYPE, "application/json")], BODY)
        }),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// The store floor: the least any signed write asks of the store, with no HTTP, no hub and no
/// handler. `tasks` concurrent tasks each loop on [`kd_core::store::Store::write`] jobs that
/// spend a fresh nonce and append one event (canonical payload, SHA-256 row hash, the chain
/// head), committed by the one group-commit writer. After `warmup`, the jobs that finish
/// inside `duration` count. The events are `bench.floor` rows on the bench's own log.
///
/// # Errors
/// When a write fails.
pub async fn store(
    hub: std::sync::Arc<kd_karmadue::Hub>,
    tasks: usize,
    warmup: std::time::Duration,
    duration: std::time::Duration,
) -> anyhow::Result<crate::load::PhaseResult> {
    use std::time::Instant;
    let start = Instant::now();
    let window_start = start + warmup;
    let end = window_start + duration;
    let sampler = tokio::spawn(async move {
        tokio::time::sleep_until(window_start.into()).await;
        let before = crate::cpu::Snapshot::take();
        tokio::time::sleep_until(end.into()).await;
        crate::cpu::Snapshot::take().since(&before)
    });
    let workers: Vec<_> = (0..tasks)
        .map(|task| {
            let hub = std::sync::Arc::clone(&hub);
            tokio::spawn(async move {
                let mut ok = 0u64;
                let mut latencies_us = Vec::with_capacity(64 * 1024);
                let mut n = 0u64;
                while Instant::now() < end {
                    n += 1;
                    let agent = format!("bench-floor-{task}");
                    let nonce = format!("floor-nonce-{n:016}");
                    let sent = Instant::now();
                    hub.store
                        .write(move |txn| -> Result<(), kd_core::store::StoreError> {
                            txn.conn()
                                .prepare_cached(
                                    "INSERT INTO nonces (agent_id, nonce, seen_ms) VALUES (?1, ?2, ?3)",
                                )?
                                .execute(kd_core::params![agent, nonce, txn.now_ms()])?;
                            txn.append(kd_core::eventlog::NewEvent {
                                kind: "bench.floor",
                                actor: agent.clone(),
                                subject: agent,
                                payload: serde_json::json!({ "nonce": nonce }),
                            })?;
                            Ok(())
                        })
                        .await??;
                    let done = Instant::now();
                    if done >= window_start && done <= end {
                        ok += 1;
                        let micros = done.duration_since(sent).as_micros();
                        latencies_us.push(u32::try_from(micros).unwrap_or(u32::MAX));
                    }
                }
                anyhow::Ok((ok, latencies_us))
            })
        })
        .collect();
    let mut result = crate::load::PhaseResult {
        seconds: duration.as_secs_f64(),
        ..crate::load::PhaseResult::default()
    };
    for worker in workers {
        let (ok, latencies_us) = worker.await??;
        result.ok += ok;
        result.ok_total += ok;
        result.latencies_us.extend(latencies_us);
    }
    result.cpu = sampler.await?;
    result.latencies_us.sort_unstable();
    Ok(result)
}
