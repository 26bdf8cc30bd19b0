//! `request_visa`: an owner-linked and admitted agent asks the hub for a visa (permissions
//! document: the top tier unlocks "eligibility for destination visas (each destination
//! decides)"; "A valid KarmaDue visa (x-kd-visa) stands in for the stamps on the tools its
//! scopes name"). The format is [`kd_protocol::visa`] (a JWT signed by `kd-passport-1`); the
//! checks of a presented visa are the kernel's (`kd_kernel::visa`). Docs/decisions.md 402–406.
//!
//! The tier table gates the tool to the owner-linked-and-admitted tier, so everyone else gets
//! `stamp_required` with the stamp they lack and nothing is written. A visa lasts `lifetime_s`
//! (default an hour, at most a day): it says the agent held the top tier when it was issued,
//! and stands in for the stamps until it expires, even if a stamp lapses meanwhile. Issuing
//! one records `visa.issued` (its id, scopes and expiry; not the token).

use kd_kernel::Ctx;
use kd_kernel::policy::{Connector, Tier, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use kd_protocol::visa::{self, ALG, Claims, Header, TYP};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{IdentityError, require_agent};
use crate::connector::SCOPES;
use crate::identity::events::VisaIssued;

/// A visa's lifetime when none is asked for, in seconds.
pub const DEFAULT_LIFETIME_S: i64 = 3600;
/// The shortest lifetime, in seconds.
pub const MIN_LIFETIME_S: i64 = 60;
/// The longest lifetime, in seconds (a day).
pub const MAX_LIFETIME_S: i64 = 86_400;
/// The tier a visa is issued at (the only one that may ask).
pub const TIER: &str = "owner_linked_admitted";

/// `request_visa`.
pub static REQUEST_VISA: Tool = Tool {
    name: "request_visa",
    title: "Get a visa for destinations",
    description: "Owner-linked and admitted agents only. Returns a signed, expiring visa (a JWT signed with EdDSA by kd-passport-1; check it with /.well-known/jwks.json) naming this agent and the scopes asked for. Send it as the x-kd-visa header: on this hub it stands in for the stamps on the tools its scopes name, and destinations that accept KarmaDue visas decide what it unlocks there. lifetime_s: 60 to 86400 (default 3600). The call is signed.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(RequestVisa).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never).unlocked_at(Tier::OwnerLinkedAdmitted, 1),
    handler: kd_kernel::typed!(REQUEST_VISA, request_visa),
};

/// request_visa's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestVisa {
    /// The scopes the visa names (1 to 5 of kd.discovery.read, kd.evidence.read,
    /// kd.outcomes.write, kd.listings.write, kd.proposals.write).
    scopes: Vec<String>,
    /// How long it lasts, in seconds: 60 to 86400 (default 3600).
    #[serde(default)]
    lifetime_s: Option<i64>,
    /// The destination it is for (its URL or name), written into the visa as `aud`.
    #[serde(default)]
    audience: Option<String>,
}

/// request_visa's `data`.
#[derive(Debug, Serialize)]
pub struct Visa {
    /// The visa: send it as the `x-kd-visa` header.
    pub visa: String,
    /// Its id (`kdv_…`, the `jti` claim).
    pub visa_id: String,
    /// The agent it names.
    pub agent_id: String,
    /// The scopes it names.
    pub scopes: Vec<String>,
    /// When it was issued, RFC 3339 (ms).
    pub issued_at: String,
    /// When it expires, RFC 3339 (ms).
    pub expires_at: String,
    /// The header to send it in (`x-kd-visa`).
    pub header: &'static str,
    /// The key that signed it (`kd-passport-1`), `alg` EdDSA.
    pub key_id: &'static str,
    /// Where the key is published.
    pub jwks: &'static str,
    /// The `visa.issued` event's sequence number.
    pub event_seq: i64,
}

kd_kernel::output!(Visa);

/// The scopes asked for, in the consent screen's order.
fn checked_scopes(asked: &[String]) -> Result<Vec<&'static str>, IdentityError> {
    let known: Vec<&'static str> = SCOPES
        .iter()
        .copied()
        .filter(|scope| asked.iter().any(|asked| asked == scope))
        .collect();
    if asked.is_empty() || known.len() != asked.len() {
        return Err(IdentityError::VisaScopes(SCOPES.join(", ")));
    }
    Ok(known)
}

fn checked_audience(audience: Option<String>) -> Result<Option<String>, IdentityError> {
    match audience {
        Some(text)
            if text.is_empty()
                || text.chars().count() > 200
                || text.chars().any(|c| c.is_control() || c.is_whitespace()) =>
        {
            Err(IdentityError::VisaAudience)
        }
        audience => Ok(audience),
    }
}

/// `request_visa`: checks the arguments, then signs and records the visa in the signed write.
///
/// # Errors
/// `validation` for `scopes`, `lifetime_s` or `audience`; the kernel's refusals (the tier gate
/// answers `stamp_required` before this runs); `internal`.
async fn request_visa(ctx: Ctx, input: RequestVisa) -> Result<Visa, IdentityError> {
    let scopes = checked_scopes(&input.scopes)?;
    let lifetime_s = input.lifetime_s.unwrap_or(DEFAULT_LIFETIME_S);
    if !(MIN_LIFETIME_S..=MAX_LIFETIME_S).contains(&lifetime_s) {
        return Err(IdentityError::VisaLifetime);
    }
    let audience = checked_audience(input.audience)?;
    let visa_id = kd_core::random::random_id::<12>(ctx.kernel.random.as_ref(), "kdv_");
    let key = ctx.kernel.passport_key.clone();
    let issuer = ctx
        .kernel
        .config
        .public_url
        .trim_end_matches('/')
        .to_owned();
    ctx.signed_write(move |txn, signed| -> Result<_, IdentityError> {
        let id = signed.agent_id.to_string();
        let agent = require_agent(txn.conn(), &id, "agent_id")?;
        let iat = txn.now_ms().div_euclid(1000);
        let exp = iat + lifetime_s;
        let claims = Claims {
            iss: issuer,
            sub: id.clone(),
            handle: agent.handle,
            credential_id: agent.credential_id,
            scope: scopes.join(" "),
            tier: TIER.into(),
            iat,
            nbf: iat,
            exp,
            jti: visa_id.clone(),
            aud: audience,
        };
        let header = Header {
            alg: ALG.into(),
            kid: key.key_id().into(),
            typ: TYP.into(),
        };
        let input = visa::signing_input(&header, &claims);
        let compact = format!("{input}.{}", key.sign_text(&input));
        let event = txn.record(
            signed.actor(),
            id.clone(),
            &VisaIssued {
                visa_id: visa_id.clone(),
                scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
                issued_at: iat,
                expires_at: exp,
                audience: claims.aud.clone(),
            },
        )?;
        Ok(Visa {
            visa: compact,
            visa_id,
            agent_id: id,
            scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
            issued_at: kd_core::clock::rfc3339_ms(iat * 1000),
            expires_at: kd_core::clock::rfc3339_ms(exp * 1000),
            header: visa::HEADER,
            key_id: key.key_id(),
            jwks: "/.well-known/jwks.json",
            event_seq: event.seq,
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_known_different_and_put_in_order() {
        let asked = |names: &[&str]| {
            names
                .iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            checked_scopes(&asked(&["kd.listings.write", "kd.outcomes.write"])).unwrap(),
            vec!["kd.outcomes.write", "kd.listings.write"]
        );
        assert!(checked_scopes(&asked(&[])).is_err());
        assert!(checked_scopes(&asked(&["kd.listings.write", "kd.listings.write"])).is_err());
        assert!(checked_scopes(&asked(&["kd.self_keyed"])).is_err());
        assert!(checked_audience(Some("https://dest.example".into())).is_ok());
        assert!(checked_audience(Some("a b".into())).is_err());
        assert!(checked_audience(Some(String::new())).is_err());
    }
}
