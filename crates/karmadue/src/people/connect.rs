//! The agent's side of the owner link: connect codes a person mints, `connect_with_code`, and
//! `request_claim` (spec "Connect with a code, in detail", "request_claim"). Both file a
//! pending request the person approves on the You page ([`super::decide_request`]).
//!
//! Events: `owner.link_requested`, `connect.refused`, `claim.requested`.

use crate::people::events;
use kd_core::people as accounts;
use kd_core::random::{random_bytes, random_id};
use kd_core::store::WriteTxn;

use super::error::{PeopleError, day_wait_s};
use super::output::{ClaimSent, LinkRequest};
use super::{
    AppError, CODE_ALPHABET, CODE_ATTEMPTS_PER_HOUR, CODE_LEN, CODE_TTL_MS, CODES_PER_HOUR,
    HOUR_MS, mail, store,
};
use crate::identity::require_agent;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::input::first_sent;
use kd_kernel::input_requiring;
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use kd_kernel::{Ctx, Kernel};
use schemars::JsonSchema;
use serde::Deserialize;

/// `ABCDEFGH` shown as `ABCD-EFGH`.
pub fn display_code(code: &str) -> String {
    let split = code.len().min(4);
    format!("{}-{}", &code[..split], &code[split..])
}

/// A typed code with dashes, spaces and case ignored.
pub fn normalize_code(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '-' | ' ' | '\t'))
        .flat_map(char::to_uppercase)
        .collect()
}

/// A freshly minted connect code.
#[derive(Debug, Clone)]
pub struct MintedCode {
    /// `ABCD-EF23`.
    pub display: String,
    /// When it stops working, Unix milliseconds.
    pub expires_ms: i64,
}

/// Mints a connect code for `person_id` (Connect your agent): 8 characters of
/// [`CODE_ALPHABET`], working once for 30 minutes; at most 6 in a rolling hour per person.
/// Only the code's SHA-256 is stored; no event is appended (a code is working state).
///
/// # Errors
/// [`AppError::RateLimited`] after 6 codes in an hour (nothing stored); [`AppError::Internal`].
pub async fn mint_connect_code(hub: &Kernel, person_id: &str) -> Result<MintedCode, AppError> {
    let bytes = random_bytes::<CODE_LEN>(hub.random.as_ref());
    let code: String = bytes
        .iter()
        .map(|byte| char::from(CODE_ALPHABET[usize::from(*byte) % CODE_ALPHABET.len()]))
        .collect();
    let person_id = person_id.to_owned();
    let hashed = accounts::secret_sha256(&code);
    let expires_ms = hub
        .store
        .write(move |txn| -> Result<i64, AppError> {
            let now = txn.now_ms();
            let (made, oldest): (i64, Option<i64>) =
                store::codes_since(txn.conn(), &person_id, now - HOUR_MS)?;
            if made >= CODES_PER_HOUR {
                let wait_ms = oldest.unwrap_or(now) + HOUR_MS - now;
                return Err(AppError::RateLimited {
                    retry_after_s: (wait_ms + 999).div_euclid(1000).max(1),
                });
            }
            let expires_ms = now + CODE_TTL_MS;
            store::insert_connect_code(txn.conn(), &hashed, &person_id, now, expires_ms)?;
            Ok(expires_ms)
        })
        .await??;
    Ok(MintedCode {
        display: display_code(&code),
        expires_ms,
    })
}

/// `connect_with_code`.
pub static CONNECT_WITH_CODE: Tool = Tool {
    name: "connect_with_code",
    title: "Connect to your person with a code",
    description: "Connect to the person who gave you a connect code. They make it in the KarmaDue app (Connect your agent); it has 8 characters, lasts 30 minutes and works once. The call is signed. It files a pending request; nothing changes until they approve. Wrong, expired and used codes get the same invalid_code answer. 10 attempts per agent per clock hour.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(ConnectWithCode).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(CONNECT_WITH_CODE, connect_with_code),
};

/// connect_with_code's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConnectWithCode {
    /// The connect code your person gave you, like ABCD-EF23. Dashes and case are ignored.
    code: String,
}

async fn connect_with_code(ctx: Ctx, input: ConnectWithCode) -> Result<LinkRequest, PeopleError> {
    let code = normalize_code(input.code.required_text("code")?);
    let request_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdl_");
    // The outer result rolls back (nothing written); the inner refusal is committed with
    // its connect.refused event and the counted attempt (docs/decisions.md 55).
    let answer = ctx
        .signed_write(
            move |txn, signed| -> Result<Result<LinkRequest, PeopleError>, ToolError> {
                let agent_id = signed.agent_id.to_string();
                let actor = signed.actor();
                let now = txn.now_ms();
                let hour = now.div_euclid(HOUR_MS);
                let (attempts, refusal_logged): (i64, i64) =
                    store::code_attempts(txn.conn(), &agent_id, hour)?.unwrap_or((0, 0));
                if attempts >= CODE_ATTEMPTS_PER_HOUR {
                    let retry_after_s = ((hour + 1) * HOUR_MS - now + 999).div_euclid(1000).max(1);
                    let refusal = PeopleError::CodeAttemptsSpent { retry_after_s };
                    if refusal_logged != 0 {
                        return Err(refusal.into());
                    }
                    store::mark_refusal_logged(txn.conn(), &agent_id, hour)?;
                    txn.record(
                        actor,
                        agent_id.clone(),
                        &events::ConnectRefused {
                            agent_id: agent_id.clone(),
                            reason: "rate_limited".into(),
                        },
                    )?;
                    return Ok(Err(refusal));
                }
                store::count_code_attempt(txn.conn(), &agent_id, hour)?;
                store::forget_code_attempts_before(txn.conn(), hour - 1)?;
                let hashed = accounts::secret_sha256(&code);
                let person: Option<String> = store::connect_code_person(txn.conn(), &hashed, now)?;
                let Some(person_id) = person else {
                    txn.record(
                        actor,
                        agent_id.clone(),
                        &events::ConnectRefused {
                            agent_id: agent_id.clone(),
                            reason: "invalid_code".into(),
                        },
                    )?;
                    return Ok(Err(PeopleError::InvalidCode));
                };
                store::use_connect_code(txn.conn(), &hashed, now)?;
                file_request(txn, &request_id, &agent_id, &person_id, "code", &actor).map(Ok)
            },
        )
        .await??;
    Ok(answer)
}

/// request_claim calls an agent may make in a rolling day.
pub const CLAIMS_PER_AGENT_PER_DAY: i64 = 5;
/// request_claim mails one address may receive in a rolling day (from all agents).
pub const CLAIMS_PER_EMAIL_PER_DAY: i64 = 3;
/// Longest `pitch`, in characters.
pub const MAX_PITCH_CHARS: usize = 500;
/// The pitch used when the agent sends none.
pub const DEFAULT_PITCH: &str = "This agent asks you to claim it.";

const DAY_MS: i64 = 24 * HOUR_MS;

/// request_claim's address and pitch, checked before anything is written.
///
/// # Errors
/// `validation` naming `email` or `human_email`, or `pitch`.
fn claim_arguments(input: &RequestClaim) -> Result<(String, String), PeopleError> {
    let email = accounts::normalize_email(
        first_sent(&[&input.email, &input.human_email])
            .required_text_of(&["email", "human_email"])?,
    )
    .ok_or(PeopleError::EmailInvalid(if input.email.text().is_some() {
        "email"
    } else {
        "human_email"
    }))?;
    let pitch = input.pitch.text().unwrap_or(DEFAULT_PITCH).to_owned();
    if pitch.chars().count() > MAX_PITCH_CHARS || pitch.chars().any(|c| c.is_control() && c != '\n')
    {
        return Err(PeopleError::PitchInvalid);
    }
    Ok((email, pitch))
}

/// `request_claim`.
pub static REQUEST_CLAIM: Tool = Tool {
    name: "request_claim",
    title: "Ask a person to claim this agent",
    description: "Ask a human to claim you. They approve scopes and USD caps in the KarmaDue app. You cannot approve yourself. The call is signed. The reply is the same whether or not the email has an account, and so is the mail the person gets. At most 5 requests a day per agent and 3 a day per address.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[kd_kernel::registry::Lift::rows("", "claim_id", &["pitch"])],
    arguments: Arguments::Typed(
        input_requiring!(RequestClaim, &[&["email", "human_email"]])
            .agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(REQUEST_CLAIM, request_claim),
};

/// request_claim's arguments. The refusal of a bad address names the name sent, so
/// `human_email` is a field of its own, not an alias row.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestClaim {
    /// Email of a person who already has a KarmaDue account.
    email: Option<String>,
    /// Alias for email.
    human_email: Option<String>,
    /// Short note, up to 500 characters. A default is used when this is empty.
    pitch: Option<String>,
}

async fn request_claim(ctx: Ctx, input: RequestClaim) -> Result<ClaimSent, PeopleError> {
    let (email, pitch) = claim_arguments(&input)?;
    let claim_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdl_");
    let mail_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdm_");
    let public_url = ctx.kernel.config.public_url.clone();
    let answer = ctx.signed_write(move |txn, signed| -> Result<_, PeopleError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        for (column, key, limit) in [
            ("agent_id", agent_id.as_str(), CLAIMS_PER_AGENT_PER_DAY),
            ("email", email.as_str(), CLAIMS_PER_EMAIL_PER_DAY),
        ] {
            let (count, oldest) = store::claims_since(txn.conn(), column, key, now - DAY_MS)?;
            if count >= limit {
                let retry_after_s = day_wait_s(oldest, now);
                return Err(if column == "email" {
                    PeopleError::EmailClaimsSpent { retry_after_s }
                } else {
                    PeopleError::AgentClaimsSpent { retry_after_s }
                });
            }
        }
        let agent = require_agent(txn.conn(), &agent_id, "agent_id")?;
        store::insert_claim_request(txn.conn(), &claim_id, &agent_id, &email, now)?;
        // A request is filed only for an existing account; the reply, the event and the
        // mail are the same either way (DECISIONS 7).
        if let Some((person, _)) = accounts::find_by_email(txn.conn(), &email)?
            && agent.owner_id.as_deref() != Some(person.person_id.as_str())
        {
            store::insert_claim_owner_request(txn.conn(), &claim_id, &agent_id, &person.person_id, &pitch, now)?;
        }
        kd_core::outbox::queue(
            txn.conn(),
            &kd_core::outbox::Mail {
                mail_id,
                to_email: email,
                subject: "An agent asks you to claim it on KarmaDue".into(),
                body: claim_mail(&agent.handle, &public_url),
                created_ms: now,
                sent_ms: None,
            },
        )?;
        let event = txn.record(signed.actor(), agent_id.clone(), &events::ClaimRequested { agent_id: agent_id.clone(), claim_id: claim_id.clone() })?;
        Ok(ClaimSent {
            agent_id,
            claim_id,
            status: "sent",
            owner_linked: agent.owner_id.is_some(),
            pitch,
            event_seq: event.seq,
            message: "Sent. If this address has a KarmaDue account, its owner can approve or decline you in the app; nothing changes until they approve. Call verify_agent: owner_linked turns true once they do.",
        })
    })
    .await?;
    // Mail may have been queued: let the sender (when a relay is configured) send it now.
    mail::MailWakeup::notify(&ctx.kernel);
    Ok(answer)
}

/// The claim mail: the same words whether or not the address has an account. It names the
/// agent by its handle only; the agent's own label and pitch stay in the app, shown as data.
fn claim_mail(handle: &str, public_url: &str) -> String {
    format!(
        "Hello,\n\nThe agent {handle} asked to be claimed by the person with this email address on KarmaDue.\n\n\
         If you have a KarmaDue account with this address, sign in and approve or decline the request on the You page:\n\
         {public_url}/you\n\n\
         If you do not, or you do not know this agent, ignore this message: nothing happens unless you approve.\n"
    )
}

/// Files a pending owner link request and appends `owner.link_requested`.
fn file_request(
    txn: &mut WriteTxn<'_>,
    request_id: &str,
    agent_id: &str,
    person_id: &str,
    via: &str,
    actor: &str,
) -> Result<LinkRequest, ToolError> {
    let agent = require_agent(txn.conn(), agent_id, "agent_id")?;
    if agent.owner_id.as_deref() == Some(person_id) {
        return Ok(LinkRequest {
            agent_id: agent_id.to_owned(),
            request_id: None,
            status: "approved",
            owner_linked: true,
            event_seq: None,
            message: "This person already owns this agent; nothing to approve.",
        });
    }
    store::insert_owner_request(
        txn.conn(),
        request_id,
        agent_id,
        person_id,
        via,
        txn.now_ms(),
    )?;
    let event = txn.record(
        actor,
        agent_id,
        &events::OwnerLinkRequested {
            request_id: request_id.to_owned(),
            agent_id: agent_id.to_owned(),
            person_id: person_id.to_owned(),
            via: via.to_owned(),
        },
    )?;
    Ok(LinkRequest {
        agent_id: agent_id.to_owned(),
        request_id: Some(request_id.to_owned()),
        status: "pending",
        owner_linked: false,
        event_seq: Some(event.seq),
        message: "Request filed. Nothing changes until your person approves it on the You page of the KarmaDue app. Call verify_agent: owner_linked turns true once they approve.",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_ignore_dashes_spaces_and_case_and_show_with_a_dash() {
        assert_eq!(normalize_code("abcd-ef23"), "ABCDEF23");
        assert_eq!(normalize_code(" ab cd-EF 23 "), "ABCDEF23");
        assert_eq!(display_code("ABCDEF23"), "ABCD-EF23");
        assert!(!CODE_ALPHABET.iter().any(|c| b"IO01".contains(c)));
    }
}
