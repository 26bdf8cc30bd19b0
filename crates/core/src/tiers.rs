//! The `access_tiers` table (permissions document "What your passport unlocks"): configuration
//! the operator may replace (`karmadue serve --access-tiers FILE`, JSON of this shape), served
//! as is at `GET /functions/v1/public-api/v1/tiers`.
//!
//! Tiers are ordered lowest first. A tool named in a tier's `unlocks` needs that tier (or a
//! higher one); a tool named in no tier is open to every caller its access rule admits.
//!
//! The bundled table ([`AccessTiers::default`]) states the tiers' texts and limits but no
//! `unlocks`: each tool declares the tier that unlocks it, and the hub fills every tier whose
//! `unlocks` is absent from those declarations when it builds its registry
//! (`kd_kernel::tiers::fill_unlocks`; docs/decisions.md 438). A table that names a tier's
//! `unlocks` (an operator's file, as `karmadue tiers` prints it) keeps that list as written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessTiers {
    /// Lowest first: `anonymous`, `registered`, `admission_passed`, `owner_linked_admitted`.
    pub tiers: Vec<TierSpec>,
    /// Each read tool's own limit per caller per rolling minute (a tool not named here uses
    /// `default_tool_reads_per_minute`).
    pub tool_reads_per_minute: BTreeMap<String, u32>,
    /// The per-tool read limit of tools `tool_reads_per_minute` does not name.
    pub default_tool_reads_per_minute: u32,
}

/// One tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    /// Stable name: `anonymous`, `registered`, `admission_passed`, `owner_linked_admitted`.
    pub tier: String,
    /// Display name ("Registered passport").
    pub label: String,
    /// What a caller needs to be in it (a sentence).
    pub you_need: String,
    /// The stamp a caller of the tier below lacks (`passport`, `admission-passed`,
    /// `owner-link`); None for the first tier.
    pub missing_stamp: Option<String>,
    /// The exact steps to get it, in order.
    pub how_to_get: Vec<String>,
    /// Tool calls that only read, per rolling minute.
    pub reads_per_minute: u32,
    /// Tool calls that write, per rolling minute.
    pub writes_per_minute: u32,
    /// What the limits are counted per: `ip` or `agent`.
    pub per: String,
    /// Tools first available at this tier. Absent (`None`): filled from the tools'
    /// declarations when the hub starts ([`TierSpec::unlocks`] reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlocks: Option<Vec<String>>,
    /// Other things the tier brings, in words.
    pub also: Vec<String>,
}

/// The permissions document's table as JSON, without `unlocks` (the tools declare them): the
/// base of what `karmadue tiers` prints and an operator's `--access-tiers` file replaces.
const DEFAULT_TABLE: &str = include_str!("access_tiers.json");

impl Default for AccessTiers {
    /// The permissions document's table ([`DEFAULT_TABLE`]): 30/10 per IP, 60/20, 120/30 and
    /// 240/60 a minute.
    fn default() -> Self {
        // The bundled table is checked by `the_default_table_is_the_permissions_documents`.
        #[expect(clippy::expect_used, reason = "a compiled-in table, pinned by a test")]
        AccessTiers::from_json(DEFAULT_TABLE).expect("the bundled access_tiers.json is valid")
    }
}

impl TierSpec {
    /// The tools first available at this tier (none while `unlocks` is absent).
    pub fn unlocks(&self) -> &[String] {
        self.unlocks.as_deref().unwrap_or_default()
    }
}

/// Why a tiers file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TiersError {
    /// Not JSON of the table's shape.
    #[error("access tiers: {0}")]
    Json(#[from] serde_json::Error),
    /// The shape is right but the table is not usable.
    #[error("access tiers: {0}")]
    Invalid(String),
}

impl AccessTiers {
    /// Reads a table from JSON text and checks it: the four tier names in order, `per` is
    /// `ip` for the first tier and `agent` after.
    ///
    /// # Errors
    /// [`TiersError`] naming what is wrong.
    pub fn from_json(text: &str) -> Result<Self, TiersError> {
        let tiers: Self = serde_json::from_str(text)?;
        tiers.check()?;
        Ok(tiers)
    }

    fn check(&self) -> Result<(), TiersError> {
        let names: Vec<&str> = self.tiers.iter().map(|tier| tier.tier.as_str()).collect();
        if names != TIER_NAMES {
            return Err(TiersError::Invalid(format!(
                "tiers must be {} in this order, got {}",
                TIER_NAMES.join(", "),
                names.join(", ")
            )));
        }
        for (index, tier) in self.tiers.iter().enumerate() {
            let per = if index == 0 { "ip" } else { "agent" };
            if tier.per != per {
                return Err(TiersError::Invalid(format!(
                    "tier {} counts per {per}",
                    tier.tier
                )));
            }
        }
        Ok(())
    }

    /// Every limit multiplied by `factor` (tests that are not about limits use a roomy table).
    #[must_use]
    pub fn scaled(mut self, factor: u32) -> Self {
        for tier in &mut self.tiers {
            tier.reads_per_minute = tier.reads_per_minute.saturating_mul(factor);
            tier.writes_per_minute = tier.writes_per_minute.saturating_mul(factor);
        }
        for limit in self.tool_reads_per_minute.values_mut() {
            *limit = limit.saturating_mul(factor);
        }
        self.default_tool_reads_per_minute =
            self.default_tool_reads_per_minute.saturating_mul(factor);
        self
    }
}

/// The tier names, lowest first.
pub const TIER_NAMES: [&str; 4] = [
    "anonymous",
    "registered",
    "admission_passed",
    "owner_linked_admitted",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_table_is_the_permissions_documents() {
        let tiers = AccessTiers::default();
        let limits: Vec<(u32, u32)> = tiers
            .tiers
            .iter()
            .map(|tier| (tier.reads_per_minute, tier.writes_per_minute))
            .collect();
        assert_eq!(limits, [(30, 10), (60, 20), (120, 30), (240, 60)]);
        let text = serde_json::to_string(&tiers).unwrap();
        assert_eq!(AccessTiers::from_json(&text).unwrap(), tiers);
    }

    #[test]
    fn a_table_out_of_order_or_with_unknown_keys_is_refused() {
        let mut tiers = AccessTiers::default();
        tiers.tiers.swap(1, 2);
        let text = serde_json::to_string(&tiers).unwrap();
        assert!(matches!(
            AccessTiers::from_json(&text),
            Err(TiersError::Invalid(_))
        ));
        let mut value = serde_json::to_value(AccessTiers::default()).unwrap();
        value["surprise"] = 1.into();
        assert!(matches!(
            AccessTiers::from_json(&value.to_string()),
            Err(TiersError::Json(_))
        ));
    }
}
