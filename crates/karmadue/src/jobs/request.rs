//! `request_verification`, `get_job` and `cancel_job`: a requester's side of a job.

use kd_core::db::Connection;
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use kd_kernel::Ctx;
use kd_kernel::caller::{Caller, Proof, SignedRequest};
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use sha2::{Digest, Sha256};

use super::output::{JobCancelledView, JobRead, JobView, Quote, Requested};
use super::store::{self, Job};
use super::{
    DAY_MS, JobRef, JobsError, MAX_DETAIL_CHARS, MAX_OPEN_JOBS, MAX_TITLE_CHARS,
    RequestVerification, events, price,
};

/// SHA-256 of `text`, lowercase hex.
pub(crate) fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A text argument of at most `max` characters, trimmed; `None` when absent or empty.
///
/// # Errors
/// `validation` naming `field` when longer.
pub(crate) fn bounded(
    value: &Option<String>,
    field: &'static str,
    max: usize,
) -> Result<Option<String>, JobsError> {
    let Some(text) = value.text() else {
        return Ok(None);
    };
    if text.chars().count() > max {
        return Err(JobsError::TooLong { field, max });
    }
    Ok(Some(text.to_owned()))
}

/// request_verification's arguments, checked before anything is read.
struct Ask {
    resource_id: Option<String>,
    title: Option<String>,
    detail: Option<String>,
    method: &'static str,
    scope: &'static str,
    cents: i64,
    commit: bool,
}

/// Checks request_verification's arguments.
///
/// # Errors
/// `validation` naming the argument.
fn ask(input: &RequestVerification) -> Result<Ask, JobsError> {
    let method = match input.method.text() {
        None => price::DEFAULT_METHOD,
        Some(sent) => price::METHOD_IDS
            .into_iter()
            .find(|id| *id == sent)
            .ok_or(JobsError::MethodChoice)?,
    };
    let scope = match input.scope.text() {
        None => price::DEFAULT_SCOPE,
        Some(sent) => price::SCOPES
            .into_iter()
            .find(|id| *id == sent)
            .ok_or(JobsError::ScopeChoice)?,
    };
    let title = bounded(&input.title, "title", MAX_TITLE_CHARS)?;
    if title
        .as_deref()
        .is_some_and(|title| !crate::identity::names::one_plain_line(title))
    {
        return Err(JobsError::TooLong {
            field: "title",
            max: MAX_TITLE_CHARS,
        });
    }
    let detail = bounded(&input.detail, "detail", MAX_DETAIL_CHARS)?;
    let resource_id = input.resource_id.text().map(str::to_owned);
    let commit = input.commit.unwrap_or(false);
    if commit && resource_id.is_none() && title.is_none() {
        return Err(JobsError::NothingToCheck);
    }
    let cents = price::cents(method, scope).ok_or(JobsError::MethodChoice)?;
    Ok(Ask {
        resource_id,
        title,
        detail,
        method,
        scope,
        cents,
        commit,
    })
}

/// The signed caller of a jobs tool.
///
/// # Errors
/// `internal` when the pipeline let an unsigned caller through.
pub(crate) fn signer(ctx: &Ctx) -> Result<SignedRequest, JobsError> {
    match &ctx.caller {
        Caller::Agent(signed) => Ok(signed.clone()),
        _ => Err(ToolError::internal("a jobs tool called without a signed caller").into()),
    }
}

/// The quote of `cents` for `agent_id` (a connected app's hosted agent when `app`), read in
/// `conn`: its owner's grant (none: $0 caps) and its jobs of the last 24 hours at `now_ms`.
fn quote(
    conn: &Connection,
    ask: &Ask,
    agent_id: &str,
    app: bool,
    now_ms: i64,
) -> Result<Quote, JobsError> {
    let grant = crate::people::grant(conn, agent_id)?;
    let (per_action, per_day) = match (&grant, app) {
        (Some(grant), false) => (grant.spend_usd_per_action, grant.spend_usd_per_day),
        _ => (0, 0),
    };
    let spent = store::spent_since(conn, agent_id, now_ms - DAY_MS)?;
    let remaining = per_day.saturating_mul(100).saturating_sub(spent).max(0);
    let dollars = price::dollars(ask.cents);
    let explanation = if app {
        "A connected app's spend is always $0 and it cannot open jobs: kd.jobs.request is never granted to connected apps. This is a quote only.".to_owned()
    } else if ask.cents > per_action.saturating_mul(100) {
        let whose = if grant.is_some() {
            "set by its owner's grant"
        } else {
            "because no person owns this agent"
        };
        format!(
            "{dollars} is over this agent's spend cap of ${per_action} per action, {whose}; KarmaDue moves no money."
        )
    } else if ask.cents > remaining {
        format!(
            "{dollars} is over what is left of this agent's spend cap of ${per_day} a day ({} left); KarmaDue moves no money.",
            price::dollars(remaining)
        )
    } else {
        format!("{dollars} fits this agent's spend cap; KarmaDue moves no money.")
    };
    let fits = !app && ask.cents <= per_action.saturating_mul(100) && ask.cents <= remaining;
    Ok(Quote {
        method: ask.method.to_owned(),
        scope: ask.scope.to_owned(),
        price_usd: super::output::usd(ask.cents),
        price_usd_cents: ask.cents,
        currency: "USD",
        rule: price::RULE,
        fits,
        reason: if fits { "ok" } else { "spend_cap" },
        explanation,
        spend_cap_usd_per_action: per_action,
        spend_cap_usd_per_day: per_day,
        spent_today_usd_cents: spent,
        remaining_today_usd_cents: remaining,
        asked_by_connected_app: app,
        money_moves: false,
    })
}

/// Checks the named resource: a real record of the catalog.
///
/// # Errors
/// `validation` for a malformed id, `not_found` naming `resource_id`.
fn check_resource(conn: &Connection, ask: &Ask) -> Result<(), JobsError> {
    if let Some(resource_id) = &ask.resource_id {
        crate::catalog::require_resource(conn, resource_id, false)?;
    }
    Ok(())
}

/// `request_verification`: a quote (commit false: a read) or a job opened inside the spend cap.
///
/// # Errors
/// `validation` naming the argument; `not_found` naming `resource_id`; `spend_cap` (field
/// `commit`) when committing over the cap, or from a connected app; the signature refusals;
/// `internal`.
pub(super) async fn request_verification(
    ctx: Ctx,
    input: RequestVerification,
) -> Result<Requested, JobsError> {
    let ask = ask(&input)?;
    let signed = signer(&ctx)?;
    let app = matches!(signed.proof, Proof::Connector { .. });
    let agent_id = signed.agent_id.to_string();
    let now_ms = ctx.kernel.clock.now_ms();
    if !ask.commit {
        let quote = ctx
            .read(move |conn| {
                check_resource(conn, &ask)?;
                Ok(quote(conn, &ask, &agent_id, app, now_ms)?)
            })
            .await?;
        return Ok(Requested {
            committed: false,
            quote,
            job: None,
            event_seq: None,
            message: "A quote only: nothing was recorded. Call again with commit true to open the job.",
        });
    }
    let job_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdjob_");
    let opened = ctx.signed_write(move |txn, signed| -> Result<_, JobsError> {
        let agent_id = signed.agent_id.to_string();
        check_resource(txn.conn(), &ask)?;
        let quote = quote(txn.conn(), &ask, &agent_id, app, txn.now_ms())?;
        if !quote.fits {
            return Err(JobsError::SpendCap {
                message: quote.explanation.clone(),
                price_usd_cents: quote.price_usd_cents,
                spend_cap_usd_per_action: quote.spend_cap_usd_per_action,
                spend_cap_usd_per_day: quote.spend_cap_usd_per_day,
                remaining_today_usd_cents: quote.remaining_today_usd_cents,
            });
        }
        if store::open_count(txn.conn(), &agent_id)? >= MAX_OPEN_JOBS {
            return Err(JobsError::TooManyOpen(MAX_OPEN_JOBS));
        }
        open_job(txn, signed, job_id, ask, quote)
    });
    opened.await
}

/// Stores the job `ask` describes and appends `job.requested`.
fn open_job(
    txn: &mut WriteTxn<'_>,
    signed: &SignedRequest,
    job_id: String,
    ask: Ask,
    quote: Quote,
) -> Result<Requested, JobsError> {
    let now = txn.now_ms();
    let title = match (&ask.title, &ask.resource_id) {
        (Some(title), _) => title.clone(),
        (None, Some(resource_id)) => format!("Check {resource_id}"),
        (None, None) => return Err(JobsError::NothingToCheck),
    };
    let job = Job {
        job_id: job_id.clone(),
        requester_id: signed.agent_id.to_string(),
        resource_id: ask.resource_id.clone(),
        title,
        detail: ask.detail.clone(),
        method: ask.method.to_owned(),
        scope: ask.scope.to_owned(),
        price_cents: ask.cents,
        status: "open".to_owned(),
        taker: None,
        taken_ms: None,
        result: None,
        evidence_ref: None,
        done_ms: None,
        cancelled_ms: None,
        created_ms: now,
        updated_ms: now,
    };
    store::insert_job(txn.conn(), &job)?;
    let event = txn.record(
        signed.actor(),
        job_id.clone(),
        &events::JobRequested {
            job_id,
            requester_id: job.requester_id.clone(),
            resource_id: job.resource_id.clone(),
            method: job.method.clone(),
            scope: job.scope.clone(),
            price_usd_cents: job.price_cents,
            title_sha256: text_sha256(&job.title),
            detail_sha256: job.detail.as_deref().map(text_sha256),
        },
    )?;
    Ok(Requested {
        committed: true,
        quote,
        job: Some(JobView::from(&job)),
        event_seq: Some(event.seq),
        message: "Opened. A signed-in person who does not own you takes it in the app and submits a result with an evidence link; read it with get_job. You can cancel it with cancel_job while it is open. No money moves.",
    })
}

/// The job `job_id` as its requester `agent_id` may see it.
///
/// # Errors
/// `not_found`, `forbidden` (`not_requester`).
fn own_job(conn: &Connection, job_id: &str, agent_id: &str) -> Result<Job, JobsError> {
    let job = store::job(conn, job_id)?.ok_or(JobsError::NoSuchJob)?;
    if job.requester_id != agent_id {
        return Err(JobsError::NotRequester);
    }
    Ok(job)
}

/// `get_job`: the requester reads its job.
///
/// # Errors
/// `validation` naming `job_id`, `not_found`, `forbidden` (`not_requester`), the signature
/// refusals, `internal`.
pub(super) async fn get_job(ctx: Ctx, input: JobRef) -> Result<JobRead, JobsError> {
    let job_id = input.job_id.required_text("job_id")?.to_owned();
    let agent_id = signer(&ctx)?.agent_id.to_string();
    let job = ctx
        .read(move |conn| Ok(own_job(conn, &job_id, &agent_id)?))
        .await?;
    Ok(JobRead {
        job: JobView::from(&job),
    })
}

/// `cancel_job`: the requester cancels its job while it is open.
///
/// # Errors
/// `validation` naming `job_id` (not open), `not_found`, `forbidden` (`not_requester`), the
/// signature refusals, `internal`.
pub(super) async fn cancel_job(ctx: Ctx, input: JobRef) -> Result<JobCancelledView, JobsError> {
    let job_id = input.job_id.required_text("job_id")?.to_owned();
    let cancelled = ctx.signed_write(move |txn, signed| -> Result<_, JobsError> {
        let job = own_job(txn.conn(), &job_id, &signed.agent_id.to_string())?;
        if job.status != "open" {
            return Err(JobsError::NotOpen(job.status, "cancelled"));
        }
        store::cancel(txn.conn(), &job_id, txn.now_ms())?;
        let event = txn.record(
            signed.actor(),
            job_id.clone(),
            &events::JobCancelled {
                job_id: job_id.clone(),
                requester_id: job.requester_id.clone(),
            },
        )?;
        let after = store::job(txn.conn(), &job_id)?.ok_or(JobsError::NoSuchJob)?;
        Ok(JobCancelledView {
            job: JobView::from(&after),
            event_seq: event.seq,
            message: "Cancelled. Nobody can take it now, and it no longer counts against today's spend cap.",
        })
    });
    cancelled.await
}
