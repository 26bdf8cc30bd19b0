//! The transparency log's checkpoint schedule (kd_core::tlog; docs/transparency.md): a
//! checkpoint signed by the server key every `checkpoint_interval` while the log grows, kept in
//! `tlog_checkpoints` (the routes are `http::transparency`).

use std::sync::Arc;

use kd_core::tlog;
use kd_kernel::Kernel;

/// The origin line of this hub's checkpoints.
pub fn origin(hub: &Kernel) -> String {
    tlog::note::origin_of(&hub.config.public_url)
}

/// Signs a checkpoint when the log has grown past the latest one; returns its size. Never
/// signs one on a hub whose transparency log is off (`Config::transparency`, kd-bench only).
///
/// # Errors
/// The store's error.
pub async fn publish(hub: &Kernel) -> Result<Option<u64>, kd_core::store::StoreError> {
    if !hub.config.transparency {
        return Ok(None);
    }
    let (latest, head) = hub
        .store
        .read(|conn| {
            let latest = tlog::store::latest_checkpoint(conn)?.map_or(0, |c| c.size);
            Ok::<_, kd_core::store::StoreError>((
                latest,
                kd_core::eventlog::ChainHead::load(conn)?.seq,
            ))
        })
        .await?;
    if u64::try_from(head).unwrap_or(0) <= latest {
        return Ok(None);
    }
    let key = hub.passport_key.clone();
    let origin = origin(hub);
    let published = hub
        .store
        .write(move |txn| {
            let now = txn.now_ms();
            tlog::store::publish(txn.conn(), &key, &origin, now)
        })
        .await??;
    Ok(published.map(|checkpoint| checkpoint.size))
}

/// Publishes a checkpoint every `checkpoint_interval` while the log grows (real time).
pub async fn run_checkpoints(hub: Arc<Kernel>) {
    let mut every = tokio::time::interval(hub.config.checkpoint_interval);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        if let Err(error) = publish(&hub).await {
            tracing::error!(%error, "publishing a transparency log checkpoint failed");
        }
    }
}
