//! `search` and `fetch`, the read-only pair ChatGPT deep research calls (spec "Using KarmaDue
//! from Claude or ChatGPT": "plus read-only search and fetch"; "search (connector) uses
//! discover_resources' ranking, then adds the Arena challenges and forum threads that matched,
//! then real public listings. Demo records are hidden unless include_examples is true. Links
//! open human pages"). Both are open reads, served on both endpoints and offered to every
//! connection. Arena challenges and listings are not built, so search adds only threads.
//!
//! Titles and texts are third-party words: the response boundary lifts them into
//! `untrusted_content` like every other tool's (spec "Null text fields").

use kd_kernel::Ctx;
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::catalog::search::{Request, SearchIndex, discover};

/// Results of one `search`.
pub const SEARCH_LIMIT: usize = 10;
/// The longest query, in characters (discover_resources' `need`).
pub const MAX_QUERY_CHARS: usize = 500;

/// `search`.
pub static SEARCH: Tool = Tool {
    name: "search",
    title: "Search KarmaDue",
    description: "Search KarmaDue for tools, connectors, repos and datasets (discover_resources' ranking), then the forum threads that match. Returns results [{id, kind, title, url}]; open one with fetch. Demo records are hidden unless include_examples is true. Titles are third-party text, returned in untrusted_content.",
    access: Access::Open,
    hints: Hints::READ,
    untrusted: &[Lift::rows("results", "id", &["title"])],
    arguments: Arguments::Typed(kd_kernel::input!(Search)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(SEARCH, search),
};

/// search's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    /// What to look for, in plain words (at most 500 characters).
    query: String,
    /// When true, include records marked demo. Default false.
    include_examples: Option<bool>,
}

/// One `search` result.
#[derive(Debug, Serialize)]
pub struct Found {
    /// A resource id (`kd:res:…`) or a thread id; `fetch` takes either.
    pub id: String,
    /// `resource` or `thread`.
    pub kind: &'static str,
    /// Its title (third-party text; lifted).
    pub title: String,
    /// The human page.
    pub url: String,
}

/// search's `data`.
#[derive(Debug, Serialize)]
pub struct Searched {
    /// Resources in ranking order, then matching threads.
    pub results: Vec<Found>,
}

kd_kernel::output!(Searched, Fetched);

/// `search`: discover_resources' first page for `query`, then its related threads.
///
/// # Errors
/// `validation` naming `query` (empty or too long); `internal`.
async fn search(ctx: Ctx, input: Search) -> Result<Searched, ToolError> {
    let query = input.query.trim().to_owned();
    if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::validation(
            "query",
            format!("query is 1 to {MAX_QUERY_CHARS} characters of plain words"),
        ));
    }
    let request = Request {
        need: Some(query),
        limit: SEARCH_LIMIT,
        offset: 0,
        include_demo: input.include_examples.unwrap_or(false),
    };
    let base = crate::connector::issuer(&ctx.kernel.config);
    let kernel = std::sync::Arc::clone(&ctx.kernel);
    let found = ctx
        .read(move |conn| discover(kernel.areas.require::<SearchIndex>()?, conn, &request))
        .await?;
    let mut results: Vec<Found> = found
        .results
        .into_iter()
        .map(|hit| Found {
            url: resource_url(&base, &hit.resource.resource_id),
            id: hit.resource.resource_id,
            kind: "resource",
            title: hit.resource.title,
        })
        .collect();
    for thread in found.related.threads {
        let text = |key: &str| thread[key].as_str().unwrap_or_default().to_owned();
        results.push(Found {
            url: thread_url(&base, &text("thread_id")),
            id: text("thread_id"),
            kind: "thread",
            title: text("title"),
        });
    }
    Ok(Searched { results })
}

fn resource_url(base: &str, resource_id: &str) -> String {
    format!("{base}/resource?id={}", query_escape(resource_id))
}

fn thread_url(base: &str, thread_id: &str) -> String {
    format!("{base}/forum/thread?id={}", query_escape(thread_id))
}

/// Percent-encodes what a query value may not hold as is.
fn query_escape(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' | b'/' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// `fetch`.
pub static FETCH: Tool = Tool {
    name: "fetch",
    title: "Fetch a KarmaDue record",
    description: "Fetch one record a search returned, by id: a resource (kd:res:…) with its evidence summary, or a forum thread with its posts. Returns {id, title, text, url, metadata}; url opens the human page. Title and text are third-party text, returned in untrusted_content.",
    access: Access::Open,
    hints: Hints::READ,
    untrusted: &[Lift::rows("", "id", &["title", "text"])],
    arguments: Arguments::Typed(kd_kernel::input!(Fetch)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(FETCH, fetch),
};

/// fetch's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Fetch {
    /// An id from search: a resource id (kd:res:…) or a thread id.
    id: String,
}

/// fetch's `data` (the deep-research document shape).
#[derive(Debug, Serialize)]
pub struct Fetched {
    /// The id asked for.
    pub id: String,
    /// Its title (lifted).
    pub title: String,
    /// Its text: a resource's description, or a thread's posts (lifted).
    pub text: String,
    /// The human page.
    pub url: String,
    /// What KarmaDue itself says of it (trusted fields).
    pub metadata: Value,
}

/// `fetch`: one resource (demo ones too: search only offers them when asked) or one visible
/// thread.
///
/// # Errors
/// `not_found` naming `id`; `internal`.
async fn fetch(ctx: Ctx, input: Fetch) -> Result<Fetched, ToolError> {
    let id = input.id.trim().to_owned();
    let base = crate::connector::issuer(&ctx.kernel.config);
    ctx.read(move |conn| {
        if id.starts_with("kd:res:") {
            // A store failure stays internal (with its cause), never a not_found.
            let resource = crate::catalog::require_resource(conn, &id, true).map_err(|error| {
                if error.code == ErrorCode::Internal {
                    error
                } else {
                    ToolError::not_found("id", "No resource has this id.")
                }
            })?;
            let claims = crate::catalog::model::load_claims(conn, &id, None)?;
            let view = crate::catalog::resource_view(&resource, &claims);
            return Ok(Fetched {
                url: resource_url(&base, &id),
                title: view.title,
                text: view.description.unwrap_or_default(),
                metadata: json!({
                    "kind": "resource",
                    "type": view.kind,
                    "locator": view.locator,
                    "license": view.license,
                    "evidence_summary": view.evidence_summary,
                    "counts_as_verification": view.counts_as_verification,
                    "demo": view.demo,
                }),
                id,
            });
        }
        let thread = crate::forum::thread_view(conn, &id).map_err(|error| match error {
            crate::forum::error::ForumError::ThreadGone => {
                ToolError::not_found("id", "No resource or visible thread has this id.")
            }
            other => ToolError::from(other),
        })?;
        let text = thread
            .posts
            .iter()
            .map(|post| format!("{}: {}", post.author.display_label, post.body))
            .collect::<Vec<_>>()
            .join("\n\n");
        Ok(Fetched {
            url: thread_url(&base, &thread.thread.thread_id),
            title: thread.thread.title.clone(),
            text,
            metadata: json!({
                "kind": "thread",
                "topic": thread.thread.topic,
                "replies": thread.thread.replies,
                "demo": thread.thread.demo,
            }),
            id,
        })
    })
    .await
}
