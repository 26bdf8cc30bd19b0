//! `/oauth/authorize` (issue 12; spec "Using KarmaDue from Claude or ChatGPT", permissions
//! document "Default permissions, one by one"): the authorization request is checked, a
//! visitor is sent to sign in (and back here after), and a signed-in person sees the consent
//! screen listing each default permission one by one, with the switches for
//! kd.outcomes.write (pre-set on), kd.listings.write and kd.proposals.write (off). Approving
//! redirects to the client with a code; declining with `access_denied`. Every redirect to the
//! client carries `iss` (RFC 9207), errors too. A request whose client or redirect URI is not
//! known is never redirected: the person sees why (OAuth 2.1 §4.1.2.1).

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::html;

use super::account::csrf_field;
use super::layout::{Data, app_page, redirect_to};
use super::session::{SignedIn, SignedInForm, Visitor};
use crate::connector::{
    self, ACTIONS_PER_DAY, AuthRequest, ConnectorError, SCOPE_LISTINGS, SCOPE_OUTCOMES,
    SCOPE_PROPOSALS,
};
use crate::hub::Hub;

/// The lines of the consent screen that are always granted, one permission a line.
const ALWAYS: &[&str] = &[
    "Search KarmaDue: tools, connectors, repos, datasets, public listings, Arena challenges and forum threads (kd.discovery.read).",
    "Read what was checked: claims, evidence links, passports and scores (kd.evidence.read).",
    "Bring you finds: file a find in your own KarmaDue Inbox for you to approve, withdraw its own find, and read its own history.",
    "Spend: $0. A connected app can never spend money, accept a job, approve terms for you, register or rotate keys, invite other agents, or join crews.",
];

/// The switches: (form field, scope, words, pre-set on).
pub(super) const SWITCHES: [(&str, &str, &str, bool); 3] = [
    (
        "outcomes",
        SCOPE_OUTCOMES,
        "Report whether a tool it checked worked (one short report per check; shown as reliability reports from agents, never as a safety or trust check).",
        true,
    ),
    (
        "listings",
        SCOPE_LISTINGS,
        "Post offers, requests, forum threads and replies in your name, and retract or report posts.",
        false,
    ),
    (
        "proposals",
        SCOPE_PROPOSALS,
        "Draft deal terms with others and answer theirs. You still approve every deal.",
        false,
    ),
];

/// Percent-encodes `text` for a URL query (RFC 3986 unreserved kept).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// 303 to the client's redirect URI with `pairs`, `state` when the request had one, and `iss`.
fn back_to_client(hub: &Hub, request: &AuthRequest, pairs: &[(&str, &str)]) -> Response {
    let mut query: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{key}={}", encode(value)))
        .collect();
    if let Some(state) = &request.state {
        query.push(format!("state={}", encode(state)));
    }
    query.push(format!("iss={}", encode(&connector::issuer(&hub.config))));
    let join = if request.redirect_uri.contains('?') {
        '&'
    } else {
        '?'
    };
    redirect_to(&format!(
        "{}{join}{}",
        request.redirect_uri,
        query.join("&")
    ))
}

fn error_to_client(hub: &Hub, request: &AuthRequest, error: &ConnectorError) -> Response {
    back_to_client(
        hub,
        request,
        &[
            ("error", error.oauth_code()),
            ("error_description", &error.description()),
        ],
    )
}

/// The refusal shown to the person when the client cannot be redirected to: 500 for a store
/// failure, 429 with `Retry-After` past a rate limit (docs/decisions.md 425), else 400.
fn not_redirectable(error: &ConnectorError, signed_in: bool) -> Response {
    let status = match error {
        ConnectorError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ if error.retry_after_s().is_some() => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::BAD_REQUEST,
    };
    let mut response = app_page(
        status,
        "This connection request does not work",
        signed_in,
        &html! {
            p.error { (error.description()) }
            p { "Nothing was shared. Start connecting again from your app." }
        },
    );
    if let Some(retry_after_s) = error.retry_after_s() {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
    }
    response
}

/// The longest `state` a client may send (docs/decisions.md 349): it is echoed in the
/// redirect's `Location`.
pub const MAX_STATE: usize = 1_000;

/// The request's checks: the client and redirect URI (shown on the page when they fail),
/// then the rest (sent back to the client). `Ok` holds the client's name and the resource.
async fn checked(
    hub: &Hub,
    request: &AuthRequest,
    signed_in: bool,
    ip: std::net::IpAddr,
) -> Result<(String, String), Response> {
    if request
        .state
        .as_ref()
        .is_some_and(|state| state.len() > MAX_STATE)
    {
        let error = ConnectorError::InvalidRequest(
            "state is at most 1,000 characters (it travels back in the redirect).".into(),
        );
        return Err(not_redirectable(&error, signed_in));
    }
    let client = connector::check_client(hub, &request.client_id, &request.redirect_uri, Some(ip))
        .await
        .map_err(|error| not_redirectable(&error, signed_in))?;
    let resource = connector::check_request(&hub.config, request)
        .map_err(|error| error_to_client(hub, request, &error))?;
    Ok((client.client_name, resource))
}

/// `GET /oauth/authorize`: checks the request; a visitor goes to `/signin` and comes back
/// here; a signed-in person sees the consent screen.
pub async fn authorize_page(
    State(hub): State<Arc<Hub>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    Visitor(visitor): Visitor,
    query: Result<Query<AuthRequest>, QueryRejection>,
    uri: axum::http::Uri,
) -> Response {
    let request = match query {
        Ok(Query(request)) => request,
        Err(rejection) => {
            // A repeated or malformed parameter (OAuth 2.1 §4.1.2.1: shown, not redirected).
            let words = rejection.body_text();
            let words = words
                .strip_prefix("Failed to deserialize query string: ")
                .unwrap_or(&words);
            let error = ConnectorError::InvalidRequest(format!(
                "The request's parameters cannot be read: {words}."
            ));
            return not_redirectable(&error, visitor.is_some());
        }
    };
    let (client_name, _) = match checked(&hub, &request, visitor.is_some(), peer.ip()).await {
        Ok(checked) => checked,
        Err(response) => return response,
    };
    let Some(signed) = visitor else {
        let back = uri
            .path_and_query()
            .map_or(connector::AUTHORIZE_PATH, |path| path.as_str());
        return redirect_to(&format!("/signin?next={}", encode(back)));
    };
    consent_screen(&request, &client_name, &signed)
}

/// Whether a switch starts on: when it is on by default, or when the app's request names its
/// scope (docs/decisions.md 349). The person decides either way.
fn preselected(request: &AuthRequest, scope: &str, default: bool) -> bool {
    default
        || request
            .scope
            .as_deref()
            .is_some_and(|asked| asked.split_whitespace().any(|asked| asked == scope))
}

fn consent_screen(request: &AuthRequest, client_name: &str, signed: &SignedIn) -> Response {
    let host = request
        .redirect_uri
        .split_once("://")
        .map_or("", |(_, rest)| rest.split(['/', '?']).next().unwrap_or(""));
    let hidden = [
        ("response_type", request.response_type.as_str()),
        ("client_id", &request.client_id),
        ("redirect_uri", &request.redirect_uri),
        ("code_challenge", &request.code_challenge),
        ("code_challenge_method", &request.code_challenge_method),
        ("state", request.state.as_deref().unwrap_or("")),
        ("scope", request.scope.as_deref().unwrap_or("")),
        ("resource", request.resource.as_deref().unwrap_or("")),
    ];
    let body = html! {
        p {
            "The app " strong { (Data(client_name)) } " (it will return to " code { (Data(host)) }
            ") asks to connect to your KarmaDue account. Its name is its own words, shown as data."
        }
        @if let Some(document_host) = connector::cimd::document_host(&request.client_id) {
            // Two apps may share a name: the host of its metadata document tells them apart
            // (docs/decisions.md 424).
            p.document-host {
                "It describes itself in a document on " code { (Data(&document_host)) } "."
            }
        }
        h2 { "If you approve, it may" }
        form method="post" action=(connector::AUTHORIZE_PATH) {
            (csrf_field(&signed.session))
            @for (name, value) in hidden {
                input type="hidden" name=(name) value=(value);
            }
            ul {
                @for line in ALWAYS { li { (line) } }
                @for (field, scope, words, on) in SWITCHES {
                    li {
                        label {
                            input type="checkbox" name=(field) value="on"
                                checked[preselected(request, scope, on)];
                            " " (words) " (" (scope) ")"
                        }
                    }
                }
                li { "Actions a day: up to " (ACTIONS_PER_DAY) "." }
            }
            button name="decision" value="approve" { "Approve" } " "
            button name="decision" value="deny" { "Deny" }
        }
    };
    let mut response = app_page(StatusCode::OK, "Connect an app", true, &body);
    // The approval redirects to the client: let the form's redirect leave this origin.
    let origin = request
        .redirect_uri
        .split_once("://")
        .map(|(scheme, _)| format!("{scheme}://{host}"));
    if let Some(origin) = origin
        && let Ok(value) = HeaderValue::from_str(&super::layout::CONTENT_SECURITY_POLICY.replace(
            "form-action 'self'",
            &format!("form-action 'self' {origin}"),
        ))
    {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// `POST /oauth/authorize` (`csrf`, the request's fields, the switches `outcomes`,
/// `listings`, `proposals`, `decision` = approve | deny): the request is checked again; deny
/// redirects `access_denied`, approve redirects with a code.
pub async fn authorize_decide(
    State(hub): State<Arc<Hub>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    posted: SignedInForm,
) -> Response {
    let SignedInForm { signed, form } = posted;
    let optional = |name: &str| Some(form.get(name).to_owned()).filter(|value| !value.is_empty());
    let request = AuthRequest {
        response_type: form.get("response_type").to_owned(),
        client_id: form.get("client_id").to_owned(),
        redirect_uri: form.get("redirect_uri").to_owned(),
        state: optional("state"),
        code_challenge: form.get("code_challenge").to_owned(),
        code_challenge_method: form.get("code_challenge_method").to_owned(),
        scope: optional("scope"),
        resource: optional("resource"),
    };
    let resource = match checked(&hub, &request, true, peer.ip()).await {
        Ok((_, resource)) => resource,
        Err(response) => return response,
    };
    match form.get("decision") {
        "approve" => {}
        "deny" => {
            return back_to_client(
                &hub,
                &request,
                &[
                    ("error", "access_denied"),
                    ("error_description", "The person declined."),
                ],
            );
        }
        _ => {
            return not_redirectable(
                &ConnectorError::InvalidRequest("Choose approve or deny.".into()),
                true,
            );
        }
    }
    let switched_on: Vec<&str> = SWITCHES
        .iter()
        .filter(|(field, ..)| form.get(field) == "on")
        .map(|(_, scope, ..)| *scope)
        .collect();
    match connector::approve(
        &hub,
        &signed.person.person_id,
        &request,
        resource,
        &switched_on,
    )
    .await
    {
        Ok(code) => back_to_client(&hub, &request, &[("code", &code)]),
        Err(error) => not_redirectable(&error, true),
    }
}
