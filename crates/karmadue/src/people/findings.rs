//! Findings agents file for people (spec `notify_human_of_finding`, `withdraw_finding`,
//! `adopt_finding`, "Findings"): a finding goes to the owner's Inbox (a claimed agent), to an
//! address (by mail, the same whether or not it has an account), or stays open with a claim
//! code a person adopts at `/findings/adopt?code=…`. The person approves or dismisses it in
//! their Inbox.
//!
//! Events: `finding.filed`, `finding.adopted`, `finding.approved`, `finding.dismissed`,
//! `finding.withdrawn`. They never carry the claim code, an address, or the finding's text.

use crate::people::events;
use kd_core::people as accounts;
use kd_core::random::{random_bytes, random_id};

use super::bounded_text;
use super::error::{PeopleError, day_wait_s};
use super::output::{
    Adopted, Filing as FilingOutput, FindingDeduplicated, FindingFiled, Withdrawn,
};
use super::store;
use super::{CODE_ALPHABET, normalize_code};
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::input::{first_sent, sent_name};
use kd_kernel::input_requiring;
use kd_kernel::policy::{Connector, Tier, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use kd_kernel::{Caller, Ctx, Kernel};

pub use super::inbox::{InboxItem, decide, inbox};
use schemars::JsonSchema;
use serde::Deserialize;

/// Findings one agent may file in a rolling 24 hours (deduplicated ones do not count).
pub const FINDINGS_PER_AGENT_PER_DAY: i64 = 20;
/// Characters in a claim code.
pub const CLAIM_CODE_LEN: usize = 10;
/// Longest `title`, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest `why`, in characters.
pub const MAX_WHY_CHARS: usize = 2000;
/// Longest `evidence_ref` and `dedupe_key`, in characters.
pub const MAX_REF_CHARS: usize = 500;
/// The `kind` values.
pub const KINDS: [&str; 6] = [
    "job",
    "skill",
    "experience",
    "resource",
    "contributor",
    "verification",
];
/// Path of the adopt page; `claim_url` is the public URL, this path and `?code=`.
pub const ADOPT_PATH: &str = "/findings/adopt";

const DAY_MS: i64 = 24 * 3_600_000;

/// `notify_human_of_finding`.
pub static NOTIFY_HUMAN_OF_FINDING: Tool = Tool {
    name: "notify_human_of_finding",
    title: "File a finding for a person",
    description: "File a finding. why and evidence_ref (a link or id) are required; evidence_link and evidence are accepted aliases. email is optional. With no email, the finding stays open and the response includes a claim code a human can adopt. Claimed agents notify their owner. The daily cap (20 a day per agent) and dedupe still apply.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "finding_id", &["title", "why"])],
    arguments: Arguments::Typed(
        input_requiring!(
            NotifyHumanOfFinding,
            &[
                &["title"],
                &["why", "reason"],
                &["evidence_ref", "evidence", "evidence_link"],
            ]
        )
        .agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::EveryConnection).unlocked_at(Tier::Registered, 2),
    handler: kd_kernel::typed!(NOTIFY_HUMAN_OF_FINDING, notify_human_of_finding),
};

/// notify_human_of_finding's arguments. Refusals name the name sent, so each other name is a
/// field of its own, not an alias row.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NotifyHumanOfFinding {
    /// Optional. Email of the human who should see this. Omit it to file an open finding.
    email: Option<String>,
    /// Alias for email.
    human_email: Option<String>,
    /// Optional human id, when you already know it (your owner's).
    principal_id: Option<String>,
    /// Alias for principal_id.
    human_id: Option<String>,
    /// job, skill, experience, resource, contributor, or verification.
    #[schemars(extend("enum" = KINDS))]
    kind: Option<String>,
    /// What you found.
    title: String,
    /// Why it matches the human. reason is an alias.
    why: Option<String>,
    /// Alias for why.
    reason: Option<String>,
    /// Evidence link or id. evidence and evidence_link are aliases.
    evidence_ref: Option<String>,
    /// Alias for evidence_ref.
    evidence: Option<String>,
    /// Alias for evidence_ref.
    evidence_link: Option<String>,
    /// Optional stable key so the same finding is not sent twice.
    dedupe_key: Option<String>,
}

/// `withdraw_finding`.
pub static WITHDRAW_FINDING: Tool = Tool {
    name: "withdraw_finding",
    title: "Withdraw one of your findings",
    description: "Withdraw one of your own open findings, for example a test or a mistake. The call is signed. The claim code stops working and nobody is asked to approve it. Appends finding.withdrawn to your history. Only open findings you filed can be withdrawn; anything else returns not_found.",
    access: Access::Signed,
    hints: Hints::DESTRUCTIVE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(WithdrawFinding).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::EveryConnection),
    handler: kd_kernel::typed!(WITHDRAW_FINDING, withdraw_finding),
};

/// withdraw_finding's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WithdrawFinding {
    /// The finding_id that notify_human_of_finding returned.
    finding_id: String,
    /// Optional short reason, up to 200 characters.
    reason: Option<String>,
}

/// `adopt_finding`.
pub static ADOPT_FINDING: Tool = Tool {
    name: "adopt_finding",
    title: "Adopt a finding by its claim code",
    description: "A signed-in human adopts an open finding by its claim code. The finding then appears in that person's inbox. Send the session as Authorization: Bearer <session token>. Wrong, withdrawn and already adopted codes return invalid_code.",
    access: Access::Person,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input!(AdoptFinding)),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(ADOPT_FINDING, adopt_finding),
};

/// adopt_finding's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AdoptFinding {
    /// Code returned by notify_human_of_finding when no email was given.
    claim_code: String,
}

/// Like [`bounded_text`], required: "why or reason is required" naming `names[0]` when absent
/// or empty.
fn bounded(
    names: &'static [&'static str],
    values: &[&Option<String>],
    max: usize,
) -> Result<String, PeopleError> {
    bounded_text(names, values, max)?.ok_or_else(|| PeopleError::Required {
        field: names[0],
        names: names.join(" or "),
    })
}

fn claim_url(public_url: &str, code: &str) -> String {
    format!("{public_url}{ADOPT_PATH}?code={code}")
}

/// notify_human_of_finding's arguments, checked in the order they always were: title, why,
/// evidence_ref, dedupe_key, email.
struct Filing {
    title: String,
    why: String,
    evidence_ref: String,
    dedupe_key: Option<String>,
    kind: Option<String>,
    email: Option<String>,
    principal: Option<String>,
    /// The name the principal came by (`principal_id` or `human_id`), for its refusal.
    principal_field: &'static str,
}

impl Filing {
    fn check(input: NotifyHumanOfFinding) -> Result<Self, PeopleError> {
        let title = bounded(&["title"], &[&Some(input.title)], MAX_TITLE_CHARS)?;
        let why = bounded(
            &["why", "reason"],
            &[&input.why, &input.reason],
            MAX_WHY_CHARS,
        )?;
        let evidence_ref = bounded(
            &["evidence_ref", "evidence", "evidence_link"],
            &[&input.evidence_ref, &input.evidence, &input.evidence_link],
            MAX_REF_CHARS,
        )?;
        let dedupe_key = match input.dedupe_key.text() {
            Some(key) if key.chars().count() > MAX_REF_CHARS => {
                return Err(PeopleError::TooLong {
                    field: "dedupe_key",
                    max: MAX_REF_CHARS,
                });
            }
            key => key.map(str::to_owned),
        };
        let email = match first_sent(&[&input.email, &input.human_email]).text() {
            Some(text) => Some(accounts::normalize_email(text).ok_or_else(|| {
                PeopleError::EmailInvalid(sent_name(
                    &["email", "human_email"],
                    &[&input.email, &input.human_email],
                ))
            })?),
            None => None,
        };
        let principal = first_sent(&[&input.principal_id, &input.human_id])
            .text()
            .map(str::to_owned);
        let principal_field = if input.principal_id.text().is_some() {
            "principal_id"
        } else {
            "human_id"
        };
        Ok(Self {
            title,
            why,
            evidence_ref,
            dedupe_key,
            kind: input.kind,
            email,
            principal,
            principal_field,
        })
    }

    /// The reply: the finding as filed, and for an open finding its claim code and link.
    fn answer(
        self,
        finding_id: String,
        delivery: &'static str,
        status: &'static str,
        seq: i64,
        claim: &Claim,
    ) -> FindingFiled {
        let open = delivery == "open";
        FindingFiled {
            finding_id,
            deduplicated: false,
            delivery,
            status: if delivery == "email" { "sent" } else { status },
            kind: self.kind,
            title: self.title,
            why: self.why,
            evidence_ref: self.evidence_ref,
            dedupe_key: self.dedupe_key,
            event_seq: seq,
            claim_code: open.then(|| claim.code.clone()),
            claim_url: open.then(|| claim.url()),
            message: match delivery {
                "open" => {
                    "Open finding: give claim_url to a person. They sign in and adopt it; it then appears in their Inbox."
                }
                "owner" => "Sent to your owner's Inbox for them to approve or dismiss.",
                _ => "Sent. The person reads it in the KarmaDue app.",
            },
        }
    }
}

/// A finding's claim code and the hub it is adopted on.
struct Claim {
    code: String,
    public_url: String,
}

impl Claim {
    fn url(&self) -> String {
        claim_url(&self.public_url, &self.code)
    }
}

/// The reply to a finding filed again under a `dedupe_key` already on file, if there is one.
fn already_filed(
    conn: &kd_core::db::Connection,
    agent_id: &str,
    key: &str,
) -> Result<Option<FindingDeduplicated>, PeopleError> {
    let existing: Option<(String, String, String)> =
        store::finding_by_dedupe_key(conn, agent_id, key)?;
    Ok(
        existing.map(|(finding_id, status, delivery)| FindingDeduplicated {
            finding_id,
            deduplicated: true,
            delivery,
            status,
            dedupe_key: key.to_owned(),
            message: "A finding with this dedupe_key is already filed; nothing new was sent.",
        }),
    )
}

/// Queues the finding's mail to `address`: the same words whether or not the address has an
/// account (DECISIONS 7), naming the agent by its handle and giving the claim link.
fn queue_finding_mail(
    conn: &kd_core::db::Connection,
    mail_id: String,
    address: &str,
    agent_id: &str,
    claim: &Claim,
    now: i64,
) -> Result<(), PeopleError> {
    let handle: String = crate::identity::store::handle_and_credential(conn, agent_id)?.0;
    kd_core::outbox::queue(
        conn,
        &kd_core::outbox::Mail {
            mail_id,
            to_email: address.to_owned(),
            subject: "An agent found something for you on KarmaDue".into(),
            body: format!(
                "Hello,\n\nThe agent {handle} filed a finding for the person with this email address on KarmaDue.\n\n\
                 To read it, open this link, sign in (or create an account) and adopt it:\n{}\n\n\
                 If you do not know this agent, ignore this message.\n",
                claim.url()
            ),
            created_ms: now,
            sent_ms: None,
        },
    )?;
    Ok(())
}

/// Where a finding goes, after the daily cap and the principal check: an address; else the
/// owner; else it stays open with a claim code. `(delivery, status, person, claimable)`.
///
/// # Errors
/// [`PeopleError::FindingsSpent`], [`PeopleError::NotYourOwner`]; `internal`.
fn route(
    conn: &kd_core::db::Connection,
    filing: &Filing,
    agent_id: &str,
    now: i64,
) -> Result<(&'static str, &'static str, Option<String>, bool), PeopleError> {
    let (count, oldest): (i64, Option<i64>) = store::findings_since(conn, agent_id, now - DAY_MS)?;
    if count >= FINDINGS_PER_AGENT_PER_DAY {
        return Err(PeopleError::FindingsSpent {
            retry_after_s: day_wait_s(oldest, now),
        });
    }
    let owner: Option<String> = crate::identity::store::owner_of(conn, agent_id)?;
    if let Some(principal) = &filing.principal
        && owner.as_deref() != Some(principal.as_str())
    {
        return Err(PeopleError::NotYourOwner(filing.principal_field));
    }
    let claimed_by_email = filing
        .email
        .as_deref()
        .map(|address| accounts::find_by_email(conn, address))
        .transpose()?
        .flatten()
        .map(|(person, _)| person.person_id);
    Ok(match (&filing.email, owner) {
        (Some(_), _) => {
            let status = if claimed_by_email.is_some() {
                "inbox"
            } else {
                "open"
            };
            ("email", status, claimed_by_email, true)
        }
        (None, Some(owner)) => ("owner", "inbox", Some(owner), false),
        (None, None) => ("open", "open", None, true),
    })
}

/// The recipient field a filing names, for a refusal: `email`, `human_email`, `principal_id`
/// or `human_id` (the first one sent).
fn first_sent_name(input: &NotifyHumanOfFinding) -> &'static str {
    [
        ("email", &input.email),
        ("human_email", &input.human_email),
        ("principal_id", &input.principal_id),
        ("human_id", &input.human_id),
    ]
    .into_iter()
    .find(|(_, value)| value.as_ref().is_some_and(|text| !text.trim().is_empty()))
    .map_or("email", |(name, _)| name)
}

async fn notify_human_of_finding(
    ctx: Ctx,
    input: NotifyHumanOfFinding,
) -> Result<FilingOutput, PeopleError> {
    let sent_to = first_sent_name(&input);
    let filing = Filing::check(input)?;
    // A connected app brings finds to its own person only (the consent screen's words):
    // never to an address or another person it names (docs/decisions.md 329).
    if let Caller::Agent(signed) = &ctx.caller
        && matches!(signed.proof, kd_kernel::Proof::Connector { .. })
        && (filing.email.is_some() || filing.principal.is_some())
    {
        return Err(PeopleError::ConnectorOwnInbox(sent_to));
    }
    let finding_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdf_");
    let mail_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdm_");
    let claim = Claim {
        code: random_bytes::<CLAIM_CODE_LEN>(ctx.kernel.random.as_ref())
            .iter()
            .map(|byte| char::from(CODE_ALPHABET[usize::from(*byte) % CODE_ALPHABET.len()]))
            .collect(),
        public_url: ctx.kernel.config.public_url.clone(),
    };
    let answer = ctx
        .signed_write(move |txn, signed| -> Result<_, PeopleError> {
            let agent_id = signed.agent_id.to_string();
            let now = txn.now_ms();
            if let Some(key) = &filing.dedupe_key
                && let Some(answer) = already_filed(txn.conn(), &agent_id, key)?
            {
                return Ok(FilingOutput::Deduplicated(answer));
            }
            let (delivery, status, person_id, claimable) =
                route(txn.conn(), &filing, &agent_id, now)?;
            let claim_sha256 = claimable.then(|| accounts::secret_sha256(&claim.code));
            store::insert_finding(
                txn.conn(),
                &store::NewFinding {
                    finding_id: &finding_id,
                    agent_id: &agent_id,
                    kind: filing.kind.as_deref(),
                    title: &filing.title,
                    why: &filing.why,
                    evidence_ref: &filing.evidence_ref,
                    dedupe_key: filing.dedupe_key.as_deref(),
                    delivery,
                    status,
                    person_id: person_id.as_deref(),
                    claim_sha256: claim_sha256.as_deref(),
                    now,
                },
            )?;
            if let Some(address) = &filing.email {
                queue_finding_mail(txn.conn(), mail_id, address, &agent_id, &claim, now)?;
            }
            let event = txn.record(
                signed.actor(),
                agent_id.clone(),
                &events::FindingFiled {
                    finding_id: finding_id.clone(),
                    agent_id: agent_id.clone(),
                    kind: filing.kind.clone(),
                    delivery: delivery.to_owned(),
                },
            )?;
            Ok(FilingOutput::Filed(
                filing.answer(finding_id, delivery, status, event.seq, &claim),
            ))
        })
        .await?;
    // Mail may have been queued: let the sender (when a relay is configured) send it now.
    crate::people::mail::MailWakeup::notify(&ctx.kernel);
    Ok(answer)
}

async fn withdraw_finding(ctx: Ctx, input: WithdrawFinding) -> Result<Withdrawn, PeopleError> {
    let finding_id = input.finding_id.required_text("finding_id")?.to_owned();
    let reason = input.reason.text().map(str::to_owned);
    if reason
        .as_deref()
        .is_some_and(|text| text.chars().count() > 200)
    {
        return Err(PeopleError::TooLong {
            field: "reason",
            max: 200,
        });
    }
    ctx.signed_write(move |txn, signed| -> Result<_, PeopleError> {
        let agent_id = signed.agent_id.to_string();
        // "Open" is every finding nobody has decided on yet: unclaimed, or waiting in an Inbox.
        let changed = store::withdraw_finding(txn.conn(), &finding_id, &agent_id, txn.now_ms())?;
        if changed == 0 {
            return Err(PeopleError::NoOpenFinding);
        }
        let finding = events::FindingRef {
            finding_id: finding_id.clone(),
            agent_id: agent_id.clone(),
        };
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::FindingWithdrawn(finding),
        )?;
        Ok(Withdrawn {
            finding_id,
            status: "withdrawn",
            reason,
            event_seq: event.seq,
        })
    })
    .await
}

/// A signed-in person adopts the open finding of `code` (dashes and case ignored): it moves to
/// their Inbox (`finding.adopted`). Adopting a finding already in their own Inbox answers the
/// same and appends nothing.
///
/// # Errors
/// [`PeopleError::InvalidClaimCode`] (`invalid_code`) for a wrong, withdrawn or someone
/// else's code; `internal`.
pub async fn adopt(hub: &Kernel, person_id: &str, code: &str) -> Result<Adopted, PeopleError> {
    let hashed = accounts::secret_sha256(&normalize_code(code));
    let person_id = person_id.to_owned();
    let adopted = |finding_id, event_seq| Adopted {
        finding_id,
        status: "inbox",
        inbox: "/inbox",
        event_seq,
    };
    hub.store
        .write(move |txn| -> Result<Adopted, PeopleError> {
            let row: Option<(String, String, String, Option<String>)> =
                store::finding_by_claim(txn.conn(), &hashed)?;
            let Some((finding_id, agent_id, status, holder)) = row else {
                return Err(PeopleError::InvalidClaimCode);
            };
            match (status.as_str(), holder.as_deref()) {
                ("inbox", Some(holder)) if holder == person_id => {
                    return Ok(adopted(finding_id, None));
                }
                ("open", _) => {}
                _ => return Err(PeopleError::InvalidClaimCode),
            }
            store::adopt_finding(txn.conn(), &finding_id, &person_id)?;
            let event = txn.record(
                format!("person:{person_id}"),
                agent_id.clone(),
                &events::FindingAdopted {
                    finding_id: finding_id.clone(),
                    agent_id: agent_id.clone(),
                    person_id: person_id.clone(),
                },
            )?;
            Ok(adopted(finding_id, Some(event.seq)))
        })
        .await?
}

async fn adopt_finding(ctx: Ctx, input: AdoptFinding) -> Result<Adopted, PeopleError> {
    let Caller::Person { person_id, .. } = &ctx.caller else {
        return Err(ToolError::internal("adopt_finding without a signed-in person").into());
    };
    adopt(
        &ctx.kernel,
        person_id,
        input.claim_code.required_text("claim_code")?,
    )
    .await
}
