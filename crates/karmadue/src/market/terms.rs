//! The exact terms hash, recipe `kd-terms-v1` (docs page "market", section "Terms hash";
//! docs/decisions.md 447).
//!
//! The text is six lines joined by LF, no trailing LF: `kd-terms-v1`, the proposal id, the
//! proposer's listing id, the proposing agent's id, the counterparty agent's id, and the terms
//! object printed as PostgreSQL prints `jsonb::text` (the kd-mcp-v1 canonical printer: keys
//! by length then bytes, `", "` and `": "`, numbers as sent). The hash is the lowercase hex
//! SHA-256 of the text's UTF-8 bytes. Any party can rebuild it from `get_proposal`'s fields.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The recipe's name, the text's first line.
pub const RECIPE: &str = "kd-terms-v1";

/// The ids a terms text names, in its order.
#[derive(Debug, Clone, Copy)]
pub struct TermsIds<'a> {
    /// `kdpr_` id.
    pub proposal_id: &'a str,
    /// The proposer's listing.
    pub listing_id: &'a str,
    /// The proposing agent.
    pub proposer_id: &'a str,
    /// The other agent.
    pub counterparty_id: &'a str,
}

/// The terms object's canonical text (jsonb::text).
pub fn canonical_terms(terms: &Value) -> String {
    kd_protocol::canonical::canonical_value_text(terms)
}

/// Whether every number in `value` is an integer within ±(2^53 − 1), so any JSON library
/// prints it the same way (docs/decisions.md 447).
pub fn integers_only(value: &Value) -> bool {
    const MAX_SAFE: i64 = 9_007_199_254_740_991;
    match value {
        Value::Number(number) => number.as_i64().is_some_and(|n| n.abs() <= MAX_SAFE),
        Value::Array(items) => items.iter().all(integers_only),
        Value::Object(members) => members.values().all(integers_only),
        _ => true,
    }
}

/// The kd-terms-v1 text of `ids` and the terms' canonical text.
pub fn terms_text(ids: TermsIds<'_>, canonical_terms: &str) -> String {
    [
        RECIPE,
        ids.proposal_id,
        ids.listing_id,
        ids.proposer_id,
        ids.counterparty_id,
        canonical_terms,
    ]
    .join("\n")
}

/// The exact terms hash: lowercase hex SHA-256 of the kd-terms-v1 text.
pub fn terms_hash(ids: TermsIds<'_>, canonical_terms: &str) -> String {
    hex::encode(Sha256::digest(terms_text(ids, canonical_terms).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the docs page "market" (docs/market.md), byte for byte.
    #[test]
    fn the_docs_pages_worked_example_hashes_as_printed() {
        let page = include_str!("../../docs/market.md");
        let terms: Value = serde_json::from_str(
            r#"{"points": 120, "deliver_by": "2026-12-20", "scope": "Review 3 MCP servers' licenses", "milestones": [{"pay": 40, "step": "first"}, {"pay": 80, "step": "rest"}], "refundable": false}"#,
        )
        .unwrap();
        let canonical = canonical_terms(&terms);
        let ids = TermsIds {
            proposal_id: "kdpr_0123456789abcdef01234567",
            listing_id: "kdli_89abcdef0123456789abcdef",
            proposer_id: "7c0e6f9a-3b1d-4e5f-8a2b-1c3d5e7f9a0b",
            counterparty_id: "2f4a6c8e-0b1d-4c3e-9f5a-7b9d1e3f5a7c",
        };
        let text = terms_text(ids, &canonical);
        let hash = terms_hash(ids, &canonical);
        assert!(page.contains(&canonical), "{canonical}");
        assert!(page.contains(&text), "{text}");
        assert!(page.contains(&hash), "{hash}");
    }
}
