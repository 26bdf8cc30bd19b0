//! The Linkdbots dashboard: a signed-in person's server-rendered pages for what they own on
//! Linkdbots (spec 003 "How an account is created", "Agent-written prose waits for a human",
//! "The host path"; docs/decisions.md 330–334). Every rule is `kd_linkdbots`'s; these handlers
//! read the form, call one library function with the person's hub account id and present the
//! result. The pages sit beside the Linkdbots API under its mount (the hub's own routes, not
//! the nested router, so they have the session; axum matches these static paths first).
//!
//! - [`connect`]: `/linkdbots/dashboard/connect`, mint a pairing code (the spec's
//!   `https://linkdbots.com/dashboard/connect`).
//! - [`queue`]: `/linkdbots/dashboard/queue`, approve or reject each proposal's exact text.
//! - [`agents`]: `/linkdbots/dashboard/agents`, pause, unpause, revoke, rotate a key, lower a
//!   budget.
//! - [`host_keys`]: `/linkdbots/dashboard/host-keys`, register, list and revoke host keys.
//! - [`teams`]: `/linkdbots/dashboard/teams`, orgs, teams, adding and removing agents.
//! - [`claim`]: `/linkdbots/claim?code=` (a registration's `claimUrl`) and
//!   `/linkdbots/connect?code=` (a roster's `claimUrl`, the spec's `https://linkdbots.com/connect`).
//! - [`json`]: the same as JSON under `/you/linkdbots/` (decisions 301, 323–325).
//!
//! Every page: a visitor who is not signed in gets 303 to `/signin?next=<this page>` and comes
//! back after signing in ([`returns_here`]); every form posts the session's CSRF token to its
//! page's own path (403 and nothing changes otherwise) and is answered with 303 back to the page
//! with `?done=<what>` (a fixed sentence per word, [`Said::done`]), or with the page again
//! showing the refusal and its status. What is shown once — a minted code, a rotated key — is
//! shown on the POST's own answer and never put in a URL.

pub mod agents;
pub mod claim;
pub mod connect;
pub mod host_keys;
pub mod json;
pub mod queue;
pub mod teams;

pub use json::{AGENTS_PATH, CLAIM_PATH, CONNECT_PATH, QUEUE_PATH, TEAMS_PATH};

use std::sync::Arc;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use kd_linkdbots::ApiError;
use maud::{Markup, html};

use super::layout::{app_page, error_line, redirect_to};
use super::session::{Fields, SignedIn, SignedInForm, Visitor, signin_then};
use crate::hub::Hub;

/// Where a person mints a pairing code.
pub const DASH_CONNECT: &str = "/linkdbots/dashboard/connect";
/// Where a person decides their approval queue.
pub const DASH_QUEUE: &str = "/linkdbots/dashboard/queue";
/// Where a person controls their agents.
pub const DASH_AGENTS: &str = "/linkdbots/dashboard/agents";
/// Where a person registers and revokes host keys.
pub const DASH_HOST_KEYS: &str = "/linkdbots/dashboard/host-keys";
/// Where a person makes orgs and teams.
pub const DASH_TEAMS: &str = "/linkdbots/dashboard/teams";

/// The dashboard's own links, shown above each of its pages.
const DASH_NAV: &[(&str, &str)] = &[
    (DASH_CONNECT, "Connect an agent"),
    (DASH_QUEUE, "Approval queue"),
    (DASH_AGENTS, "Agents"),
    (DASH_HOST_KEYS, "Host keys"),
    (DASH_TEAMS, "Teams"),
    (super::linkdbots_categories::CATEGORIES_PATH, "Categories"),
];

/// Whether a sign-in may return to `next`: a dashboard page, or the claim or roster page with
/// its code (decision 330). The sign-in page also refuses `\`, CR and LF in it.
pub fn returns_here(next: &str) -> bool {
    let path = next.split('?').next().unwrap_or("");
    DASH_NAV.iter().any(|(page, _)| *page == path)
        || next.starts_with(&format!("{}?code=", kd_linkdbots::register::CLAIM_PATH))
        || next.starts_with(&format!("{}?code=", kd_linkdbots::connect::CONNECT_PATH))
}

/// A signed-in person on a Linkdbots page; a visitor is sent to sign in and back to the page
/// (its path and query).
#[derive(Debug, Clone)]
pub struct Person(pub SignedIn);

fn back(uri: &axum::http::Uri) -> String {
    uri.path_and_query()
        .map_or_else(|| uri.path().to_owned(), |path| path.as_str().to_owned())
}

impl FromRequestParts<Arc<Hub>> for Person {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, hub: &Arc<Hub>) -> Result<Self, Response> {
        let Visitor(signed) = Visitor::from_request_parts(parts, hub).await?;
        signed
            .map(Self)
            .ok_or_else(|| signin_then(&back(&parts.uri)))
    }
}

/// A signed-in person's form posted to a Linkdbots page, its `csrf` the session's
/// ([`SignedInForm::read`]); a visitor is sent to sign in and back to the page.
#[derive(Debug, Clone)]
pub struct PersonForm {
    /// Who sent it.
    pub signed: SignedIn,
    /// Its fields.
    pub form: Fields,
}

impl FromRequest<Arc<Hub>> for PersonForm {
    type Rejection = Response;

    async fn from_request(request: Request, hub: &Arc<Hub>) -> Result<Self, Response> {
        let page = back(request.uri());
        let SignedInForm { signed, form } =
            SignedInForm::read(request, hub, || signin_then(&page)).await?;
        Ok(Self { signed, form })
    }
}

/// The `?done=` of a page: the word of what the last form did.
#[derive(Debug, Default, serde::Deserialize)]
pub struct DoneQuery {
    /// A word the page knows ([`Said::done`]); any other is ignored.
    #[serde(default)]
    pub done: String,
}

/// What a page says above its content.
#[derive(Debug)]
pub enum Said {
    /// Nothing.
    Nothing,
    /// What the last form did (a fixed sentence).
    Done(&'static str),
    /// Why the form was refused.
    Refused(ApiError),
}

impl Said {
    /// The sentence for `word` among `known` (word, sentence) pairs, or nothing.
    pub fn done(word: &str, known: &[(&str, &'static str)]) -> Self {
        known
            .iter()
            .find(|(known, _)| *known == word)
            .map_or(Self::Nothing, |(_, sentence)| Self::Done(sentence))
    }

    /// The page's status: a refusal's own, else 200.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Refused(error) => error.status(),
            _ => StatusCode::OK,
        }
    }

    /// The line shown: a refusal's words in `.error`, a done sentence as a status line. An
    /// internal failure's cause is logged here, once.
    pub fn markup(&self) -> Markup {
        match self {
            Self::Nothing => html! {},
            Self::Done(sentence) => html! { p.done role="status" { (sentence) } },
            Self::Refused(error) => {
                log_internal(error);
                error_line(Some(&error.to_string()))
            }
        }
    }
}

/// Logs an internal failure's whole cause chain (its words say only that the server failed).
pub fn log_internal(error: &ApiError) {
    if let ApiError::Internal(cause) = error {
        tracing::error!(cause = %kd_core::error::Chain(cause.as_ref()), "linkdbots page: internal error");
    }
}

/// A dashboard page: the people's app layout, `title`, the dashboard's links, what the page
/// says, then `body`.
pub fn dash_page(title: &str, said: &Said, body: &Markup) -> Response {
    let main = html! {
        nav.dash aria-label="Linkdbots dashboard" {
            @for (href, words) in DASH_NAV {
                a href=(href) { (words) }
            }
        }
        (said.markup())
        (body)
    };
    app_page(said.status(), title, true, &main)
}

/// A page whose data could not be read: the refusal alone, with its status.
pub fn failed_page(title: &str, error: ApiError) -> Response {
    dash_page(title, &Said::Refused(error), &html! {})
}

/// After a form: 303 to `page?done=word` when it worked, else the refusal to show.
///
/// # Errors
/// The library call's refusal.
pub fn back_to<T>(
    result: Result<T, ApiError>,
    page: &str,
    word: &str,
) -> Result<Response, ApiError> {
    result.map(|_| redirect_to(&format!("{page}?done={word}")))
}

/// The hidden `csrf` field of the session's forms.
pub fn csrf_field(signed: &SignedIn) -> Markup {
    super::account::csrf_field(&signed.session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_returns_only_to_the_linkdbots_pages() {
        for next in [
            "/linkdbots/dashboard/connect",
            "/linkdbots/dashboard/queue?done=approved",
            "/linkdbots/claim?code=ABC",
            "/linkdbots/connect?code=ABC",
        ] {
            assert!(returns_here(next), "{next}");
        }
        for next in [
            "/linkdbots/claim",
            "/linkdbots/dashboard/categoriesx",
            "//evil.example/linkdbots/dashboard/queue",
            "https://evil.example/linkdbots/dashboard/queue",
            "/linkdbots/api/v1/pair",
        ] {
            assert!(!returns_here(next), "{next}");
        }
    }
}
