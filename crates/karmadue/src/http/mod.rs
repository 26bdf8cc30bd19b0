//! HTTP adapters (DESIGN "http adapters"): each turns requests into calls of
//! [`kd_kernel::Kernel::call`] and presents the result for its surface. No rules live here.
//!
//! - [`mcp`]: `POST /functions/v1/mcp`, Streamable HTTP with JSON responses, both MCP eras.
//! - [`rest`]: `/functions/v1/public-api/...`, the same tools over plain REST.
//! - [`pages`]: every HTML page, through one layout: `/`, the docs, the resource page and
//!   badge, the forum's Human View, and the people's app (`/signup`, `/signin`, `/you`, …).
//! - [`observe`]: the request id and `tracing` span of every request, the HTTP metrics, and
//!   `/metrics`.
//! - [`openapi`]: the OpenAPI 3.1 document of every REST route
//!   (`/functions/v1/public-api/openapi.json`), built from the tool registry and the router.

pub mod cancel;
pub mod connector;
pub mod form_token;
pub mod mcp;
mod mcp_era;
pub mod mcp_reply;
pub mod oauth;
pub mod observe;
pub mod openapi;
pub mod origin;
pub mod pages;
pub mod rest;
pub mod server;
pub mod shares;
pub mod transparency;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::routing::{MethodRouter, get, post};

use crate::hub::Hub;

use kd_kernel::RequestAuth;
use pages::{account, consent, forum, forum_forms, home, inbox, resource, verify_help, you};

/// A router that keeps the paths it was given, so the OpenAPI test can hold the document
/// against every route ([`route_paths`]).
struct Listed {
    router: Router<Arc<Hub>>,
    paths: Vec<&'static str>,
}

impl Listed {
    fn route(mut self, path: &'static str, handler: MethodRouter<Arc<Hub>>) -> Self {
        self.paths.push(path);
        self.router = self.router.route(path, handler);
        self
    }
}

/// The hub's own routes (Ronin's are nested under its mount by [`router`], unless Ronin has a
/// listen address of its own: [`ronin_router`]).
fn routes(hub: &Hub) -> Listed {
    let mut router = Listed {
        router: Router::new(),
        paths: Vec::new(),
    };
    if hub.config.metrics {
        router = router.route(observe::METRICS_PATH, get(observe::metrics));
    }
    for route in &rest::QUERY_ROUTES {
        router = router.route(
            route.path,
            get(move |state, request_id, peer, query, headers| {
                rest::query_route(route, state, request_id, peer, query, headers)
            }),
        );
    }
    let router = api_routes(router);
    let router = oauth_routes(router);
    let router = page_routes(router);
    let router = person_routes(router);
    let router = linkdbots_routes(router);
    log_routes(router)
}

/// The MCP endpoint and the public REST API.
fn api_routes(router: Listed) -> Listed {
    router
        .route(
            mcp::PATH,
            post(mcp::post_endpoint)
                .get(mcp::method_not_allowed)
                .delete(mcp::method_not_allowed)
                .options(mcp::options),
        )
        .route(
            "/functions/v1/public-api/v1/tools/{name}",
            post(rest::call_tool),
        )
        .route(
            "/functions/v1/public-api/v1/verify/{agent_id}",
            get(rest::verify),
        )
        .route(
            "/functions/v1/public-api/v1/preflight",
            post(rest::preflight),
        )
        .route("/functions/v1/public-api/v1/tiers", get(rest::tiers))
}

/// The OAuth connector (issue 12): its MCP endpoint and alias, the RFC 9728 and RFC 8414
/// documents, registration, token, revocation and `/oauth/authorize`.
fn oauth_routes(mut router: Listed) -> Listed {
    let endpoint = |handler: MethodRouter<Arc<Hub>>| {
        handler
            .get(mcp::method_not_allowed)
            .delete(mcp::method_not_allowed)
            .options(mcp::options)
    };
    router = router
        .route(
            crate::connector::CONNECTOR_PATH,
            endpoint(post(connector::connector_endpoint)),
        )
        .route(
            crate::connector::ALIAS_PATH,
            endpoint(post(connector::alias_endpoint)),
        );
    for (path, suffix) in oauth::PROTECTED_RESOURCE_PATHS {
        router = router.route(
            path,
            get(
                move |axum::extract::State(hub): axum::extract::State<Arc<Hub>>| async move {
                    oauth::protected_resource_response(&hub, suffix)
                },
            )
            .options(oauth::preflight),
        );
    }
    for path in oauth::AUTHORIZATION_SERVER_PATHS {
        router = router.route(
            path,
            get(oauth::authorization_server_document).options(oauth::preflight),
        );
    }
    router
        .route(
            crate::connector::REGISTER_PATH,
            post(oauth::register)
                .options(oauth::preflight)
                .fallback(oauth::post_only),
        )
        .route(
            crate::connector::TOKEN_PATH,
            post(oauth::token)
                .options(oauth::preflight)
                .fallback(oauth::post_only),
        )
        .route(
            crate::connector::REVOKE_PATH,
            post(oauth::revoke)
                .options(oauth::preflight)
                .fallback(oauth::post_only),
        )
        .route(
            crate::connector::AUTHORIZE_PATH,
            get(pages::authorize::authorize_page).post(pages::authorize::authorize_decide),
        )
        .route(
            crate::connector::permission::ADD_PERMISSION_PATH,
            get(pages::add_permission::add_permission_page)
                .post(pages::add_permission::add_permission_decide),
        )
}

/// The public pages and documents (resources, badges, the forum, keys, the log head, docs).
fn page_routes(router: Listed) -> Listed {
    router
        .route(resource::BADGE_PATH, get(resource::badge))
        .route(resource::PAGE_PATH, get(resource::resource_page))
        .route("/.well-known/jwks.json", get(home::jwks))
        .route("/llms.txt", get(home::llms_txt))
        .route(forum::FORUM_PATH, get(forum::forum_page))
        .route(forum::THREAD_PATH, get(forum::thread_page))
        .route(forum::REPLY_PATH, post(forum_forms::reply))
        .route(forum::REPORT_PATH, post(forum_forms::report))
        .route(forum::CONFIRM_PATH, post(forum_forms::confirm))
        .route(
            "/functions/v1/public-api/.well-known/jwks.json",
            get(home::jwks),
        )
        .route(home::LOG_HEAD_PATH, get(home::log_head))
        .route(
            "/functions/v1/public-api/.well-known/kd-log-head.json",
            get(home::log_head),
        )
        .route("/functions/v1/docs/docs/{page}", get(home::doc_page))
}

/// A person's pages: sign-up and sign-in, connect, You, consent, the inbox, verification help.
fn person_routes(router: Listed) -> Listed {
    router
        .route("/signup", get(account::signup_page).post(account::signup))
        .route(account::SENT_PATH, get(account::signup_sent))
        .route(
            crate::people::CONFIRM_PATH,
            get(account::confirm_page).post(account::confirm),
        )
        .route("/signin", get(account::signin_page).post(account::signin))
        .route("/signout", post(account::signout))
        .route(
            "/connect",
            get(account::connect_page).post(account::connect_mint),
        )
        .route("/you", get(you::you_page))
        .route(
            pages::connected_apps::APPS_PATH,
            get(pages::connected_apps::apps_page).post(pages::connected_apps::remove_app),
        )
        .route(
            "/oauth/consent",
            get(consent::consent_page).post(consent::consent),
        )
        .route("/you/requests", post(you::decide))
        .route("/you/agents", post(you::act))
        .route("/you/offers", post(you::decide_offer))
        .route("/inbox", get(inbox::inbox_page).post(inbox::inbox_decide))
        .route(
            verify_help::VERIFY_HELP_PATH,
            get(verify_help::verify_help_page),
        )
        .route(
            pages::standards::STANDARDS_PATH,
            get(pages::standards::standards_page),
        )
        .route(pages::jobs::JOBS_PATH, get(pages::jobs::jobs_page))
        .route("/you/jobs/take", post(pages::jobs::jobs_take))
        .route("/you/jobs/complete", post(pages::jobs::jobs_complete))
        .route(pages::market::MARKET_PATH, get(pages::market::market_page))
        .route("/you/market/publish", post(pages::market::market_publish))
        .route("/you/market/retract", post(pages::market::market_retract))
        .route("/you/market/proposal", post(pages::market::market_proposal))
        .route("/you/market/handoff", post(pages::market::market_handoff))
        .route("/verify-help/accept", post(verify_help::verify_help_accept))
        .route("/verify-help/submit", post(verify_help::verify_help_submit))
        .route(
            crate::people::findings::ADOPT_PATH,
            get(inbox::adopt_page).post(inbox::adopt),
        )
}

/// The Linkdbots dashboard's pages (`pages::linkdbots`, decision 330): HTML under the
/// Linkdbots mount (static paths, matched before the nested router's), and its JSON form under
/// `/you/linkdbots/`.
fn linkdbots_routes(router: Listed) -> Listed {
    use pages::linkdbots::{self as lk, agents, claim, connect, host_keys, json, queue, teams};
    router
        .route(lk::DASH_CONNECT, get(connect::page).post(connect::mint))
        .route(lk::DASH_QUEUE, get(queue::page).post(queue::decide))
        .route(lk::DASH_AGENTS, get(agents::page).post(agents::control))
        .route(
            lk::DASH_HOST_KEYS,
            get(host_keys::page).post(host_keys::act),
        )
        .route(lk::DASH_TEAMS, get(teams::page).post(teams::act))
        .route(
            kd_linkdbots::register::CLAIM_PATH,
            get(claim::claim_page).post(claim::claim),
        )
        .route(
            kd_linkdbots::connect::CONNECT_PATH,
            get(claim::roster_page).post(claim::roster),
        )
        .route(lk::QUEUE_PATH, get(json::queue).post(json::decide))
        .route(lk::CLAIM_PATH, get(json::claim_page).post(json::claim))
        .route(lk::AGENTS_PATH, get(json::agents).post(json::control))
        .route(lk::TEAMS_PATH, get(json::teams).post(json::make_team))
        .route(
            lk::CONNECT_PATH,
            get(json::connect_page).post(json::connect),
        )
        .route(
            pages::linkdbots_categories::CATEGORIES_PATH,
            get(pages::linkdbots_categories::page).post(pages::linkdbots_categories::propose),
        )
}

/// The OpenAPI document, the transparency log and the front page.
fn log_routes(router: Listed) -> Listed {
    router
        .route(openapi::PATH, get(openapi::serve))
        .route(transparency::CHECKPOINT_PATH, get(transparency::checkpoint))
        .route(
            transparency::LOG_CHECKPOINT_PATH,
            get(transparency::checkpoint),
        )
        .route(transparency::TILE_PATH, get(transparency::tile))
        .route(transparency::INCLUSION_PATH, get(transparency::inclusion))
        .route(
            transparency::CONSISTENCY_PATH,
            get(transparency::consistency),
        )
        .route("/", get(home::index))
}

/// Every path the routers of `hub` serve, Ronin's and Linkdbots' with their mount prefix
/// (Ronin's at the root when it has a listen address of its own), in OpenAPI's path syntax
/// (which is axum's).
pub fn route_paths(hub: &Hub) -> Vec<String> {
    let mut paths: Vec<String> = routes(hub).paths.into_iter().map(str::to_owned).collect();
    paths.extend(
        kd_ronin::doors::route_paths()
            .into_iter()
            .map(|path| hub.ronin.mounted(path)),
    );
    paths.extend(
        kd_linkdbots::doors::route_paths()
            .into_iter()
            .chain(kd_linkdbots::doors::page_paths())
            .map(|path| format!("{}{path}", kd_linkdbots::MOUNT)),
    );
    paths
}

/// The whole router of a hub process's listen address: the hub's routes, Linkdbots' under
/// its mount and Ronin's under [`kd_ronin::Ronin::mount`], except when Ronin has a listen
/// address of its own (then it lives only there, [`ronin_router`]: docs/decisions.md 389).
pub fn router(hub: Arc<Hub>) -> Router {
    let mut router = routes(&hub).router;
    if hub.ronin.own_url.is_none() {
        router = router.nest(&hub.ronin.mount, kd_ronin::router(hub.ronin.clone()));
    }
    let router = router
        .nest(
            kd_linkdbots::MOUNT,
            kd_linkdbots::router(hub.linkdbots.clone()),
        )
        .fallback(home::not_found);
    edge_layers(router, hub)
}

/// The router of Ronin's own listen address (`--ronin-listen`): Ronin's routes at the root,
/// exactly as its document shows them, under the same edge layers as [`router`] (body limit,
/// headers, trusted proxies, request ids and metrics).
pub fn ronin_router(hub: Arc<Hub>) -> Router {
    edge_layers(kd_ronin::router(hub.ronin.clone()), hub)
}

/// The layers every request of a hub process passes, on either listen address.
fn edge_layers(router: Router<Arc<Hub>>, hub: Arc<Hub>) -> Router {
    let limit = hub.config.max_body_bytes;
    router
        .layer(DefaultBodyLimit::max(limit))
        // Every HTML page sets this policy through its layout; any other response (the
        // Markdown docs, a 404) gets the same one.
        .layer(
            tower_http::set_header::SetResponseHeaderLayer::if_not_present(
                axum::http::header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(pages::layout::CONTENT_SECURITY_POLICY),
            ),
        )
        // No response is ever to be sniffed into another type (third-party text is data).
        .layer(
            tower_http::set_header::SetResponseHeaderLayer::if_not_present(
                axum::http::header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        )
        // Before any handler reads the client's address: behind a trusted reverse proxy it
        // comes from X-Forwarded-For.
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&hub),
            forwarded_client,
        ))
        // Outermost: the request id and span cover everything above.
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&hub),
            observe::trace_request,
        ))
        .with_state(hub)
}

/// Replaces the connection's address (`ConnectInfo`, which every handler reads for the
/// per-address limits) by the client's when the request came from a trusted reverse proxy
/// ([`kd_core::config::TrustedProxies::client`]). With no trusted proxy configured the request
/// passes untouched and `X-Forwarded-For` means nothing.
async fn forwarded_client(
    axum::extract::State(hub): axum::extract::State<Arc<Hub>>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let proxies = &hub.config.trusted_proxies;
    if !proxies.is_empty()
        && let Some(axum::extract::ConnectInfo(peer)) = request
            .extensions()
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .copied()
    {
        // Lossy, never skipped: a line with a byte that is not ASCII keeps its place (and
        // ends the walk as garbage), so it cannot move an earlier, client-written line into
        // the position of the hop the proxy appended.
        let forwarded: Vec<String> = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .collect();
        let client = proxies.client(peer.ip(), forwarded.iter().map(String::as_str));
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(SocketAddr::new(
                client,
                peer.port(),
            )));
    }
    next.run(request).await
}

/// Reads the signature headers, an `Authorization: Bearer` owner session and the peer address
/// into a [`RequestAuth`].
pub fn request_auth(headers: &HeaderMap, peer: Option<SocketAddr>) -> RequestAuth {
    // Lossy, so that a non-ASCII nonce or signature is refused for what it is (bad_nonce,
    // bad_signature) rather than read as missing.
    let text = |name: &str| {
        headers
            .get(name)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
    };
    RequestAuth {
        signature: text("x-kd-signature"),
        timestamp: text("x-kd-timestamp"),
        nonce: text("x-kd-nonce"),
        agent_header: text("x-karmadue-agent"),
        ip: peer.map(|addr| addr.ip()),
        bearer: text("authorization").and_then(|value| {
            let (scheme, token) = value.split_once(' ')?;
            let token = token.trim();
            (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty())
                .then(|| kd_core::config::Secret::new(token))
        }),
        connector: None,
        // Two visas are refused as one that is not a visa (joined, they are not three parts),
        // so a proxy and the hub cannot disagree on which one counts.
        visa: {
            let visas: Vec<String> = headers
                .get_all(kd_protocol::visa::HEADER)
                .iter()
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .collect();
            (!visas.is_empty()).then(|| visas.join(","))
        },
    }
}

/// Adds `x-request-id` to a header map.
pub fn set_request_id(headers: &mut HeaderMap, request_id: &str) {
    if let Ok(value) = HeaderValue::from_str(request_id) {
        headers.insert("x-request-id", value);
    }
}

/// `Content-Type: application/json`.
pub fn json_content_type(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
}
