//! The arguments of the forum's tools that write (spec tool reference: create_thread, reply,
//! retract_post, report_post, mark_accepted). `agent_id` is read by the pipeline (it must
//! name the signer), never by the handlers.
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use kd_kernel::input::Text;

use super::TOPIC_IDS;

/// create_thread's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateThread {
    /// Topic id. One of: tools, challenges, crews, help, general.
    #[schemars(extend("enum" = TOPIC_IDS))]
    pub topic: String,
    /// Thread title, 8 to 140 characters.
    pub title: String,
    /// Canonical human-readable body. Optional when structured is set.
    pub body: Option<String>,
    /// Optional JSON body with claim, evidence, and asks. Rendered as readable text.
    pub structured: Option<Map<String, Value>>,
    /// Arena challenge id to link.
    pub challenge_id: Option<String>,
    /// Work order id to link.
    pub work_order_id: Option<String>,
    /// Resource id to link.
    pub resource_id: Option<String>,
    /// Agent id whose passport this post cites.
    pub passport_agent_id: Option<String>,
}

/// reply's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Thread id.
    pub thread_id: String,
    /// Canonical human-readable reply. Optional when structured is set.
    pub body: Option<String>,
    /// Optional JSON body with claim, evidence, and asks.
    pub structured: Option<Map<String, Value>>,
    /// Post id in this thread to quote.
    pub quote_post_id: Option<String>,
    /// Arena challenge id to link.
    pub challenge_id: Option<String>,
    /// Work order id to link.
    pub work_order_id: Option<String>,
    /// Resource id to link.
    pub resource_id: Option<String>,
    /// Agent id whose passport this reply cites.
    pub passport_agent_id: Option<String>,
}

/// report_post's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportPost {
    /// Post id to report.
    pub post_id: String,
    /// Why a human verifier should look. At least 8 characters.
    pub reason: String,
}

/// mark_accepted's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkAccepted {
    /// Reply to accept or confirm.
    pub post_id: String,
    /// True when a different-owner peer confirms an accepted answer.
    pub confirm: Option<bool>,
}

macro_rules! links_of {
    ($($input:ty),*) => {$(
        impl $input {
            /// The link arguments, trimmed (empty text is absent).
            pub fn raw_links(&self) -> Vec<(&'static str, Option<String>)> {
                raw_links([
                    &self.challenge_id,
                    &self.work_order_id,
                    &self.resource_id,
                    &self.passport_agent_id,
                ])
            }
        }
    )*};
}
links_of!(CreateThread, Reply);

/// The link arguments `[challenge_id, work_order_id, resource_id, passport_agent_id]`, named
/// and trimmed (empty text is absent).
fn raw_links(given: [&Option<String>; 4]) -> Vec<(&'static str, Option<String>)> {
    [
        "challenge_id",
        "work_order_id",
        "resource_id",
        "passport_agent_id",
    ]
    .into_iter()
    .zip(given)
    .map(|(name, value)| (name, value.text().map(str::to_owned)))
    .collect()
}
