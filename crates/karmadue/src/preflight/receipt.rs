//! Receipts (`kd-receipt-v1`): the hub's signed statement that it answered a check about one
//! record at one time ([`Receipt`], [`receipt_text`]).

use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use kd_core::keys::ServerKey;
use serde_json::Value;

use super::error::PreflightError;
use super::output::{ReceiptTarget, ReceiptView};
use super::store;
use super::{RECEIPT_TTL_MS, RECIPE, pinned_commit};
use crate::catalog::model::Resource;
use kd_kernel::error::ToolError;

/// A signed receipt (kd-receipt-v1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// `kdr_` and 24 hex characters.
    pub receipt_id: String,
    /// The record checked.
    pub resource_id: String,
    /// Its version, when it has one.
    pub version: Option<String>,
    /// Its pinned commit, when it has one.
    pub commit: Option<String>,
    /// The signed caller, or None for an anonymous one.
    pub agent_id: Option<String>,
    /// What the caller said it would do.
    pub intended_action: Option<String>,
    /// Unix milliseconds, whole seconds.
    pub issued_ms: i64,
    /// `issued_ms` + 14 days.
    pub expires_ms: i64,
    /// The kd-receipt-v1 text.
    pub signed_text: String,
    /// Ed25519 by kd-passport-1 over `signed_text`, base64url.
    pub signature: String,
}

/// The kd-receipt-v1 text. Null fields print as empty lines.
pub fn receipt_text(
    receipt_id: &str,
    resource_id: &str,
    version: Option<&str>,
    commit: Option<&str>,
    issued_unix: i64,
    agent_id: Option<&str>,
) -> String {
    [
        RECIPE,
        receipt_id,
        resource_id,
        version.unwrap_or(""),
        commit.unwrap_or(""),
        &issued_unix.to_string(),
        agent_id.unwrap_or(""),
    ]
    .join("\n")
}

/// Checks the shape of a receipt id: `kdr_` and 24 lowercase hex characters.
pub fn receipt_id_well_formed(text: &str) -> bool {
    text.strip_prefix("kdr_").is_some_and(|hex| {
        hex.len() == 24
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

impl Receipt {
    /// Makes and signs a receipt for `resource` at `now_ms` (rounded down to whole seconds).
    pub fn issue(
        key: &ServerKey,
        receipt_id: String,
        resource: &Resource,
        agent_id: Option<String>,
        intended_action: Option<String>,
        now_ms: i64,
    ) -> Self {
        let issued_ms = now_ms.div_euclid(1000) * 1000;
        let commit = pinned_commit(resource);
        let signed_text = receipt_text(
            &receipt_id,
            &resource.resource_id,
            resource.version.as_deref(),
            commit.as_deref(),
            issued_ms / 1000,
            agent_id.as_deref(),
        );
        let signature = key.sign_text(&signed_text);
        Self {
            receipt_id,
            resource_id: resource.resource_id.clone(),
            version: resource.version.clone(),
            commit,
            agent_id,
            intended_action,
            issued_ms,
            expires_ms: issued_ms + RECEIPT_TTL_MS,
            signed_text,
            signature,
        }
    }

    /// Stores the receipt (working state). Runs in a write transaction.
    ///
    /// # Errors
    /// `internal` when the store fails.
    pub fn store(&self, conn: &Connection) -> Result<(), PreflightError> {
        store::insert_receipt(conn, self)?;
        Ok(())
    }

    /// Reads a receipt by id.
    ///
    /// # Errors
    /// `internal` when the store fails.
    pub fn load(conn: &Connection, receipt_id: &str) -> Result<Option<Self>, ToolError> {
        Ok(store::receipt(conn, receipt_id)?)
    }

    /// True when the stored text is exactly the text rebuilt from the stored fields and the
    /// signature verifies with `key`.
    pub fn verifies(&self, key: &ServerKey) -> bool {
        let rebuilt = receipt_text(
            &self.receipt_id,
            &self.resource_id,
            self.version.as_deref(),
            self.commit.as_deref(),
            self.issued_ms.div_euclid(1000),
            self.agent_id.as_deref(),
        );
        rebuilt == self.signed_text && key.verify_text(&self.signed_text, &self.signature)
    }

    /// The receipt as shown: `{receipt_id, target {kd_resource_id, version, commit},
    /// issued_at, expires_at, issued_at_unix, agent_id, recipe, signed_text, signature, key_id,
    /// alg}`.
    pub fn to_json(&self, key: &ServerKey) -> Value {
        serde_json::to_value(self.view(key)).unwrap_or_default()
    }

    /// The receipt as answers show it (check_before_acting's `receipt`).
    pub fn view(&self, key: &ServerKey) -> ReceiptView {
        ReceiptView {
            receipt_id: self.receipt_id.clone(),
            target: ReceiptTarget {
                kd_resource_id: self.resource_id.clone(),
                version: self.version.clone(),
                commit: self.commit.clone(),
            },
            intended_action: self.intended_action.clone(),
            issued_at: rfc3339_ms(self.issued_ms),
            issued_at_unix: self.issued_ms.div_euclid(1000),
            expires_at: rfc3339_ms(self.expires_ms),
            agent_id: self.agent_id.clone(),
            recipe: RECIPE,
            signed_text: self.signed_text.clone(),
            signature: self.signature.clone(),
            key_id: key.key_id(),
            alg: "EdDSA",
            reportable: self.agent_id.is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipt_text_is_seven_lines_with_empty_nulls() {
        assert_eq!(
            receipt_text(
                "kdr_000000000000000000000001",
                "kd:res:npm:x",
                Some("1.0.0"),
                None,
                1_791_700_000,
                None
            ),
            "kd-receipt-v1\nkdr_000000000000000000000001\nkd:res:npm:x\n1.0.0\n\n1791700000\n"
        );
        assert!(receipt_id_well_formed("kdr_0123456789abcdef01234567"));
        assert!(!receipt_id_well_formed("kdr_0123456789ABCDEF01234567"));
        assert!(!receipt_id_well_formed("kdr_12"));
    }

    /// Decision 270: one key (kd-passport-1) signs both receipts, so each verifier refuses the
    /// other's validly signed text.
    #[test]
    fn preflight_and_write_receipts_do_not_verify_as_each_other() {
        let key = ServerKey::from_seed("kd-passport-1", [5; 32]);
        let text = receipt_text(
            "kdr_000000000000000000000001",
            "kd:res:npm:x",
            Some("1.0.0"),
            None,
            1_791_700_000,
            Some("kd:agent:x"),
        );
        let preflight = Receipt {
            receipt_id: "kdr_000000000000000000000001".into(),
            resource_id: "kd:res:npm:x".into(),
            version: Some("1.0.0".into()),
            commit: None,
            agent_id: Some("kd:agent:x".into()),
            intended_action: None,
            issued_ms: 1_791_700_000_000,
            expires_ms: 1_791_700_000_000 + RECEIPT_TTL_MS,
            signature: key.sign_text(&text),
            signed_text: text,
        };
        assert!(preflight.verifies(&key));
        let public_key = key.public_key_bytes();
        let verifier = kd_core::tlog::receipt::Verifier {
            key_id: key.key_id(),
            public_key: &public_key,
        };
        let as_log = kd_core::tlog::receipt::verify_text(
            verifier,
            &preflight.signed_text,
            &preflight.signature,
        );
        assert_eq!(as_log, None);

        let hash = "ab".repeat(32);
        let batch = kd_core::tlog::receipt::Batch::new(7, vec![hash], 1_791_700_000_000);
        let write = batch
            .receipt(&key, "hub.example/kd-log", "https://hub.example", 7)
            .unwrap();
        let (text, signature) = (
            write["batch"]["signed_text"].as_str().unwrap(),
            write["batch"]["signature"].as_str().unwrap(),
        );
        assert!(kd_core::tlog::receipt::verify_text(verifier, text, signature).is_some());
        // The write batch's seven lines laid into a pre-flight receipt's fields.
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), 7);
        let forged = Receipt {
            receipt_id: lines[1].into(),
            resource_id: lines[2].into(),
            version: Some(lines[3].into()),
            commit: Some(lines[4].into()),
            agent_id: Some(lines[6].into()),
            signed_text: text.into(),
            signature: signature.into(),
            ..preflight
        };
        assert!(!forged.verifies(&key));
        let rebuilt = receipt_text(
            lines[1],
            lines[2],
            Some(lines[3]),
            Some(lines[4]),
            lines[5].parse::<i64>().unwrap() / 1000,
            Some(lines[6]),
        );
        assert!(!key.verify_text(&rebuilt, signature));
    }
}
