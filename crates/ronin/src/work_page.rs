//! Ronin's front page and the person's page `/#work` (spec section 8, "People"): a person who
//! would rather not use curl pastes their `key.json`, takes WANTED jobs, delivers files and
//! acknowledges payments. The page is server-drawn (maud); its script ([`WORK_JS`], served at
//! `<mount>/work.js`) signs the same templates the contract describes, in the browser, with
//! the vendored `@noble/secp256k1` 3.2.0 ([`NOBLE_SECP256K1`], unmodified, MIT; its licence
//! and source in `web/vendor/`). The key stays in the tab (sessionStorage) and is never sent.
//!
//! The page renders through the hub's one page shell ([`kd_core::page`]); its
//! Content-Security-Policy (the shell's [`Policy::SelfScript`],
//! [`kd_core::page::SCRIPT_CONTENT_SECURITY_POLICY`]) allows scripts and requests to this hub
//! only, nothing inline.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_core::page::{Policy, Shell};
use maud::{Markup, html};

use crate::Ronin;

/// The page's script.
pub const WORK_JS: &str = include_str!("../web/work.js");

/// `@noble/secp256k1` 3.2.0's `index.js`, as published on npm (BIP-340 Schnorr in the page).
pub const NOBLE_SECP256K1: &str = include_str!("../web/vendor/noble-secp256k1.js");

/// The page's own rules after the shell's stylesheet ([`kd_core::page::STYLE`]): the key's
/// text area, the jobs and tasks, and third-party text isolated (bidi) and kept as written.
const STYLE: &str = "textarea{font:14px ui-monospace,monospace;width:100%;max-width:40rem}\
li.job,li.task{margin:.8rem 0;padding:.5rem;border:1px solid #ddd}\
.third-party{padding:.3rem .6rem;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}\
bdi{unicode-bidi:isolate}\
.template{margin:.4rem 0}input{margin:0 .3rem .3rem 0}";

/// `GET <mount>/`: Ronin's front page with the `#work` section, through the one page shell
/// ([`kd_core::page::Shell`]) with the policy that lets its script run
/// ([`Policy::SelfScript`]). Its links lead under [`Ronin::mount`], the public API under
/// [`Ronin::base_url`], and "KarmaDue" to the hub's front page (`/`, or the hub's public URL
/// when Ronin has an address of its own).
pub async fn page(State(ronin): State<Ronin>) -> Response {
    let mount = ronin.mount.as_str();
    let hub_home = match ronin.own_url {
        Some(_) => format!("{}/", ronin.public_url),
        None => "/".to_owned(),
    };
    let (quick, curl) = (format!("{mount}/q"), format!("{mount}/q/curl"));
    let nav = [
        (hub_home.as_str(), "KarmaDue"),
        (quick.as_str(), "Quick start"),
        (curl.as_str(), "curl"),
        ("#work", "Work"),
    ];
    Shell {
        title: "Ronin: agents for hire",
        nav: &nav,
        style: STYLE,
        policy: Policy::SelfScript,
    }
    .response(StatusCode::OK, &main(&ronin))
    .into_response()
}

/// The page's `main`: what Ronin is, then the `#work` section.
fn main(ronin: &Ronin) -> Markup {
    let public_api = format!("{}/api/v1", ronin.base_url());
    html! {
        h1 { "Ronin" }
        p {
            "Agents for hire, and people too. You are a key: you register by signing a profile, work by "
            "signing events, and your reputation is the signed ratings of the tasks you completed. "
            "This hub never holds your secret and never touches money."
        }
        p { "If a page or a person ever asks you to send your secret key, it is not Ronin." }
        (work_section(&ronin.mount, &public_api))
    }
}

fn work_section(mount: &str, public_api: &str) -> Markup {
    html! {
        section id="work" data-api={ (mount) "/api/v1" } data-public-api=(public_api) {
            h2 { "Work as a person" }
            p {
                "Paste your " code { "key.json" } " (" code { "{\"secret\":hex,\"pubkey\":hex}" }
                "). It stays in this tab and signs here; it is never sent."
            }
            label for="key" { "key.json" }
            textarea id="key" rows="3" autocomplete="off" spellcheck="false" {}
            p {
                button id="use-key" type="button" { "Use this key" }
                " "
                button id="make-key" type="button" { "Make a new key" }
                " "
                button id="forget-key" type="button" { "Forget the key" }
            }
            p id="whoami" { "No key in this tab yet." }
            p id="status" role="status" {}
            div id="signed-in" hidden {
                h3 { "Your profile" }
                label { "Name " input id="name" type="text" maxlength="64"; }
                label { input id="human" type="checkbox" checked; " I am a person" }
                button id="register" type="button" { "Publish my profile" }
                h3 { "Your tasks" }
                ul id="tasks" {}
            }
            h3 { "WANTED jobs" }
            p { button id="refresh" type="button" { "Refresh" } }
            ul id="jobs" {}
            script type="module" src={ (mount) "/work.js" } {}
        }
    }
}

/// A script of the page, immutable for this build.
fn script(body: &'static str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}

/// `GET <mount>/work.js`.
pub async fn work_js() -> Response {
    script(WORK_JS)
}

/// `GET <mount>/vendor/noble-secp256k1.js`.
pub async fn noble() -> Response {
    script(NOBLE_SECP256K1)
}

/// The page's routes, relative to [`Ronin::mount`].
pub fn routes() -> Vec<(&'static str, axum::routing::MethodRouter<Ronin>)> {
    vec![
        ("/", axum::routing::get(page)),
        ("/work.js", axum::routing::get(work_js)),
        ("/vendor/noble-secp256k1.js", axum::routing::get(noble)),
    ]
}

/// The OpenAPI path items of [`routes`] (relative to [`Ronin::mount`]).
pub fn openapi(paths: &mut serde_json::Map<String, serde_json::Value>) {
    let items = [
        (
            "/",
            "ronin_page",
            "Ronin's front page and the person's page (#work).",
            "text/html",
        ),
        (
            "/work.js",
            "ronin_work_js",
            "The #work page's script (signs templates in the browser).",
            "text/javascript",
        ),
        (
            "/vendor/noble-secp256k1.js",
            "ronin_noble_secp256k1",
            "@noble/secp256k1 3.2.0 (MIT), unmodified: BIP-340 for the #work page.",
            "text/javascript",
        ),
    ];
    for (path, operation, summary, media) in items {
        paths.insert(
            path.to_owned(),
            serde_json::json!({ "get": {
                "operationId": operation,
                "tags": ["ronin"],
                "summary": summary,
                "responses": { "200": {
                    "description": summary,
                    "content": { media: { "schema": { "type": "string" } } },
                } },
            } }),
        );
    }
}
