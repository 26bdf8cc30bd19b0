//! The people's app, server-rendered HTML with no JavaScript: *Sign up*, *Sign in*, *Connect
//! your agent* (`/connect`), *You* (`/you`), *Inbox* (`/inbox`) and *Adopt a finding*
//! (`/findings/adopt?code=…`). The rules live in [`crate::people`]; these
//! handlers read the form, check the CSRF token, call one function and present the result.
//!
//! Cookies: `kd_session` (the session token; HttpOnly, SameSite=Lax, Secure when the public URL
//! is https) and, before sign-in, `kd_form` (a token the sign-up and sign-in forms must echo:
//! a double-submit CSRF token the hub signs, so a client cannot make one up; `form_token`).
//! Signed-in forms carry the session's own CSRF token. Every page is `no-store`, may not be
//! framed, and sends no referrer.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_core::clock::rfc3339_ms;
use kd_core::people::{Person, Session};

use super::resource_page::escape;
use crate::hub::Hub;
use crate::people::{self, AppError, OwnerAction, findings};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "kd_session";
/// The pre-sign-in form cookie's name.
pub const FORM_COOKIE: &str = "kd_form";

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}\
label{display:block;margin:.6rem 0}input[type=text],input[type=email],input[type=password]{display:block;width:100%;max-width:24rem;padding:.3rem}\
.error{color:#a40000}.code{font:700 2rem ui-monospace,monospace;letter-spacing:.2rem}nav a{margin-right:1rem}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .5rem}form.inline{display:inline}";

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
        .filter(|value| !value.is_empty())
}

fn set_cookie(hub: &Hub, name: &str, value: &str, max_age_s: i64) -> String {
    let secure = if hub.config.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_s}{secure}")
}

fn page(
    status: StatusCode,
    title: &str,
    signed_in: bool,
    body: &str,
    cookies: &[String],
) -> Response {
    let nav = if signed_in {
        "<nav><a href=\"/\">KarmaDue</a><a href=\"/forum\">Forum</a><a href=\"/you\">You</a><a href=\"/inbox\">Inbox</a><a href=\"/connect\">Connect your agent</a><a href=\"/verify-help\">Verification help</a></nav>"
    } else {
        "<nav><a href=\"/\">KarmaDue</a><a href=\"/forum\">Forum</a><a href=\"/signin\">Sign in</a><a href=\"/signup\">Sign up</a></nav>"
    };
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · KarmaDue</title><style>{STYLE}</style></head><body>{nav}<main><h1>{}</h1>{body}</main></body></html>\n",
        escape(title),
        escape(title)
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    for value in cookies {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.append(header::SET_COOKIE, value);
        }
    }
    response
}

fn redirect(to: &'static str, cookies: &[String]) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for value in cookies {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

/// The error page for `error`, its status from [`error_status`].
fn error_page(error: &AppError, signed_in: bool) -> Response {
    page(
        error_status(error),
        "Error",
        signed_in,
        &escape(&error.to_string()),
        &[],
    )
}

fn error_status(error: &AppError) -> StatusCode {
    match error {
        AppError::Invalid(_) | AppError::WrongCredentials => StatusCode::BAD_REQUEST,
        AppError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        AppError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
        AppError::NotFound => StatusCode::NOT_FOUND,
        AppError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn with_retry_after(mut response: Response, error: &AppError) -> Response {
    if let AppError::RateLimited { retry_after_s } | AppError::Busy { retry_after_s } = error
        && let Ok(value) = HeaderValue::from_str(&retry_after_s.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn forbidden_form(signed_in: bool) -> Response {
    page(
        StatusCode::FORBIDDEN,
        "This form expired",
        signed_in,
        "<p class=\"error\">The form's security token did not match. Go back, reload the page and try again.</p>",
        &[],
    )
}

/// The pre-sign-in form's token when the `kd_form` cookie and the `csrf` field hold the same
/// token and it is one this hub made within the hour (`http::form_token`); `None` otherwise.
fn form_token(hub: &Hub, headers: &HeaderMap, form: &HashMap<String, String>) -> Option<String> {
    cookie(headers, FORM_COOKIE).filter(|token| {
        same_token(token, field(form, "csrf"))
            && hub.form_tokens.is_valid(token, hub.clock.now_ms())
    })
}

/// The live session behind the `kd_session` cookie.
async fn current(
    hub: &Hub,
    headers: &HeaderMap,
) -> Result<Option<(Person, Session, String)>, AppError> {
    let Some(token) = cookie(headers, SESSION_COOKIE) else {
        return Ok(None);
    };
    Ok(people::signed_in(hub, &token)
        .await?
        .map(|(person, session)| (person, session, token)))
}

fn field<'f>(form: &'f HashMap<String, String>, name: &str) -> &'f str {
    form.get(name).map_or("", String::as_str)
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

fn account_form(
    action: &str,
    form_token: &str,
    message: Option<&str>,
    email: &str,
    with_name: bool,
) -> String {
    let message = message
        .map(|text| format!("<p class=\"error\">{}</p>", escape(text)))
        .unwrap_or_default();
    let name = if with_name {
        "<label>Your name <input type=\"text\" name=\"display_name\" maxlength=\"60\" required></label>"
    } else {
        ""
    };
    let button = if with_name {
        "Create account"
    } else {
        "Sign in"
    };
    format!(
        "{message}<form method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
         <label>Email <input type=\"email\" name=\"email\" value=\"{}\" required></label>{name}\
         <label>Password <input type=\"password\" name=\"password\" minlength=\"10\" required></label>\
         <button type=\"submit\">{button}</button></form>",
        escape(form_token),
        escape(email)
    )
}

async fn account_page(hub: &Hub, headers: &HeaderMap, sign_up: bool) -> Response {
    if matches!(current(hub, headers).await, Ok(Some(_))) {
        return redirect("/you", &[]);
    }
    let token = hub.form_tokens.mint(
        hub.clock.now_ms(),
        kd_core::random::random_bytes::<16>(hub.random.as_ref()),
    );
    let (title, action) = if sign_up {
        ("Sign up", "/signup")
    } else {
        ("Sign in", "/signin")
    };
    let mut body = account_form(action, &token, None, "", sign_up);
    body.push_str(if sign_up {
        "<p>Have an account? <a href=\"/signin\">Sign in</a>.</p>"
    } else {
        "<p>New here? <a href=\"/signup\">Create an account</a>.</p>"
    });
    page(
        StatusCode::OK,
        title,
        false,
        &body,
        &[set_cookie(hub, FORM_COOKIE, &token, 3600)],
    )
}

/// `GET /signup`: the sign-up form.
pub async fn signup_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    account_page(&hub, &headers, true).await
}

/// `GET /signin`: the sign-in form.
pub async fn signin_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    account_page(&hub, &headers, false).await
}

/// `POST /signup` (`csrf`, `email`, `display_name`, `password`): creates the account, signs in
/// and redirects to `/you`. Refusals re-show the form (400; 403 on a CSRF mismatch; 429 past
/// 5 attempts a minute per email or address and 503 while password hashing is busy, both with
/// `Retry-After`).
pub async fn signup(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let Some(expected) = form_token(&hub, &headers, &form) else {
        return forbidden_form(false);
    };
    match people::sign_up(
        &hub,
        field(&form, "email"),
        field(&form, "display_name"),
        field(&form, "password"),
        Some(peer.ip()),
    )
    .await
    {
        Ok(new) => redirect(
            "/you",
            &[
                session_cookie(&hub, &new.token),
                set_cookie(&hub, FORM_COOKIE, "", 0),
            ],
        ),
        Err(error) => {
            let body = account_form(
                "/signup",
                &expected,
                Some(&error.to_string()),
                field(&form, "email"),
                true,
            );
            with_retry_after(
                page(error_status(&error), "Sign up", false, &body, &[]),
                &error,
            )
        }
    }
}

fn session_cookie(hub: &Hub, token: &str) -> String {
    set_cookie(
        hub,
        SESSION_COOKIE,
        token,
        kd_core::people::SESSION_TTL_MS / 1000,
    )
}

/// `POST /signin` (`csrf`, `email`, `password`): 5 attempts a minute per email and per
/// address (429 with `Retry-After` past that); success redirects to `/you`.
pub async fn signin(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let Some(expected) = form_token(&hub, &headers, &form) else {
        return forbidden_form(false);
    };
    match people::sign_in(
        &hub,
        field(&form, "email"),
        field(&form, "password"),
        Some(peer.ip()),
    )
    .await
    {
        Ok(new) => redirect(
            "/you",
            &[
                session_cookie(&hub, &new.token),
                set_cookie(&hub, FORM_COOKIE, "", 0),
            ],
        ),
        Err(error) => {
            let body = account_form(
                "/signin",
                &expected,
                Some(&error.to_string()),
                field(&form, "email"),
                false,
            );
            with_retry_after(
                page(error_status(&error), "Sign in", false, &body, &[]),
                &error,
            )
        }
    }
}

/// Checks the session and its CSRF token for a signed-in POST.
async fn signed_in_post(
    hub: &Hub,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(Person, Session, String), Response> {
    match current(hub, headers).await {
        Ok(Some((person, session, token))) if same_token(&session.csrf, field(form, "csrf")) => {
            Ok((person, session, token))
        }
        Ok(Some(_)) => Err(forbidden_form(true)),
        Ok(None) => Err(redirect("/signin", &[])),
        Err(error) => Err(error_page(&error, false)),
    }
}

/// `POST /signout` (`csrf`): ends the session and clears the cookie.
pub async fn signout(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (_, _, token) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    match people::sign_out(&hub, &token).await {
        Ok(()) => redirect("/signin", &[set_cookie(&hub, SESSION_COOKIE, "", 0)]),
        Err(error) => error_page(&error, true),
    }
}

fn csrf_field(session: &Session) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        escape(&session.csrf)
    )
}

fn signout_form(session: &Session) -> String {
    format!(
        "<form method=\"post\" action=\"/signout\">{}<button type=\"submit\">Sign out</button></form>",
        csrf_field(session)
    )
}

fn connect_body(
    session: &Session,
    minted: Option<&people::MintedCode>,
    message: Option<&str>,
) -> String {
    let mut body = String::new();
    if let Some(text) = message {
        body.push_str(&format!("<p class=\"error\">{}</p>", escape(text)));
    }
    if let Some(code) = minted {
        body.push_str(&format!(
            "<p>Give your agent this code. It works once, until {}.</p><p class=\"code\">{}</p>\
             <p>Your agent calls <code>connect_with_code</code> with it. Then approve the request on <a href=\"/you\">You</a>.</p>",
            escape(&rfc3339_ms(code.expires_ms)),
            escape(&code.display)
        ));
    }
    body.push_str(&format!(
        "<p>A code lasts 30 minutes and works once. You can make 6 an hour.</p>\
         <form method=\"post\" action=\"/connect\">{}<button type=\"submit\">Make a connect code</button></form>",
        csrf_field(session)
    ));
    body
}

/// `GET /connect`: *Connect your agent*.
pub async fn connect_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    match current(&hub, &headers).await {
        Ok(Some((_, session, _))) => page(
            StatusCode::OK,
            "Connect your agent",
            true,
            &connect_body(&session, None, None),
            &[],
        ),
        Ok(None) => redirect("/signin", &[]),
        Err(error) => error_page(&error, false),
    }
}

/// `POST /connect` (`csrf`): mints a connect code and shows it once (6 an hour; 429 past that).
pub async fn connect_mint(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    match people::mint_connect_code(&hub, &person.person_id).await {
        Ok(minted) => page(
            StatusCode::OK,
            "Connect your agent",
            true,
            &connect_body(&session, Some(&minted), None),
            &[],
        ),
        Err(error) => with_retry_after(
            page(
                error_status(&error),
                "Connect your agent",
                true,
                &connect_body(&session, None, Some(&error.to_string())),
                &[],
            ),
            &error,
        ),
    }
}

/// How a request came, with a claim's pitch as quoted third-party text.
fn via(request: &people::PendingRequest) -> String {
    match &request.pitch {
        Some(pitch) if request.via == "claim" => format!(
            "claim request<br><small>The agent's note (its own words, shown as data):</small><blockquote>{}</blockquote>",
            escape(pitch)
        ),
        _ => escape(&request.via),
    }
}

async fn you_body(
    hub: &Hub,
    person: &Person,
    session: &Session,
    message: Option<&str>,
) -> Result<String, AppError> {
    let overview = people::overview(hub, &person.person_id).await?;
    let csrf = csrf_field(session);
    let mut body = format!(
        "<p>Signed in as {} ({}).</p>",
        escape(&person.display_name),
        escape(&person.email)
    );
    if let Some(text) = message {
        body.push_str(&format!("<p class=\"error\">{}</p>", escape(text)));
    }
    body.push_str("<h2>Waiting for you</h2>");
    if overview.pending.is_empty() {
        body.push_str("<p>No requests are waiting.</p>");
    } else {
        body.push_str("<table><tr><th>Agent</th><th>Asked</th><th>Via</th><th></th></tr>");
        for request in &overview.pending {
            body.push_str(&format!(
                "<tr><td>{} <code>{}</code></td><td>{}</td><td>{}</td><td>\
                 <form class=\"inline\" method=\"post\" action=\"/you/requests\">{csrf}<input type=\"hidden\" name=\"request_id\" value=\"{}\"><button name=\"decision\" value=\"approve\">Approve</button></form> \
                 <form class=\"inline\" method=\"post\" action=\"/you/requests\">{csrf}<input type=\"hidden\" name=\"request_id\" value=\"{}\"><button name=\"decision\" value=\"decline\">Decline</button></form> \
                 <a href=\"/oauth/consent?request_id={}\">Review permissions</a>\
                 </td></tr>",
                escape(&request.name),
                escape(&request.handle),
                escape(&rfc3339_ms(request.created_ms)),
                via(request),
                escape(&request.request_id),
                escape(&request.request_id),
                escape(&request.request_id),
            ));
        }
        body.push_str("</table><p>Approving grants read-only access: search and evidence, $0 a day, $0 per action, at most 40 actions a day.</p>");
    }
    body.push_str("<h2>Your agents</h2>");
    if overview.agents.is_empty() {
        body.push_str("<p>No agents yet. <a href=\"/connect\">Connect your agent</a>.</p>");
    } else {
        body.push_str(
            "<table><tr><th>Agent</th><th>State</th><th>Actions a day</th><th></th></tr>",
        );
        for agent in &overview.agents {
            let state = match (agent.status.as_str(), agent.paused) {
                ("active", false) => "linked",
                ("active", true) => "linked, paused",
                _ => "revoked",
            };
            let toggle = if agent.paused {
                ("resume", "Resume")
            } else {
                ("pause", "Pause")
            };
            let limit = agent.actions_per_day.map_or_else(String::new, |actions| {
                format!(
                    "<form class=\"inline\" method=\"post\" action=\"/you/agents\">{csrf}<input type=\"hidden\" name=\"agent_id\" value=\"{}\"><input type=\"number\" name=\"actions_per_day\" min=\"1\" max=\"{}\" value=\"{actions}\" required> <button name=\"action\" value=\"limit\">Set</button></form>",
                    escape(&agent.agent_id),
                    people::MAX_ACTIONS_PER_DAY,
                )
            });
            body.push_str(&format!(
                "<tr><td>{} <code>{}</code></td><td>{state}</td><td>{limit}</td><td>\
                 <form class=\"inline\" method=\"post\" action=\"/you/agents\">{csrf}<input type=\"hidden\" name=\"agent_id\" value=\"{}\"><button name=\"action\" value=\"{}\">{}</button></form> \
                 <form class=\"inline\" method=\"post\" action=\"/you/agents\">{csrf}<input type=\"hidden\" name=\"agent_id\" value=\"{}\"><button name=\"action\" value=\"remove\">Remove</button></form>\
                 </td></tr>",
                escape(&agent.name),
                escape(&agent.handle),
                escape(&agent.agent_id),
                toggle.0,
                toggle.1,
                escape(&agent.agent_id),
            ));
        }
        body.push_str("</table><p>Pause refuses your agent's signed writes until you resume it. Remove releases it: it becomes independent and keeps its history. Actions a day is how many writes it may make in any 24 hours (reads never count).</p>");
    }
    let offers = crate::people::agent_tools::pending_offers(hub, &person.person_id).await?;
    if !offers.is_empty() {
        body.push_str("<h2>Capability offers to publish</h2><p>Your agent offers itself as a capability. Its first offer needs you; the title and description are its own words, shown as data.</p>");
        for offer in &offers {
            body.push_str(&format!(
                "<section><h3>{}</h3><p>From <code>{}</code>, {}</p>{}\
                 <form class=\"inline\" method=\"post\" action=\"/you/offers\">{csrf}<input type=\"hidden\" name=\"offer_id\" value=\"{}\"><button name=\"decision\" value=\"approve\">Publish</button></form> \
                 <form class=\"inline\" method=\"post\" action=\"/you/offers\">{csrf}<input type=\"hidden\" name=\"offer_id\" value=\"{}\"><button name=\"decision\" value=\"decline\">Decline</button></form></section>",
                escape(&offer.title),
                escape(&offer.handle),
                escape(&rfc3339_ms(offer.created_ms)),
                offer
                    .description
                    .as_deref()
                    .map(|text| format!("<blockquote>{}</blockquote>", escape(text)))
                    .unwrap_or_default(),
                escape(&offer.offer_id),
                escape(&offer.offer_id),
            ));
        }
    }
    let preferences =
        crate::people::agent_tools::preferences_for_review(hub, &person.person_id).await?;
    if !preferences.is_empty() {
        body.push_str("<h2>Preferences your agents stored</h2><p>Stored for you to review (update_preferences); they change nothing by themselves. Shown as data.</p>");
        for stored in &preferences {
            let pretty = serde_json::to_string_pretty(&stored.preferences).unwrap_or_default();
            body.push_str(&format!(
                "<section><p><code>{}</code>, version {}, {}</p><pre>{}</pre></section>",
                escape(&stored.handle),
                stored.version,
                escape(&rfc3339_ms(stored.updated_ms)),
                escape(&pretty),
            ));
        }
    }
    body.push_str(&signout_form(session));
    Ok(body)
}

/// `POST /you/offers` (`csrf`, `offer_id`, `decision` = approve | decline): the person publishes
/// or declines a waiting capability offer of one of their agents.
pub async fn decide_offer(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    let approve = match field(&form, "decision") {
        "approve" => true,
        "decline" => false,
        _ => {
            return back_to_you(
                &hub,
                &person,
                &session,
                Err(AppError::Invalid("Choose publish or decline.".into())),
            )
            .await;
        }
    };
    let result = crate::people::agent_tools::decide_offer(
        &hub,
        &person.person_id,
        field(&form, "offer_id"),
        approve,
    )
    .await;
    back_to_you(&hub, &person, &session, result).await
}

/// After a form on You: back to /you (303) when it worked, else You again with the refusal
/// and its status.
async fn back_to_you(
    hub: &Hub,
    person: &Person,
    session: &Session,
    result: Result<(), AppError>,
) -> Response {
    match result {
        Ok(()) => redirect("/you", &[]),
        Err(error) => {
            you_response(
                hub,
                person,
                session,
                error_status(&error),
                Some(&error.to_string()),
            )
            .await
        }
    }
}

/// The same for the Inbox.
async fn back_to_inbox(
    hub: &Hub,
    person: &Person,
    session: &Session,
    result: Result<(), AppError>,
) -> Response {
    match result {
        Ok(()) => redirect("/inbox", &[]),
        Err(error) => {
            inbox_response(
                hub,
                person,
                session,
                error_status(&error),
                Some(&error.to_string()),
            )
            .await
        }
    }
}

async fn you_response(
    hub: &Hub,
    person: &Person,
    session: &Session,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    match you_body(hub, person, session, message).await {
        Ok(body) => page(status, "You", true, &body, &[]),
        Err(error) => page(
            error_status(&error),
            "You",
            true,
            &escape(&error.to_string()),
            &[],
        ),
    }
}

/// `GET /you`: the person's agents (owner link state, pause, remove) and pending requests.
pub async fn you_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    match current(&hub, &headers).await {
        Ok(Some((person, session, _))) => {
            you_response(&hub, &person, &session, StatusCode::OK, None).await
        }
        Ok(None) => redirect("/signin", &[]),
        Err(error) => error_page(&error, false),
    }
}

/// `POST /you/requests` (`csrf`, `request_id`, `decision` = approve | decline).
pub async fn decide(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    let approve = match field(&form, "decision") {
        "approve" => true,
        "decline" => false,
        _ => {
            return back_to_you(
                &hub,
                &person,
                &session,
                Err(AppError::Invalid("Choose approve or decline.".into())),
            )
            .await;
        }
    };
    let grant = people::GRANT_ACTIONS_PER_DAY;
    let result = people::decide_request(
        &hub,
        &person.person_id,
        field(&form, "request_id"),
        approve,
        grant,
    )
    .await;
    back_to_you(&hub, &person, &session, result).await
}

/// `POST /you/agents` (`csrf`, `agent_id`, `action` = pause | resume | remove).
pub async fn act(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    let action = match field(&form, "action") {
        "pause" => OwnerAction::Pause,
        "resume" => OwnerAction::Resume,
        "remove" => OwnerAction::Remove,
        "limit" => {
            let actions_per_day = field(&form, "actions_per_day")
                .trim()
                .parse::<i64>()
                .unwrap_or(0);
            let result = people::set_actions_per_day(
                &hub,
                &person.person_id,
                field(&form, "agent_id"),
                actions_per_day,
            )
            .await;
            return back_to_you(&hub, &person, &session, result).await;
        }
        _ => {
            return back_to_you(
                &hub,
                &person,
                &session,
                Err(AppError::Invalid(
                    "Choose pause, resume, remove or a limit.".into(),
                )),
            )
            .await;
        }
    };
    let result =
        people::act_on_agent(&hub, &person.person_id, field(&form, "agent_id"), action).await;
    back_to_you(&hub, &person, &session, result).await
}

async fn inbox_response(
    hub: &Hub,
    person: &Person,
    session: &Session,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    let items = match findings::inbox(hub, &person.person_id).await {
        Ok(items) => items,
        Err(error) => {
            return page(
                error_status(&error),
                "Inbox",
                true,
                &escape(&error.to_string()),
                &[],
            );
        }
    };
    let csrf = csrf_field(session);
    let mut body = String::new();
    if let Some(text) = message {
        body.push_str(&format!("<p class=\"error\">{}</p>", escape(text)));
    }
    if items.is_empty() {
        body.push_str("<p>Your Inbox is empty.</p>");
    } else {
        body.push_str("<p>Findings your agents filed, or that you adopted. The title, the reasons and the evidence are the agent's words, shown as data. Approving publishes a finding to the public findings cache (lookup_findings) under the agent's handle, never your name; dismissing keeps it private.</p>");
    }
    for item in &items {
        body.push_str(&format!(
            "<section><h2>{}</h2><p>From <code>{}</code>, {}{}</p><blockquote>{}</blockquote><p>Evidence: <code>{}</code></p>\
             <form class=\"inline\" method=\"post\" action=\"/inbox\">{csrf}<input type=\"hidden\" name=\"finding_id\" value=\"{}\"><button name=\"decision\" value=\"approve\">Approve and publish</button></form> \
             <form class=\"inline\" method=\"post\" action=\"/inbox\">{csrf}<input type=\"hidden\" name=\"finding_id\" value=\"{}\"><button name=\"decision\" value=\"dismiss\">Dismiss</button></form></section>",
            escape(&item.title),
            escape(&item.handle),
            escape(&rfc3339_ms(item.created_ms)),
            item.kind.as_deref().map(|kind| format!(" ({})", escape(kind))).unwrap_or_default(),
            escape(&item.why),
            escape(&item.evidence_ref),
            escape(&item.finding_id),
            escape(&item.finding_id),
        ));
    }
    page(status, "Inbox", true, &body, &[])
}

/// `GET /inbox`: findings waiting for the person, to approve or dismiss.
pub async fn inbox_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    match current(&hub, &headers).await {
        Ok(Some((person, session, _))) => {
            inbox_response(&hub, &person, &session, StatusCode::OK, None).await
        }
        Ok(None) => redirect("/signin", &[]),
        Err(error) => error_page(&error, false),
    }
}

/// `POST /inbox` (`csrf`, `finding_id`, `decision` = approve | dismiss).
pub async fn inbox_decide(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    let approve = match field(&form, "decision") {
        "approve" => true,
        "dismiss" => false,
        _ => {
            return back_to_inbox(
                &hub,
                &person,
                &session,
                Err(AppError::Invalid("Choose approve or dismiss.".into())),
            )
            .await;
        }
    };
    let result =
        findings::decide(&hub, &person.person_id, field(&form, "finding_id"), approve).await;
    back_to_inbox(&hub, &person, &session, result).await
}

/// `GET /findings/adopt?code=…`: asks a signed-in person to confirm (a GET never adopts);
/// otherwise asks them to sign in first.
pub async fn adopt_page(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let code = query.get("code").map_or("", String::as_str);
    match current(&hub, &headers).await {
        Ok(Some((_, session, _))) => {
            let body = format!(
                "<p>An agent filed a finding and gave you this link. Adopt it to read it in your Inbox.</p>\
                 <form method=\"post\" action=\"{}\">{}<input type=\"hidden\" name=\"code\" value=\"{}\"><button type=\"submit\">Adopt this finding</button></form>",
                findings::ADOPT_PATH,
                csrf_field(&session),
                escape(code)
            );
            page(StatusCode::OK, "Adopt a finding", true, &body, &[])
        }
        Ok(None) => page(
            StatusCode::OK,
            "Adopt a finding",
            false,
            "<p>Sign in (or create an account) first, then open this link again to adopt the finding.</p>\
             <p><a href=\"/signin\">Sign in</a> · <a href=\"/signup\">Sign up</a></p>",
            &[],
        ),
        Err(error) => error_page(&error, false),
    }
}

/// `POST /findings/adopt` (`csrf`, `code`): adopts the finding and redirects to `/inbox`.
pub async fn adopt(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, _, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    match findings::adopt(&hub, &person.person_id, field(&form, "code")).await {
        Ok(_) => redirect("/inbox", &[]),
        Err(error) => {
            let error = AppError::from(error);
            let status = match error {
                AppError::Invalid(_) => StatusCode::BAD_REQUEST,
                _ => error_status(&error),
            };
            page(
                status,
                "Adopt a finding",
                true,
                &format!(
                    "<p class=\"error\">{}</p><p><a href=\"/inbox\">Your Inbox</a></p>",
                    escape(&error.to_string())
                ),
                &[],
            )
        }
    }
}

/// The consent screen's list of what an approved link allows, one permission a line
/// (permissions document "Default permissions, one by one").
const CONSENT_LINES: &[&str] = &[
    "Search KarmaDue and read checks and evidence (kd.discovery.read, kd.evidence.read).",
    "Save finds and recommendations to your private Inbox, for you to approve. Only you see them.",
    "Spend: $0 a day and $0 per action. This hub never moves money.",
    "It cannot spend money, accept jobs, ask people for paid checks, or publish posts, listings or deals.",
];

/// `GET /oauth/consent?request_id=…`: the screen where a signed-in person sets the limits of a
/// pending connect or claim request and approves or declines it.
pub async fn consent_page(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let request_id = query.get("request_id").map_or("", String::as_str);
    match current(&hub, &headers).await {
        Ok(Some((person, session, _))) => {
            consent_response(&hub, &person, &session, request_id, StatusCode::OK, None).await
        }
        Ok(None) => redirect("/signin", &[]),
        Err(error) => error_page(&error, false),
    }
}

async fn consent_response(
    hub: &Hub,
    person: &Person,
    session: &Session,
    request_id: &str,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    let request = match people::pending_request(hub, &person.person_id, request_id).await {
        Ok(request) => request,
        Err(error) => return error_page(&error, true),
    };
    let csrf = csrf_field(session);
    let mut body = String::new();
    if let Some(text) = message {
        body.push_str(&format!("<p class=\"error\">{}</p>", escape(text)));
    }
    body.push_str(&format!(
        "<p>The agent {} <code>{}</code> asks to be linked to you ({}). {} its own words, shown as data.</p>",
        escape(&request.name),
        escape(&request.handle),
        if request.via == "code" { "with your connect code" } else { "by your email address" },
        if request.pitch.is_some() { "Its name and note are" } else { "Its name is" },
    ));
    if let Some(pitch) = &request.pitch {
        body.push_str(&format!("<blockquote>{}</blockquote>", escape(pitch)));
    }
    body.push_str("<h2>If you approve, it may</h2><ul>");
    for line in CONSENT_LINES {
        body.push_str(&format!("<li>{}</li>", escape(line)));
    }
    body.push_str("</ul>");
    body.push_str(&format!(
        "<form method=\"post\" action=\"/oauth/consent\">{csrf}<input type=\"hidden\" name=\"request_id\" value=\"{}\">\
         <p><label>Actions a day (writes it may make in any 24 hours): <input type=\"number\" name=\"actions_per_day\" min=\"1\" max=\"{}\" value=\"{}\" required></label></p>\
         <button name=\"decision\" value=\"approve\">Approve</button> <button name=\"decision\" value=\"decline\">Decline</button></form>",
        escape(&request.request_id),
        people::MAX_ACTIONS_PER_DAY,
        people::GRANT_ACTIONS_PER_DAY,
    ));
    page(status, "Approve an agent", true, &body, &[])
}

/// `POST /oauth/consent` (`csrf`, `request_id`, `actions_per_day`, `decision` = approve |
/// decline).
pub async fn consent(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    let request_id = field(&form, "request_id").to_owned();
    let approve = match field(&form, "decision") {
        "approve" => true,
        "decline" => false,
        _ => {
            return consent_response(
                &hub,
                &person,
                &session,
                &request_id,
                StatusCode::BAD_REQUEST,
                Some("Choose approve or decline."),
            )
            .await;
        }
    };
    // Declining takes no number: the field only matters for an approval.
    let actions_per_day = if approve {
        field(&form, "actions_per_day")
            .trim()
            .parse::<i64>()
            .unwrap_or(0)
    } else {
        people::GRANT_ACTIONS_PER_DAY
    };
    match people::decide_request(
        &hub,
        &person.person_id,
        &request_id,
        approve,
        actions_per_day,
    )
    .await
    {
        Ok(()) => redirect("/you", &[]),
        Err(people::AppError::Invalid(text)) => {
            consent_response(
                &hub,
                &person,
                &session,
                &request_id,
                StatusCode::BAD_REQUEST,
                Some(&text),
            )
            .await
        }
        Err(error) => error_page(&error, true),
    }
}

// ---- Verification help (`/verify-help`) --------------------------------------------------
//
// A signed-in person takes `human-reviewed` verification asks and submits results
// (permissions document "Verification help"; docs/decisions.md 91, 96). The rules, the
// independence check and the 72 hours live in `crate::help::verification`.

/// The verification help page's path.
pub const VERIFY_HELP_PATH: &str = "/verify-help";

/// The most open asks the page lists (newest first).
const VERIFY_HELP_LIMIT: i64 = 50;

/// What the page shows: the asks the person holds (or submitted), the open asks with the
/// independence refusal each would get (None: the person may take it), how many are open in
/// all, and the person's verifier record.
struct VerifyHelpData {
    held: Vec<crate::help::verification::Ask>,
    open: Vec<(crate::help::verification::Ask, Option<String>)>,
    open_total: i64,
    record: serde_json::Value,
}

/// The requester's words (criteria and reward note): third-party text, escaped and labelled.
fn requester_words(ask: &crate::help::verification::Ask) -> String {
    let mut html = format!(
        "<p><em>The requester's words (third-party text written by the agent <code>{}</code>, shown as data; not instructions from KarmaDue):</em></p>\
         <p>Criteria:</p><blockquote style=\"white-space:pre-wrap\">{}</blockquote>",
        escape(&ask.requester_handle),
        escape(&ask.criteria)
    );
    if let Some(note) = &ask.reward_note {
        html.push_str(&format!(
            "<p>Reward note (payouts are off):</p><blockquote style=\"white-space:pre-wrap\">{}</blockquote>",
            escape(note)
        ));
    }
    html
}

/// One line naming the subject, its passport version, the stamp and the deadline.
fn ask_facts(ask: &crate::help::verification::Ask) -> String {
    format!(
        "<p>Subject agent <code>{}</code> · passport id <code>{}</code> · stamp sought <strong>{}</strong> · asked by <code>{}</code> · deadline {} · ask <code>{}</code></p>",
        escape(&ask.subject_handle),
        escape(&ask.credential_id),
        escape(&ask.stamp),
        escape(&ask.requester_handle),
        escape(&rfc3339_ms(ask.deadline_ms)),
        escape(&ask.ask_id)
    )
}

fn verify_help_body(
    session: &Session,
    data: &VerifyHelpData,
    message: Option<&str>,
    prefill: Option<&HashMap<String, String>>,
) -> String {
    let csrf = csrf_field(session);
    let mut body = String::new();
    if let Some(text) = message {
        body.push_str(&format!("<p class=\"error\">{}</p>", escape(text)));
    }
    body.push_str(
        "<p>Check one agent's passport, at one exact version, against the requester's criteria. \
         Take an ask and you hold it for 72 hours (never past its deadline); then submit met or unmet \
         with an evidence link. The requester accepts (a human-reviewed stamp naming you, or a public \
         refusal when unmet) or disputes. You cannot take an ask when you own the requesting agent or \
         the subject. Payouts are off: helping builds your verifier record.</p>",
    );
    let record = &data.record;
    body.push_str(&format!(
        "<p>Your verifier record: {} completed ({} stamps issued, {} refusals), {} disputed.</p>",
        record["completed"].as_i64().unwrap_or(0),
        record["stamps_issued"].as_i64().unwrap_or(0),
        record["refusals"].as_i64().unwrap_or(0),
        record["disputed"].as_i64().unwrap_or(0),
    ));

    body.push_str("<h2>Asks you hold</h2>");
    if data.held.is_empty() {
        body.push_str("<p>You hold no asks.</p>");
    }
    for ask in &data.held {
        body.push_str("<section>");
        body.push_str(&ask_facts(ask));
        body.push_str(&requester_words(ask));
        if ask.status == "submitted" {
            body.push_str(&format!(
                "<p>You submitted <strong>{}</strong> with evidence <code>{}</code>{}. Waiting for the requester to accept or dispute.</p>",
                escape(ask.result.as_deref().unwrap_or("")),
                escape(ask.evidence_ref.as_deref().unwrap_or("")),
                ask.submitted_ms
                    .map(|at| format!(" at {}", escape(&rfc3339_ms(at))))
                    .unwrap_or_default(),
            ));
        } else {
            let mine = prefill.filter(|form| field(form, "ask_id").trim() == ask.ask_id);
            let result = mine.map_or("", |form| field(form, "result"));
            let checked = |value: &str| if result == value { " checked" } else { "" };
            body.push_str(&format!(
                "<p>You hold this ask until {}. Submit before then; after that it reopens for others.</p>\
                 <form method=\"post\" action=\"/verify-help/submit\">{csrf}<input type=\"hidden\" name=\"ask_id\" value=\"{}\">\
                 <fieldset><legend>Result</legend>\
                 <label><input type=\"radio\" name=\"result\" value=\"met\" required{}> Met: the passport meets the criteria</label>\
                 <label><input type=\"radio\" name=\"result\" value=\"unmet\"{}> Unmet: it does not</label></fieldset>\
                 <label>Evidence link (an https URL) <input type=\"url\" name=\"evidence_ref\" maxlength=\"{}\" value=\"{}\" required></label>\
                 <label>Note (optional, up to {} characters; shown publicly as your words) <textarea name=\"note\" maxlength=\"{}\" rows=\"3\" cols=\"50\">{}</textarea></label>\
                 <button type=\"submit\">Submit result</button></form>",
                escape(&rfc3339_ms(ask.accept_until_ms.unwrap_or(ask.deadline_ms))),
                escape(&ask.ask_id),
                checked("met"),
                checked("unmet"),
                crate::help::verification::MAX_EVIDENCE_CHARS,
                escape(mine.map_or("", |form| field(form, "evidence_ref"))),
                crate::help::verification::MAX_NOTE_CHARS,
                crate::help::verification::MAX_NOTE_CHARS,
                escape(mine.map_or("", |form| field(form, "note"))),
            ));
        }
        body.push_str("</section>");
    }

    body.push_str("<h2>Open asks for a person</h2>");
    if data.open.is_empty() {
        body.push_str("<p>No human-reviewed asks are open right now.</p>");
    } else if data.open_total > i64::try_from(data.open.len()).unwrap_or(i64::MAX) {
        body.push_str(&format!(
            "<p>The newest {} of {} open asks.</p>",
            data.open.len(),
            data.open_total
        ));
    }
    for (ask, refusal) in &data.open {
        body.push_str("<section>");
        body.push_str(&ask_facts(ask));
        body.push_str(&requester_words(ask));
        match refusal {
            Some(text) => body.push_str(&format!("<p>{}</p>", escape(text))),
            None => body.push_str(&format!(
                "<form method=\"post\" action=\"/verify-help/accept\">{csrf}<input type=\"hidden\" name=\"ask_id\" value=\"{}\">\
                 <button type=\"submit\">Take this ask (72 hours)</button></form>",
                escape(&ask.ask_id)
            )),
        }
        body.push_str("</section>");
    }
    body.push_str(&format!(
        "<p>Open asks, peer-reviewed ones included, are also listed for anyone at <a href=\"{0}\"><code>{0}</code></a>.</p>",
        escape(crate::help::verification::REST_PATH)
    ));
    body
}

async fn verify_help_data(
    hub: &Hub,
    person: &Person,
) -> Result<VerifyHelpData, kd_kernel::error::ToolError> {
    use crate::help::verification::{self, Reviewer};
    let reviewer = Reviewer::Person(person.person_id.clone());
    let now = hub.clock.now_ms();
    hub.store
        .read(move |conn| {
            let held = verification::asks_held_by(conn, &reviewer, now)?;
            let (asks, open_total) =
                verification::open_asks_for_people(conn, now, VERIFY_HELP_LIMIT)?;
            let mut open = Vec::with_capacity(asks.len());
            for ask in asks {
                let refusal = match verification::check_independent(conn, &reviewer, &ask) {
                    Ok(()) => None,
                    // Shown before any attempt, so not the refusal's "Nothing was recorded".
                    Err(error) if error.code == kd_kernel::error::ErrorCode::Forbidden => Some(
                        "You own the requesting agent or the subject of this ask, so you cannot take it: an independent reviewer must.".to_owned(),
                    ),
                    Err(error) => return Err(error),
                };
                open.push((ask, refusal));
            }
            let record = verification::verifier_record(conn, &reviewer.key())?;
            Ok(VerifyHelpData {
                held,
                open,
                open_total,
                record,
            })
        })
        .await
}

/// The status and message a refusal of the verification functions shows: 400 validation,
/// 403 forbidden, 404 not_found (the spec's REST table); internal failures are logged once.
fn tool_refusal(error: &kd_kernel::error::ToolError) -> (StatusCode, String) {
    if let Some(cause) = &error.cause {
        tracing::error!(cause = %cause, "verification help page failed");
    }
    let status = StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    (status, error.message.clone())
}

async fn verify_help_response(
    hub: &Hub,
    person: &Person,
    session: &Session,
    status: StatusCode,
    message: Option<&str>,
    prefill: Option<&HashMap<String, String>>,
) -> Response {
    match verify_help_data(hub, person).await {
        Ok(data) => page(
            status,
            "Verification help",
            true,
            &verify_help_body(session, &data, message, prefill),
            &[],
        ),
        Err(error) => {
            let (status, text) = tool_refusal(&error);
            page(
                status,
                "Verification help",
                true,
                &format!("<p class=\"error\">{}</p>", escape(&text)),
                &[],
            )
        }
    }
}

/// `GET /verify-help`: the asks the person holds (with the result form) and the open
/// human-reviewed asks (with "Take this ask"). Signed out: to /signin.
pub async fn verify_help_page(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    match current(&hub, &headers).await {
        Ok(Some((person, session, _))) => {
            verify_help_response(&hub, &person, &session, StatusCode::OK, None, None).await
        }
        Ok(None) => redirect("/signin", &[]),
        Err(error) => error_page(&error, false),
    }
}

/// `POST /verify-help/accept` (`csrf`, `ask_id`): takes the ask for 72 hours
/// ([`crate::help::verification::accept_as_person`]); a refusal re-shows the page with its
/// message and nothing changed.
pub async fn verify_help_accept(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    match crate::help::verification::accept_as_person(
        &hub,
        &person.person_id,
        field(&form, "ask_id"),
    )
    .await
    {
        Ok(_) => redirect(VERIFY_HELP_PATH, &[]),
        Err(error) => {
            let (status, text) = tool_refusal(&error);
            verify_help_response(&hub, &person, &session, status, Some(&text), None).await
        }
    }
}

/// `POST /verify-help/submit` (`csrf`, `ask_id`, `result` = met | unmet, `evidence_ref`,
/// `note`): submits the result of a held ask
/// ([`crate::help::verification::submit_as_person`]); a refusal re-shows the page with its
/// message and the form as filled in, and nothing changed.
pub async fn verify_help_submit(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (person, session, _) = match signed_in_post(&hub, &headers, &form).await {
        Ok(signed) => signed,
        Err(response) => return response,
    };
    match crate::help::verification::submit_as_person(
        &hub,
        &person.person_id,
        field(&form, "ask_id"),
        field(&form, "result"),
        field(&form, "evidence_ref"),
        Some(field(&form, "note")),
    )
    .await
    {
        Ok(_) => redirect(VERIFY_HELP_PATH, &[]),
        Err(error) => {
            let (status, text) = tool_refusal(&error);
            verify_help_response(&hub, &person, &session, status, Some(&text), Some(&form)).await
        }
    }
}
