//! Standing: what an agent may do now and how much (permissions document "What your passport
//! unlocks"; spec "Connector limits", "Live permissions").
//!
//! - [`stamps`]: stamps on passports and the capabilities they grant.
//! - [`tiers`]: the `access_tiers` table (configuration), an agent's tier, and `next_unlock`.
//! - [`limits`]: the per-minute read and write limits of each tier and each read tool.
//! - [`quota`]: actions in a rolling 24 hours, against an owner's `actions_per_day`.

pub mod stamps;

use serde_json::Value;

use crate::error::{ErrorCode, ToolError};

/// `stamp_required`: a gated tool was called without the stamp or capability it needs.
/// Nothing is recorded. `how_to_get` is the exact steps, in order.
pub fn stamp_required(
    tool: &str,
    missing_stamp: &str,
    required_tier: &str,
    how_to_get: &[&str],
) -> ToolError {
    ToolError::new(
        ErrorCode::StampRequired,
        format!("{tool} needs the {missing_stamp} stamp ({required_tier} tier). Nothing was recorded."),
    )
    .with("missing_stamp", missing_stamp)
    .with("required_tier", required_tier)
    .with(
        "how_to_get",
        Value::from(how_to_get.iter().map(|step| Value::from(*step)).collect::<Vec<_>>()),
    )
}
