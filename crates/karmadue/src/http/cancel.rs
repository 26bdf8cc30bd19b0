//! `notifications/cancelled` for a running `tools/call` (MCP basic/utilities/cancellation;
//! docs/decisions.md 147).
//!
//! A handshake-era request that carries a valid `Mcp-Session-Id` is registered here under its
//! session and JSON-RPC id while it runs. A `notifications/cancelled` from the same session
//! naming that `requestId` stops it: the adapter drops the call's future, so work that has not
//! started stops (argument checks, the signature check, reads, a write not yet handed to the
//! store's writer), and no result is sent (the POST is answered 204 with no body). A write
//! already queued to the writer cannot be taken back and completes; its result is dropped.
//! Cancellations of unknown, finished or other sessions' requests are ignored, as the
//! specification allows. Requests without a session (2026-07-28 clients) are not registered.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use serde_json::value::RawValue;

type Key = (String, String);
/// The registered requests of one key, each with its token and the sender that cancels it.
type Waiting = Vec<(u64, tokio::sync::oneshot::Sender<()>)>;

/// The cancellable requests running in this hub process.
#[derive(Debug, Default)]
pub struct InFlight {
    next: AtomicU64,
    running: Mutex<HashMap<Key, Waiting>>,
}

/// One registered request; dropping it unregisters it.
#[derive(Debug)]
pub struct Running<'a> {
    owner: &'a InFlight,
    key: Key,
    token: u64,
    cancelled: tokio::sync::oneshot::Receiver<()>,
}

fn key(session: &str, id: &Value) -> Key {
    // Ids compare as JSON: 5 and "5" are different requests.
    (session.to_owned(), id.to_string())
}

impl InFlight {
    /// Registers the request `id` of `session` until the returned guard is dropped.
    pub fn register(&self, session: &str, id: &Value) -> Running<'_> {
        let (sender, cancelled) = tokio::sync::oneshot::channel();
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        let key = key(session, id);
        if let Ok(mut running) = self.running.lock() {
            running
                .entry(key.clone())
                .or_default()
                .push((token, sender));
        }
        Running {
            owner: self,
            key,
            token,
            cancelled,
        }
    }

    /// Cancels the running requests `id` of `session`; how many there were (0: ignored).
    pub fn cancel(&self, session: &str, id: &Value) -> usize {
        let Ok(mut running) = self.running.lock() else {
            return 0;
        };
        let senders = running.remove(&key(session, id)).unwrap_or_default();
        let count = senders.len();
        for (_, sender) in senders {
            let _ = sender.send(());
        }
        count
    }

    /// How many requests are registered (tests).
    pub fn len(&self) -> usize {
        self.running
            .lock()
            .map_or(0, |running| running.values().map(Vec::len).sum())
    }

    /// Whether none is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Running<'_> {
    /// Resolves when the request is cancelled (never otherwise).
    pub async fn cancelled(&mut self) {
        if (&mut self.cancelled).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let Ok(mut running) = self.owner.running.lock() else {
            return;
        };
        if let Some(list) = running.get_mut(&self.key) {
            list.retain(|(token, _)| *token != self.token);
            if list.is_empty() {
                running.remove(&self.key);
            }
        }
    }
}

/// `notifications/cancelled` of `session` (`params.requestId`): stops that request if it is
/// still running; anything else is ignored.
pub fn cancel_from(in_flight: &InFlight, session: &str, params: Option<&RawValue>) {
    let request_id = params
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .and_then(|params| params.get("requestId").cloned());
    if let Some(request_id) = request_id
        && in_flight.cancel(session, &request_id) > 0
    {
        tracing::info!(%request_id, "cancelled a running request");
    }
}

/// The answer to a request cancelled while it ran: no JSON-RPC result, 204 with no body.
pub fn no_result(request_id: &str) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    super::set_request_id(response.headers_mut(), request_id);
    response
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::InFlight;

    #[tokio::test]
    async fn only_the_same_session_and_id_cancel_and_finished_requests_unregister() {
        let in_flight = InFlight::default();
        let mut running = in_flight.register("s1", &json!(5));
        assert_eq!(in_flight.cancel("s2", &json!(5)), 0);
        assert_eq!(in_flight.cancel("s1", &json!("5")), 0);
        assert_eq!(in_flight.len(), 1);
        assert_eq!(in_flight.cancel("s1", &json!(5)), 1);
        tokio::time::timeout(std::time::Duration::from_secs(1), running.cancelled())
            .await
            .unwrap();
        drop(running);
        assert!(in_flight.is_empty());
        let other = in_flight.register("s1", &json!(6));
        drop(other);
        assert!(in_flight.is_empty());
        assert_eq!(in_flight.cancel("s1", &json!(6)), 0);
    }
}
