//! Jobs (`/you/jobs`; docs/decisions.md 464, 468): a signed-in person takes open human
//! checks of agents they do not own and submits results; they see the jobs their own agents
//! requested, with the quote and status, and the disputes their agents opened. The rules live
//! in [`crate::jobs::people`].

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};

use super::account::csrf_field;
use super::layout::{Data, app_page, error_line, redirect, tool_refusal};
use super::session::{Fields, SignedIn, SignedInForm};
use crate::help::verification::MAX_EVIDENCE_CHARS;
use crate::hub::Hub;
use crate::jobs::RESULTS;
use crate::jobs::output::JobView;
use crate::jobs::people::{self, JobsPage};
use crate::jobs::price;
use kd_kernel::error::ToolError;

/// The jobs page's path.
pub const JOBS_PATH: &str = "/you/jobs";

/// The job's facts: method, scope, price, status, id.
fn job_facts(job: &JobView) -> Markup {
    html! {
        p {
            "Method " code { (job.method) }
            " · scope " (job.scope)
            " · quoted " strong { (price::dollars(job.price_usd_cents)) } " (a record; no money moves)"
            " · status " strong { (job.status) }
            " · job " code { (job.job_id) }
        }
    }
}

/// The requester's words (title, detail) and the record to check: third-party text.
fn job_words(job: &JobView) -> Markup {
    html! {
        p { em { "The requester's words (third-party text, shown as data; not instructions from KarmaDue):" } }
        blockquote style="white-space:pre-wrap" { (Data(&job.title)) }
        @if let Some(detail) = &job.detail {
            blockquote style="white-space:pre-wrap" { (Data(detail)) }
        }
        @if let Some(resource_id) = &job.resource_id {
            p { "Record to check: " a href=(format!("/resource?id={resource_id}")) { code { (resource_id) } } }
        }
    }
}

/// The result once done.
fn job_result(job: &JobView) -> Markup {
    html! {
        @if let (Some(result), Some(evidence)) = (&job.result, &job.evidence_ref) {
            p { "Result " strong { (result) } " · evidence " code { (Data(evidence)) } }
        }
    }
}

/// The result form of a job the person took (refilled from `prefill` after a refusal).
fn complete_form(csrf: &Markup, job: &JobView, prefill: Option<&Fields>) -> Markup {
    let mine = prefill.filter(|form| form.get("job_id").trim() == job.job_id);
    let given = |name: &str| mine.map_or("", |form| form.get(name));
    html! {
        form method="post" action="/you/jobs/complete" {
            (csrf)
            input type="hidden" name="job_id" value=(job.job_id);
            fieldset {
                legend { "Result" }
                @for result in RESULTS {
                    label { input type="radio" name="result" value=(result) required checked[given("result") == result]; " " (result) }
                }
            }
            label {
                "Evidence link (an https URL) "
                input type="url" name="evidence_ref" maxlength=(MAX_EVIDENCE_CHARS) value=(given("evidence_ref")) required;
            }
            button type="submit" { "Submit result" }
        }
    }
}

fn jobs_body(
    signed: &SignedIn,
    page: &JobsPage,
    message: Option<&str>,
    prefill: Option<&Fields>,
) -> Markup {
    let csrf = csrf_field(&signed.session);
    html! {
        (error_line(message))
        p { "Agents ask people for human checks with request_verification. Take an open job of an agent \
             you do not own, check what it asks, and submit a result with an evidence link; the agent reads \
             it with get_job. Prices are records: KarmaDue moves no money." }
        h2 { "Jobs you took" }
        @if page.taken.is_empty() { p { "You took no jobs." } }
        @for job in &page.taken {
            section {
                (job_facts(job))
                (job_words(job))
                @if job.status == "taken" { (complete_form(&csrf, job, prefill)) } @else { (job_result(job)) }
            }
        }
        h2 { "Open jobs" }
        @if page.open.is_empty() { p { "No jobs of other people's agents are open right now." } }
        @for job in &page.open {
            section {
                (job_facts(job))
                (job_words(job))
                form method="post" action="/you/jobs/take" {
                    (csrf)
                    input type="hidden" name="job_id" value=(job.job_id);
                    button type="submit" { "Take this job" }
                }
            }
        }
        h2 { "Jobs your agents requested" }
        @if page.requested.is_empty() { p { "Your agents requested no jobs." } }
        @for own in &page.requested {
            section {
                p { "Requested by your agent " code { (own.handle) } }
                (job_facts(&own.job))
                (job_words(&own.job))
                (job_result(&own.job))
            }
        }
        h2 { "Disputes your agents opened" }
        @if page.disputes.is_empty() { p { "Your agents opened no disputes." } }
        @for own in &page.disputes {
            section {
                p {
                    "Opened by your agent " code { (own.handle) }
                    " about " (own.dispute.subject_type) " " code { (own.dispute.subject_id) }
                    " · " (own.dispute.created_at)
                    " · " strong { (own.dispute.status) } " (recorded; KarmaDue does not decide disputes)"
                }
                blockquote style="white-space:pre-wrap" { (Data(&own.dispute.reason)) }
                @if let Some(details) = &own.dispute.details {
                    blockquote style="white-space:pre-wrap" { (Data(details)) }
                }
            }
        }
    }
}

async fn jobs_response(
    hub: &Hub,
    signed: &SignedIn,
    status: StatusCode,
    message: Option<&str>,
    prefill: Option<&Fields>,
) -> Response {
    let person_id = signed.person.person_id.clone();
    let read = hub
        .store
        .read(move |conn| people::page(conn, &person_id))
        .await;
    let (status, body) = read.map_or_else(
        |error| {
            let (status, text) = tool_refusal(&error, "jobs");
            (status, html! { p.error { (text) } })
        },
        |page| (status, jobs_body(signed, &page, message, prefill)),
    );
    app_page(status, "Jobs", true, &body)
}

/// `GET /you/jobs`: the jobs the person took (with the result form), open jobs (with "Take
/// this job"), and the jobs and disputes of the person's agents. Signed out: to /signin.
pub async fn jobs_page(State(hub): State<Arc<Hub>>, signed: SignedIn) -> Response {
    jobs_response(&hub, &signed, StatusCode::OK, None, None).await
}

/// A form's outcome: back to the page when `done`, or the page again with the refusal's status
/// and sentence (and the form as filled in when `keep`); a refusal changed nothing.
async fn after_form(
    hub: &Hub,
    posted: &SignedInForm,
    done: Result<JobView, ToolError>,
    keep: bool,
) -> Response {
    let Err(error) = done else {
        return redirect(JOBS_PATH);
    };
    let (status, text) = tool_refusal(&error, "jobs");
    let prefill = keep.then_some(&posted.form);
    jobs_response(hub, &posted.signed, status, Some(&text), prefill).await
}

/// `POST /you/jobs/take` (`csrf`, `job_id`): takes an open job ([`people::take_as_person`]);
/// a refusal re-shows the page with its message and nothing changed.
pub async fn jobs_take(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let person_id = &posted.signed.person.person_id;
    let done = people::take_as_person(&hub, person_id, posted.form.get("job_id")).await;
    after_form(&hub, &posted, done, false).await
}

/// `POST /you/jobs/complete` (`csrf`, `job_id`, `result`, `evidence_ref`): submits the result
/// of a job the person took ([`people::complete_as_person`]); a refusal re-shows the page with
/// its message and the form as filled in, and nothing changed.
pub async fn jobs_complete(State(hub): State<Arc<Hub>>, posted: SignedInForm) -> Response {
    let form = &posted.form;
    let done = people::complete_as_person(
        &hub,
        &posted.signed.person.person_id,
        form.get("job_id"),
        form.get("result"),
        form.get("evidence_ref"),
    )
    .await;
    after_form(&hub, &posted, done, true).await
}
