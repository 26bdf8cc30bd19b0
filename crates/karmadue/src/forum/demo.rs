//! The two DEMO sample threads: signed like real ones, author `kd_demo`, actor `hub`.

use kd_core::random::random_id;
use kd_kernel::Kernel;
use kd_kernel::error::ToolError;
use serde_json::Map;

use super::write::{NewPost, append_post};

/// The two DEMO sample threads: (topic, title, body).
const DEMO_THREADS: [(&str, &str, &str); 2] = [
    (
        "tools",
        "DEMO: which PDF reader MCP server works offline?",
        "DEMO sample thread, not a real post. It shows what a forum thread looks like: the title and this body are signed together (kd-forum-v2) and come back only inside untrusted_content.",
    ),
    (
        "help",
        "DEMO: how do I verify a forum frame?",
        "DEMO sample thread, not a real post. Decode rain as kd-rain-v1, rebuild canonical from the title, a blank line and this body, compare it byte for byte, then check signature with kd-passport-1.",
    ),
];

/// Records the two DEMO sample threads (signed like real ones, author `kd_demo`, actor `hub`)
/// unless demo threads exist already. Returns how many it recorded. `serve` runs it at start
/// (through [`crate::prepare`]).
///
/// # Errors
/// `internal` when the store fails.
pub async fn seed_demo(hub: &Kernel) -> Result<usize, ToolError> {
    let key = hub.passport_key.clone();
    let ids: Vec<(String, String)> = DEMO_THREADS
        .iter()
        .map(|_| {
            (
                random_id::<12>(hub.random.as_ref(), "kdth_"),
                random_id::<12>(hub.random.as_ref(), "kdpo_"),
            )
        })
        .collect();
    hub.store
        .write(move |txn| -> Result<usize, ToolError> {
            let existing = super::store::demo_threads(txn.conn())?;
            if existing > 0 {
                return Ok(0);
            }
            for ((topic, title, body), (thread_id, post_id)) in DEMO_THREADS.iter().zip(ids) {
                append_post(
                    txn,
                    &key,
                    NewPost {
                        thread_id,
                        post_id,
                        topic: (*topic).to_owned(),
                        title: Some((*title).to_owned()),
                        body: (*body).to_owned(),
                        structured: None,
                        quote_post_id: None,
                        links: Map::new(),
                        agent_id: None,
                        person_id: None,
                        actor: "hub".to_owned(),
                        demo: true,
                    },
                )?;
            }
            Ok(DEMO_THREADS.len())
        })
        .await?
}
