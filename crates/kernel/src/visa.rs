//! The visa check of a tool call (permissions document: "A valid KarmaDue visa (x-kd-visa)
//! stands in for the stamps on the tools its scopes name"; docs/decisions.md 402–406). The
//! format is [`kd_protocol::visa`]; this holds the rules, checked after the caller is proven
//! and before the tier gate, so a refusal records nothing:
//!
//! 1. the text is a visa: three parts, `alg` EdDSA, `typ` kd-visa+jwt, `kid` the hub's passport
//!    key, a signature that verifies with it, `iss` this hub, and `nbf` not in the future
//!    (else `visa_invalid`);
//! 2. `exp` is in the future (else `visa_expired`);
//! 3. `sub` is the agent that signed the request (else `visa_mismatch`);
//! 4. when the tool has a scope ([`crate::policy::Connector::Scope`]), the visa names it
//!    (else `visa_scope`); the visa then stands in for the stamps of the tool's tier.
//!
//! A tool with no scope (reads, keys) is called as if the visa were not there, once it passed
//! 1–3.

use kd_protocol::visa::{self, ALG, TYP};

use crate::error::{ErrorCode, ToolError};
use crate::pipeline::Kernel;
use crate::registry::Tool;
use crate::tiers::Subject;

impl Kernel {
    /// Checks the `x-kd-visa` of a call to `tool` by `subject` at the kernel's clock. Answers
    /// whether it stands in for the tool's stamps (the tool has a scope the visa names).
    ///
    /// # Errors
    /// `visa_invalid`, `visa_expired`, `visa_mismatch` or `visa_scope`, each with `field`
    /// `x-kd-visa`.
    pub fn check_visa(
        &self,
        compact: &str,
        tool: &Tool,
        subject: &Subject,
    ) -> Result<bool, ToolError> {
        let refuse = |code: ErrorCode, message: String| {
            Err(ToolError::new(code, message).with("field", visa::HEADER))
        };
        let parsed = match visa::parse(compact.trim()) {
            Ok(parsed) => parsed,
            Err(error) => {
                return refuse(
                    ErrorCode::VisaInvalid,
                    format!("{error}. Nothing was recorded."),
                );
            }
        };
        let (header, claims) = (&parsed.header, &parsed.claims);
        let issuer = self.config.public_url.trim_end_matches('/');
        let now_s = self.clock.now_ms().div_euclid(1000);
        if header.alg != ALG || header.typ != TYP || header.kid != self.passport_key.key_id() {
            return refuse(
                ErrorCode::VisaInvalid,
                format!(
                    "A visa of this hub has alg {ALG}, typ {TYP} and kid {}. Nothing was recorded.",
                    self.passport_key.key_id()
                ),
            );
        }
        if !self
            .passport_key
            .verify_text(&parsed.signing_input, &parsed.signature)
        {
            return refuse(
                ErrorCode::VisaInvalid,
                "The visa's signature does not verify with this hub's key. Nothing was recorded."
                    .into(),
            );
        }
        if claims.iss != issuer || claims.nbf > now_s {
            return refuse(
                ErrorCode::VisaInvalid,
                format!("The visa was not issued by {issuer} for use now. Nothing was recorded."),
            );
        }
        if claims.exp <= now_s {
            return refuse(
                ErrorCode::VisaExpired,
                "The visa has expired. Ask for a new one with request_visa; nothing was recorded."
                    .into(),
            );
        }
        if !matches!(subject, Subject::Agent { agent_id, .. } if *agent_id == claims.sub) {
            return refuse(
                ErrorCode::VisaMismatch,
                format!(
                    "The visa names agent {}; only that agent's signed request may present it. Nothing was recorded.",
                    claims.sub
                ),
            );
        }
        let Some(scope) = tool.policy.connector.scope() else {
            return Ok(false);
        };
        if !claims.names(scope) {
            return Err(ToolError::new(
                ErrorCode::VisaScope,
                format!(
                    "{} needs a visa naming {scope}; this one names {}. Nothing was recorded.",
                    tool.name, claims.scope
                ),
            )
            .with("field", visa::HEADER)
            .with("required_scope", scope));
        }
        Ok(true)
    }
}
