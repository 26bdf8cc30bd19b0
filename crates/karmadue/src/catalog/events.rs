//! The catalog and its records: resources, content reports, outcome reports.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::model::{Claim, Resource};
use crate::events::declare;

/// `resource.imported`: the hub stored a catalog resource, from a source row of a bundled or
/// given file, or from the demo fixtures.
///
/// Read through a `Value` (`try_from`): serde's untagged enums lose `arbitrary_precision`
/// numbers (a fixture's `popularity` would not read back as `f64`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "Value")]
#[expect(
    clippy::large_enum_variant,
    reason = "a payload read once per row of a replay; boxing would change nothing a caller sees"
)]
pub enum ResourceImported {
    /// A source row: `catalog::import::parse_row(row, observed_ms)` makes the resource.
    Row {
        /// The file's name.
        file: String,
        /// When it was read, Unix ms.
        observed_ms: i64,
        /// The source row as read.
        row: Value,
    },
    /// A demo fixture, stored as is.
    Fixture {
        /// Always `demo fixtures`.
        file: String,
        /// The resource.
        resource: Resource,
        /// Its claims.
        claims: Vec<Claim>,
    },
}
declare!(ResourceImported, "resource.imported");

impl TryFrom<Value> for ResourceImported {
    type Error = serde_json::Error;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Row {
            file: String,
            observed_ms: i64,
            row: Value,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fixture {
            file: String,
            resource: Resource,
            claims: Vec<Claim>,
        }
        if value.get("row").is_some() {
            let Row {
                file,
                observed_ms,
                row,
            } = serde_json::from_value(value)?;
            Ok(Self::Row {
                file,
                observed_ms,
                row,
            })
        } else {
            let Fixture {
                file,
                resource,
                claims,
            } = serde_json::from_value(value)?;
            Ok(Self::Fixture {
                file,
                resource,
                claims,
            })
        }
    }
}

/// `resource.registered`: an agent registered a resource (its maker claim waits for an
/// ownership check).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceRegistered {
    /// The locator as the agent gave it (before normalising).
    pub locator_given: String,
    /// The resource as stored.
    pub resource: Resource,
    /// Its claims as stored.
    pub claims: Vec<Claim>,
}
declare!(ResourceRegistered, "resource.registered");

/// `content.reported`: someone reported a resource for a reviewer to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentReported {
    /// The `kdr_` report id.
    pub report_id: String,
    /// The resource.
    pub resource_id: String,
    /// The reason code.
    pub reason: String,
    /// The reporter's words, if any.
    pub details: Option<String>,
    /// The reporting agent (None: anonymous).
    pub reporter: Option<String>,
}
declare!(ContentReported, "content.reported");

/// `outcome.reported`: an agent reported the outcome of using a checked resource; the record
/// is signed by the hub (`canonical_text`, `signature`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeReported {
    /// Always `outcome-report@1`.
    pub kind: String,
    /// The `kdo_` report id.
    pub report_id: String,
    /// The receipt it reports on.
    pub receipt_id: String,
    /// The resource.
    pub resource_id: String,
    /// The version used.
    pub version_used: Option<String>,
    /// worked | failed | partial | ...
    pub result: String,
    /// Why, as a code.
    pub reason_code: Option<String>,
    /// The agent's note.
    pub note: Option<String>,
    /// SHA-256 of the note.
    pub note_sha256: String,
    /// The reporting agent.
    pub agent_id: String,
    /// The owner key its weight was counted under.
    pub owner_key: String,
    /// The signed record text.
    pub canonical_text: String,
    /// SHA-256 of `canonical_text`.
    pub record_hash: String,
    /// kd-passport-1's signature over `canonical_text`.
    pub signature: String,
    /// The signing key's id.
    pub key_id: String,
    /// The report's weight, 0..1.
    pub weight: f64,
    /// The codes that lowered the weight.
    pub flags: Vec<String>,
    /// `[{code, effect, message}]`, one per flag.
    pub reasons: Vec<Value>,
}
declare!(OutcomeReported, "outcome.reported");
