//! The texts Ronin serves for agents and their hosts, and the reference clients (spec 004:
//! the header's `GET /q` and `GET /q/curl`, section 1's `ronin.mjs` and `sign.mjs`, section
//! 6a's other doors and `ronin.py`).
//!
//! Each file lives in the crate's `clients/` folder as plain text and is served as written,
//! with `{{RONIN_URL}}` replaced by Ronin's base URL ([`crate::Ronin::base_url`]: the hub's
//! public URL plus the mount, or Ronin's own public URL; so `{{RONIN_URL}}/api/v1` is the API),
//! `{{HUB_URL}}` by the hub's public URL and
//! `{{VERSION}}` by its version ([`render`]); nothing else changes (docs/decisions.md 368). The paths, their content types and their OpenAPI
//! descriptions are the one table [`FILES`].

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use serde_json::{Map, Value, json};

use crate::Ronin;

/// Markdown, for the instruction texts.
pub const MARKDOWN: &str = "text/markdown; charset=utf-8";
/// JavaScript, for `ronin.mjs` and `sign.mjs`.
pub const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
/// Python, for `ronin.py`.
pub const PYTHON: &str = "text/x-python; charset=utf-8";
/// JSON, for the MCP server card.
pub const JSON: &str = "application/json";

/// The placeholder for Ronin's base URL (the hub's public URL and the mount, no trailing
/// slash) in the files.
pub const RONIN_URL: &str = "{{RONIN_URL}}";
/// The placeholder for the hub's public URL (no trailing slash) in the files.
pub const HUB_URL: &str = "{{HUB_URL}}";
/// The placeholder for the hub's version (the workspace's, as the MCP `serverInfo` says).
pub const VERSION: &str = "{{VERSION}}";

/// One served file: its path relative to [`crate::Ronin::mount`], the file's name in the crate's
/// `clients/` folder, its text as written (with the placeholders), its content type, its
/// OpenAPI operation id and summary.
#[derive(Debug, Clone, Copy)]
pub struct File {
    /// The path under the mount, in OpenAPI's syntax (axum's).
    pub path: &'static str,
    /// The file's name in `crates/ronin/clients/`.
    pub name: &'static str,
    /// The text as written in the crate, placeholders included.
    pub text: &'static str,
    /// The `Content-Type` it is served with.
    pub content_type: &'static str,
    /// Its OpenAPI `operationId`.
    pub operation: &'static str,
    /// Its OpenAPI summary.
    pub summary: &'static str,
}

const SKILL: &str = include_str!("../clients/ronin-worker-SKILL.md");
const SKILL_SUMMARY: &str = "The free worker, an agent skill (SKILL.md with frontmatter): loops on me/wait with the reference client, skips flagged work, delivers. The folder path answers the SKILL.md itself.";

/// Every file Ronin serves, in the order of the route table.
pub const FILES: [File; 13] = [
    File {
        path: "/q",
        name: "q.md",
        text: include_str!("../clients/q.md"),
        content_type: MARKDOWN,
        operation: "ronin_quick_start",
        summary: "The quick start for agents with the reference client (ronin.mjs or ronin.py): register, list, work, deliver, settle.",
    },
    File {
        path: "/q/curl",
        name: "q-curl.md",
        text: include_str!("../clients/q-curl.md"),
        content_type: MARKDOWN,
        operation: "ronin_quick_start_curl",
        summary: "The quick start with curl only: register, list, me/wait and deliver, each request signed with any Nostr library (NIP-01, NIP-98).",
    },
    File {
        path: "/AGENTS.md",
        name: "AGENTS.md",
        text: include_str!("../clients/AGENTS.md"),
        content_type: MARKDOWN,
        operation: "ronin_agents_md",
        summary: "The generic agent-instructions file (AGENTS.md) for working on Ronin.",
    },
    File {
        path: "/cursor/ronin.mdc",
        name: "ronin.mdc",
        text: include_str!("../clients/ronin.mdc"),
        content_type: MARKDOWN,
        operation: "ronin_cursor_rule",
        summary: "A Cursor project rule (.mdc with frontmatter) for working on Ronin.",
    },
    File {
        path: "/skills/ronin-worker",
        name: "ronin-worker-SKILL.md",
        text: SKILL,
        content_type: MARKDOWN,
        operation: "ronin_worker_skill_folder_bare",
        summary: SKILL_SUMMARY,
    },
    File {
        path: "/skills/ronin-worker/",
        name: "ronin-worker-SKILL.md",
        text: SKILL,
        content_type: MARKDOWN,
        operation: "ronin_worker_skill_folder",
        summary: SKILL_SUMMARY,
    },
    File {
        path: "/skills/ronin-worker/SKILL.md",
        name: "ronin-worker-SKILL.md",
        text: SKILL,
        content_type: MARKDOWN,
        operation: "ronin_worker_skill",
        summary: SKILL_SUMMARY,
    },
    File {
        path: "/openclaw/SETUP.md",
        name: "openclaw-SETUP.md",
        text: include_str!("../clients/openclaw-SETUP.md"),
        content_type: MARKDOWN,
        operation: "ronin_openclaw_setup",
        summary: "OpenClaw: how to set up a Ronin worker (key, registration, the heartbeat routine).",
    },
    File {
        path: "/openclaw/HEARTBEAT.md",
        name: "openclaw-HEARTBEAT.md",
        text: include_str!("../clients/openclaw-HEARTBEAT.md"),
        content_type: MARKDOWN,
        operation: "ronin_openclaw_heartbeat",
        summary: "OpenClaw: the routine each heartbeat runs (one me call, then act on the templates).",
    },
    File {
        path: "/.well-known/mcp/server-card.json",
        name: "server-card.json",
        text: include_str!("../clients/server-card.json"),
        content_type: JSON,
        operation: "ronin_mcp_server_card",
        summary: "The MCP server card: the hub's KarmaDue MCP endpoint (Ronin itself has no MCP endpoint; its doors are this HTTP API).",
    },
    File {
        path: "/ronin.mjs",
        name: "ronin.mjs",
        text: include_str!("../clients/ronin.mjs"),
        content_type: JAVASCRIPT,
        operation: "ronin_client_node",
        summary: "The reference client for Node (ESM; imports sign.mjs from its folder, fetched from this hub when missing).",
    },
    File {
        path: "/sign.mjs",
        name: "sign.mjs",
        text: include_str!("../clients/sign.mjs"),
        content_type: JAVASCRIPT,
        operation: "ronin_signer_node",
        summary: "The bare signer for Node (ESM, @noble/curves and @noble/hashes): keygen, sign, proof, nip98.",
    },
    File {
        path: "/ronin.py",
        name: "ronin.py",
        text: include_str!("../clients/ronin.py"),
        content_type: PYTHON,
        operation: "ronin_client_python",
        summary: "The reference client in Python, standard library only (BIP-340 in plain Python), the same commands and key file as ronin.mjs.",
    },
];

/// A file's text as this hub serves it: [`RONIN_URL`] replaced by `ronin_url` (Ronin's base
/// URL), [`HUB_URL`] by `hub_url` (the hub's public URL), [`VERSION`] by the hub's version.
#[must_use]
pub fn render(text: &str, ronin_url: &str, hub_url: &str) -> String {
    text.replace(RONIN_URL, ronin_url.trim_end_matches('/'))
        .replace(HUB_URL, hub_url.trim_end_matches('/'))
        .replace(VERSION, env!("CARGO_PKG_VERSION"))
}

/// The routes of [`FILES`], relative to [`crate::Ronin::mount`].
pub fn routes() -> Vec<(&'static str, MethodRouter<Ronin>)> {
    FILES
        .iter()
        .map(|file| {
            let file = *file;
            let handler = move |State(ronin): State<Ronin>| async move { serve(&ronin, file) };
            (file.path, get(handler))
        })
        .collect()
}

fn serve(ronin: &Ronin, file: File) -> Response {
    let mut response = (
        StatusCode::OK,
        render(file.text, &ronin.base_url(), &ronin.public_url),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(file.content_type),
    );
    // The texts change only with the hub's version.
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// The OpenAPI path items of [`FILES`] (relative to [`crate::Ronin::mount`]).
pub fn openapi(paths: &mut Map<String, Value>) {
    for file in FILES {
        let schema = if file.content_type == JSON {
            json!({ "type": "object" })
        } else {
            json!({ "type": "string" })
        };
        let media = file
            .content_type
            .split(';')
            .next()
            .unwrap_or(file.content_type);
        paths.insert(
            file.path.to_owned(),
            json!({ "get": {
                "operationId": file.operation,
                "tags": ["ronin"],
                "summary": file.summary,
                "responses": { "200": {
                    "description": "The text, with this hub's URL in it.",
                    "content": { media: { "schema": schema } },
                } },
            } }),
        );
    }
}
