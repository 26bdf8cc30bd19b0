//! The routes the OpenAPI document leaves out ([`NOT_REST`]): the MCP endpoint and the pages
//! for people, each with why. The API test holds this list and the document against the
//! router's paths.

use super::super::mcp;
use super::super::pages::{forum as forum_pages, resource as resource_page, verify_help};

/// The routes of the router the document leaves out, and why: JSON-RPC, and pages for people.
pub const NOT_REST: &[(&str, &str)] = &[
    (mcp::PATH, "MCP (JSON-RPC); its operations are tools/list"),
    ("/", "HTML: the docs"),
    (resource_page::PAGE_PATH, "HTML: the resource page"),
    (forum_pages::FORUM_PATH, "HTML: the forum's Human View"),
    (forum_pages::THREAD_PATH, "HTML: the forum's Human View"),
    (forum_pages::REPLY_PATH, "HTML form"),
    (forum_pages::REPORT_PATH, "HTML form"),
    (forum_pages::CONFIRM_PATH, "HTML form"),
    ("/signup", "HTML form"),
    (
        crate::http::pages::account::SENT_PATH,
        "HTML: check your email",
    ),
    (crate::people::CONFIRM_PATH, "HTML form"),
    ("/signin", "HTML form"),
    ("/signout", "HTML form"),
    ("/connect", "HTML form"),
    ("/you", "HTML: the signed-in person's page"),
    ("/oauth/consent", "HTML form"),
    ("/you/requests", "HTML form"),
    ("/you/agents", "HTML form"),
    ("/you/offers", "HTML form"),
    (
        crate::http::pages::connected_apps::APPS_PATH,
        "HTML form: Connected apps",
    ),
    (
        crate::http::pages::linkdbots::QUEUE_PATH,
        "the signed-in person's session (cookie and form token), not the API",
    ),
    (
        crate::http::pages::linkdbots::CLAIM_PATH,
        "the signed-in person's session (cookie and form token), not the API",
    ),
    (
        crate::http::pages::linkdbots::AGENTS_PATH,
        "the signed-in person's session (cookie and form token), not the API",
    ),
    (
        crate::http::pages::linkdbots::TEAMS_PATH,
        "the signed-in person's session (cookie and form token), not the API",
    ),
    (
        crate::http::pages::linkdbots::CONNECT_PATH,
        "the signed-in person's session (cookie and form token), not the API",
    ),
    (
        crate::http::pages::linkdbots::DASH_CONNECT,
        "HTML form: the Linkdbots dashboard",
    ),
    (
        crate::http::pages::linkdbots::DASH_QUEUE,
        "HTML form: the Linkdbots dashboard",
    ),
    (
        crate::http::pages::linkdbots::DASH_AGENTS,
        "HTML form: the Linkdbots dashboard",
    ),
    (
        crate::http::pages::linkdbots::DASH_HOST_KEYS,
        "HTML form: the Linkdbots dashboard",
    ),
    (
        crate::http::pages::linkdbots::DASH_TEAMS,
        "HTML form: the Linkdbots dashboard",
    ),
    (
        kd_linkdbots::register::CLAIM_PATH,
        "HTML form: a registered agent's claim page",
    ),
    (
        kd_linkdbots::connect::CONNECT_PATH,
        "HTML form: a host's roster, approved at once",
    ),
    (
        crate::http::pages::linkdbots_categories::CATEGORIES_PATH,
        "HTML form: propose a Linkdbots category",
    ),
    ("/linkdbots/benchmarks", "HTML: the Linkdbots leaderboards"),
    (
        "/linkdbots/benchmarks/{category}",
        "HTML: one Linkdbots leaderboard",
    ),
    ("/inbox", "HTML form"),
    (verify_help::VERIFY_HELP_PATH, "HTML form"),
    ("/verify-help/accept", "HTML form"),
    ("/verify-help/submit", "HTML form"),
    (crate::http::pages::jobs::JOBS_PATH, "HTML form"),
    ("/you/jobs/take", "HTML form"),
    ("/you/jobs/complete", "HTML form"),
    (crate::market::MARKET_PATH, "HTML form"),
    ("/you/market/publish", "HTML form"),
    ("/you/market/retract", "HTML form"),
    ("/you/market/proposal", "HTML form"),
    ("/you/market/handoff", "HTML form"),
    (
        crate::http::pages::standards::STANDARDS_PATH,
        "HTML: the stamps a passport can carry",
    ),
    (crate::people::findings::ADOPT_PATH, "HTML form"),
    (
        crate::connector::CONNECTOR_PATH,
        "MCP (JSON-RPC) for OAuth-connected apps",
    ),
    (
        crate::connector::ALIAS_PATH,
        "MCP (JSON-RPC) for OAuth-connected apps",
    ),
    (
        crate::connector::AUTHORIZE_PATH,
        "HTML form (OAuth consent)",
    ),
    (
        crate::connector::permission::ADD_PERMISSION_PATH,
        "HTML form (one more permission for a connected app)",
    ),
    (
        crate::connector::REGISTER_PATH,
        "OAuth: RFC 7591 registration, described by the RFC 8414 metadata",
    ),
    (
        crate::connector::TOKEN_PATH,
        "OAuth: the token endpoint, described by the RFC 8414 metadata",
    ),
    (
        crate::connector::REVOKE_PATH,
        "OAuth: RFC 7009 revocation, described by the RFC 8414 metadata",
    ),
    (
        "/.well-known/oauth-protected-resource",
        "OAuth: RFC 9728 metadata",
    ),
    (
        "/.well-known/oauth-protected-resource/functions/v1/mcp/connector",
        "OAuth: RFC 9728 metadata",
    ),
    (
        "/functions/v1/mcp/.well-known/oauth-protected-resource",
        "OAuth: RFC 9728 metadata",
    ),
    (
        "/.well-known/oauth-protected-resource/mcp",
        "OAuth: RFC 9728 metadata",
    ),
    (
        "/.well-known/oauth-authorization-server",
        "OAuth: RFC 8414 metadata",
    ),
    (
        "/.well-known/openid-configuration",
        "OAuth: RFC 8414 metadata",
    ),
    (
        "/functions/v1/mcp/.well-known/oauth-authorization-server",
        "OAuth: RFC 8414 metadata",
    ),
    (
        "/.well-known/oauth-authorization-server/mcp",
        "OAuth: RFC 8414 metadata",
    ),
    (
        crate::http::transparency::TILE_PATH,
        "C2SP tlog-tiles: static binary tiles (docs/transparency.md)",
    ),
];
