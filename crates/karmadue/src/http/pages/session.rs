//! Who is asking, for the people's app: the cookies (through `axum-extra`'s [`CookieJar`]),
//! the refusals every app page shares, and the extractors that replace the copied
//! session/CSRF preamble of the handlers:
//!
//! - [`Visitor`]: the person behind the `kd_session` cookie, if any (GET pages).
//! - [`SignedIn`]: the same, and a visitor who is not signed in is sent to `/signin`.
//! - [`SignedInForm`]: a signed-in person's POSTed form whose `csrf` field is the session's
//!   own token (403 "This form expired" otherwise).
//! - [`PreSignInForm`]: the sign-up and sign-in forms, whose `csrf` field must equal the
//!   `kd_form` cookie and be a token this hub made within the hour (`http::form_token`).
//!
//! Cookies: `kd_session` (the session token) and `kd_form`, both `Path=/; HttpOnly;
//! SameSite=Lax`, `Secure` when the public URL is https, with a `Max-Age`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Form, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use kd_core::people::{Person, Session};
use maud::html;

use super::layout::{app_page, redirect, redirect_to};
use crate::hub::Hub;
use crate::people::{self, AppError};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "kd_session";
/// The pre-sign-in form cookie's name.
pub const FORM_COOKIE: &str = "kd_form";
/// How long the `kd_form` cookie lives, in seconds.
const FORM_COOKIE_MAX_AGE_S: i64 = 3600;

/// The non-empty value of the request's cookie `name`.
fn cookie(jar: &CookieJar, name: &str) -> Option<String> {
    jar.get(name)
        .map(|cookie| cookie.value().to_owned())
        .filter(|value| !value.is_empty())
}

/// A cookie of this hub: `Path=/; HttpOnly; SameSite=Lax; Max-Age`, `Secure` behind https.
fn hub_cookie(hub: &Hub, name: &'static str, value: String, max_age_s: i64) -> Cookie<'static> {
    Cookie::build((name, value))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .max_age(time::Duration::seconds(max_age_s))
        .secure(hub.config.public_url.starts_with("https://"))
        .build()
}

/// `jar` with the `kd_form` cookie set to `token` for an hour.
pub fn with_form_cookie(hub: &Hub, jar: CookieJar, token: &str) -> CookieJar {
    jar.add(hub_cookie(
        hub,
        FORM_COOKIE,
        token.to_owned(),
        FORM_COOKIE_MAX_AGE_S,
    ))
}

/// `jar` after sign-in: the session cookie set for the session's lifetime, `kd_form` cleared.
pub fn signed_in_cookies(hub: &Hub, jar: CookieJar, token: &str) -> CookieJar {
    jar.add(hub_cookie(
        hub,
        SESSION_COOKIE,
        token.to_owned(),
        kd_core::people::SESSION_TTL_MS / 1000,
    ))
    .add(hub_cookie(hub, FORM_COOKIE, String::new(), 0))
}

/// `jar` with the session cookie cleared.
pub fn signed_out_cookies(hub: &Hub, jar: CookieJar) -> CookieJar {
    jar.add(hub_cookie(hub, SESSION_COOKIE, String::new(), 0))
}

/// The fields of a POSTed form; a missing field reads as empty.
#[derive(Debug, Clone, Default)]
pub struct Fields(HashMap<String, String>);

impl Fields {
    /// The field `name`, or `""`.
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    async fn read(request: Request, hub: &Arc<Hub>) -> Result<Self, Response> {
        Form::<HashMap<String, String>>::from_request(request, hub)
            .await
            .map(|Form(form)| Self(form))
            .map_err(IntoResponse::into_response)
    }
}

/// The status a refusal of the people's functions shows.
pub fn error_status(error: &AppError) -> StatusCode {
    match error {
        AppError::Invalid(_) | AppError::WrongCredentials => StatusCode::BAD_REQUEST,
        AppError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        AppError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
        AppError::NotFound => StatusCode::NOT_FOUND,
        AppError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// `response` with `Retry-After` when `error` says when to come back.
pub fn with_retry_after(mut response: Response, error: &AppError) -> Response {
    if let AppError::RateLimited { retry_after_s } | AppError::Busy { retry_after_s } = error
        && let Ok(value) = HeaderValue::from_str(&retry_after_s.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The error page for `error`, its status from [`error_status`].
pub fn error_page(error: &AppError, signed_in: bool) -> Response {
    app_page(
        error_status(error),
        "Error",
        signed_in,
        &html! { (error.to_string()) },
    )
}

/// 403: the form's token did not match.
pub fn forbidden_form(signed_in: bool) -> Response {
    app_page(
        StatusCode::FORBIDDEN,
        "This form expired",
        signed_in,
        &html! {
            p.error { "The form's security token did not match. Go back, reload the page and try again." }
        },
    )
}

/// Constant-time comparison of two tokens.
fn same_token(left: &str, right: &str) -> bool {
    left.len() == right.len()
        && left
            .bytes()
            .zip(right.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A signed-in person: who, their session, and the session token of the cookie.
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// The person.
    pub person: Person,
    /// Their live session (its `csrf` goes into every form).
    pub session: Session,
    /// The session token, from the `kd_session` cookie.
    pub token: String,
}

/// The person behind the request's `kd_session` cookie, if any. A failed lookup is answered
/// with the error page.
#[derive(Debug, Clone)]
pub struct Visitor(pub Option<SignedIn>);

impl Visitor {
    async fn of(hub: &Hub, jar: &CookieJar) -> Result<Self, AppError> {
        let Some(token) = cookie(jar, SESSION_COOKIE) else {
            return Ok(Self(None));
        };
        Ok(Self(people::signed_in(hub, &token).await?.map(
            |(person, session)| SignedIn {
                person,
                session,
                token,
            },
        )))
    }
}

impl FromRequestParts<Arc<Hub>> for Visitor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, hub: &Arc<Hub>) -> Result<Self, Response> {
        let jar = CookieJar::from_headers(&parts.headers);
        Self::of(hub, &jar)
            .await
            .map_err(|error| error_page(&error, false))
    }
}

impl FromRequestParts<Arc<Hub>> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, hub: &Arc<Hub>) -> Result<Self, Response> {
        let Visitor(signed) = Visitor::from_request_parts(parts, hub).await?;
        signed.ok_or_else(|| redirect("/signin"))
    }
}

/// A signed-in person's POSTed form, its `csrf` field checked against the session's token.
/// Refused, before anything is done: the form's own rejection (413, 415, …); 303 to
/// `/signin` when no one is signed in; 403 [`forbidden_form`] on a token mismatch.
#[derive(Debug, Clone)]
pub struct SignedInForm {
    /// Who sent it.
    pub signed: SignedIn,
    /// The form's fields.
    pub form: Fields,
}

impl SignedInForm {
    /// The extractor's checks, with `signin` answering a visitor who is not signed in (the
    /// extractor's is a 303 to `/signin`; a page that wants the visitor back passes
    /// [`signin_then`]).
    ///
    /// # Errors
    /// The form's own rejection, `signin()`, [`forbidden_form`] or the error page, before
    /// anything is done.
    pub async fn read(
        request: Request,
        hub: &Arc<Hub>,
        signin: impl FnOnce() -> Response,
    ) -> Result<Self, Response> {
        let jar = CookieJar::from_headers(request.headers());
        let form = Fields::read(request, hub).await?;
        match Visitor::of(hub, &jar).await {
            Ok(Visitor(Some(signed))) if same_token(&signed.session.csrf, form.get("csrf")) => {
                Ok(Self { signed, form })
            }
            Ok(Visitor(Some(_))) => Err(forbidden_form(true)),
            Ok(Visitor(None)) => Err(signin()),
            Err(error) => Err(error_page(&error, false)),
        }
    }
}

impl FromRequest<Arc<Hub>> for SignedInForm {
    type Rejection = Response;

    async fn from_request(request: Request, hub: &Arc<Hub>) -> Result<Self, Response> {
        Self::read(request, hub, || redirect("/signin")).await
    }
}

/// `303 See Other` to `/signin?next=<back>`: a sign-in that returns to `back` (a path and
/// query of this hub; the sign-in page follows only the paths it knows, decisions 311, 328,
/// 330).
pub fn signin_then(back: &str) -> Response {
    redirect_to(&format!("/signin?next={}", super::authorize::encode(back)))
}

/// The sign-up or sign-in form, POSTed with the `kd_form` cookie: accepted when the cookie
/// and the `csrf` field hold the same token and it is one this hub made within the hour;
/// 403 [`forbidden_form`] otherwise.
#[derive(Debug, Clone)]
pub struct PreSignInForm {
    /// The form's token (shown again when the form is re-shown).
    pub token: String,
    /// The form's fields.
    pub form: Fields,
    /// The request's cookies.
    pub jar: CookieJar,
}

impl FromRequest<Arc<Hub>> for PreSignInForm {
    type Rejection = Response;

    async fn from_request(request: Request, hub: &Arc<Hub>) -> Result<Self, Response> {
        let jar = CookieJar::from_headers(request.headers());
        let form = Fields::read(request, hub).await?;
        let token = cookie(&jar, FORM_COOKIE).filter(|token| {
            same_token(token, form.get("csrf"))
                && hub.form_tokens.is_valid(token, hub.clock.now_ms())
        });
        match token {
            Some(token) => Ok(Self { token, form, jar }),
            None => Err(forbidden_form(false)),
        }
    }
}
