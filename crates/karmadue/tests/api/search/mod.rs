//! `discover_resources` on the real bundled snapshot: relevance, paging, ranking rules, bad
//! input, and an index that follows the store.

use serde_json::{Value, json};

use crate::app::TestApp;

/// Realistic needs and the real records a reasonable user expects in the first 8 results.
/// Each entry is one expectation; `a | b` means either record satisfies it.
///
/// Written before the ranking was tuned, and kept as the ranking contract's golden queries.
const RELEVANCE: &[(&str, &[&str])] = &[
    (
        "speech to text on device",
        &["kd:res:github:ggml-org/whisper.cpp"],
    ),
    (
        "postgres mcp server",
        &[
            "kd:res:github:modelcontextprotocol/servers/src/postgres | kd:res:npm:@modelcontextprotocol/server-postgres",
        ],
    ),
    (
        "calendar connector",
        &["kd:res:github:nspady/google-calendar-mcp | kd:res:npm:@cocal/google-calendar-mcp"],
    ),
    ("whisper.cp", &["kd:res:github:ggml-org/whisper.cpp"]),
    (
        "modelcontextprotcol servers",
        &["kd:res:github:modelcontextprotocol/servers"],
    ),
    ("npm:0nmcp", &["kd:res:npm:0nmcp"]),
    ("@21st-dev/magic", &["kd:res:npm:@21st-dev/magic"]),
    (
        "github mcp server",
        &["kd:res:github:github/github-mcp-server"],
    ),
    (
        "slack",
        &[
            "kd:res:github:korotovsky/slack-mcp-server | kd:res:github:zencoderai/slack-mcp-server | kd:res:npm:slack-mcp-server",
        ],
    ),
    (
        "browser automation",
        &["kd:res:github:microsoft/playwright-mcp | kd:res:npm:@playwright/mcp"],
    ),
    (
        "filesystem",
        &[
            "kd:res:github:modelcontextprotocol/servers/src/filesystem | kd:res:npm:@modelcontextprotocol/server-filesystem",
        ],
    ),
    (
        "web search",
        &[
            "kd:res:npm:tavily-mcp | kd:res:github:tavily-ai/tavily-mcp | kd:res:npm:@brave/brave-search-mcp-server | kd:res:github:modelcontextprotocol/servers/src/brave-search | kd:res:npm:exa-mcp-server | kd:res:github:exa-labs/exa-mcp-server",
        ],
    ),
    // modelcontextprotocol/servers/src/sqlite moved to servers-archived, which the catalog
    // holds: it is archived (docs/decisions.md 246), so a current SQLite server is expected.
    (
        "sqlite",
        &[
            "kd:res:npm:mcp-sqlite | kd:res:npm:mcp-server-sqlite | kd:res:github:panasenco/mcp-sqlite | kd:res:npm:@ansvar/mcp-sqlite",
        ],
    ),
    (
        "kubernetes",
        &[
            "kd:res:github:Flux159/mcp-server-kubernetes | kd:res:npm:mcp-server-kubernetes | kd:res:github:manusa/kubernetes-mcp-server | kd:res:npm:kubernetes-mcp-server",
        ],
    ),
    (
        "stripe payments",
        &["kd:res:github:stripe/agent-toolkit | kd:res:npm:@stripe/mcp"],
    ),
    (
        "notion",
        &["kd:res:github:makenotion/notion-mcp-server | kd:res:npm:@notionhq/notion-mcp-server"],
    ),
    (
        "jira",
        &[
            "kd:res:github:sooperset/mcp-atlassian | kd:res:pypi:mcp-atlassian | kd:res:npm:@aashari/mcp-server-atlassian-jira | kd:res:npm:@atlassian-dc-mcp/jira",
        ],
    ),
    (
        "email",
        &[
            "kd:res:github:Shy2593666979/mcp-server-email | kd:res:github:ElasticEmail/elasticemail-mcp-server | kd:res:github:GongRzhe/Gmail-MCP-Server | kd:res:npm:@gongrzhe/server-gmail-autoauth-mcp | kd:res:github:dominik1001/imap-mcp",
        ],
    ),
    (
        "vector database",
        &[
            "kd:res:github:zilliztech/mcp-server-milvus | kd:res:github:qdrant/mcp-server-qdrant | kd:res:github:chroma-core/chroma-mcp | kd:res:github:privetin/chroma",
        ],
    ),
    (
        "pdf",
        &[
            "kd:res:skill:anthropics/skills/skills/pdf/SKILL.md | kd:res:npm:@modelcontextprotocol/server-pdf | kd:res:npm:@sylphx/pdf-reader-mcp",
        ],
    ),
    (
        "docker",
        &["kd:res:github:QuantGeekDev/docker-mcp | kd:res:github:ckreiling/mcp-server-docker"],
    ),
    (
        "figma",
        &[
            "kd:res:github:GLips/Figma-Context-MCP | kd:res:github:figma/mcp-server-guide | kd:res:npm:figma-developer-mcp",
        ],
    ),
    (
        "git",
        &["kd:res:github:modelcontextprotocol/servers/src/git"],
    ),
    (
        "memory knowledge graph",
        &[
            "kd:res:github:modelcontextprotocol/servers/src/memory | kd:res:npm:@modelcontextprotocol/server-memory",
        ],
    ),
    (
        "weather",
        &[
            "kd:res:github:shuowang-ai/Weather-MCP | kd:res:github:TimLukaHorstmann/mcp-weather | kd:res:github:isdaniel/mcp_weather_server",
        ],
    ),
    (
        "youtube transcript",
        &[
            "kd:res:github:kimtaeyoon83/mcp-server-youtube-transcript | kd:res:github:jkawamoto/mcp-youtube-transcript | kd:res:github:anaisbetts/mcp-youtube",
        ],
    ),
    ("aws", &["kd:res:github:awslabs/mcp"]),
    (
        "playwrigth",
        &["kd:res:github:microsoft/playwright-mcp | kd:res:npm:@playwright/mcp"],
    ),
    (
        "sequential thinking",
        &[
            "kd:res:github:modelcontextprotocol/servers/src/sequentialthinking | kd:res:npm:@modelcontextprotocol/server-sequential-thinking",
        ],
    ),
    (
        "sentry error monitoring",
        &[
            "kd:res:github:getsentry/sentry-mcp | kd:res:npm:@sentry/mcp-server | kd:res:github:modelcontextprotocol/servers/src/sentry",
        ],
    ),
    (
        "test driven development skill",
        &["kd:res:skill:obra/superpowers/skills/test-driven-development/SKILL.md"],
    ),
    (
        "offline transcription",
        &[
            "kd:res:github:ggml-org/whisper.cpp | kd:res:pypi:whisper-transcribe-mcp | kd:res:github:kachiO/mlx-whisper-mcp | kd:res:pypi:iflow-mcp-kachio-whisper-mcp | kd:res:pypi:macwhisper-mcp-server",
        ],
    ),
    (
        "postgresql database",
        &[
            "kd:res:github:modelcontextprotocol/servers/src/postgres | kd:res:npm:@modelcontextprotocol/server-postgres | kd:res:github:crystaldba/postgres-mcp",
        ],
    ),
    ("redis", &["kd:res:github:redis/mcp-redis"]),
    (
        "fetch web page",
        &[
            "kd:res:github:modelcontextprotocol/servers/src/fetch | kd:res:pypi:mcp-server-fetch | kd:res:github:zcaceres/fetch-mcp",
        ],
    ),
    (
        "time zone conversion",
        &["kd:res:github:modelcontextprotocol/servers/src/time | kd:res:pypi:mcp-server-time"],
    ),
    // Added with catalog version 2 (issue 16 "The catalog and search").
    ("faster-whisper", &["kd:res:pypi:faster-whisper"]),
    ("vosk", &["kd:res:pypi:vosk"]),
    (
        "postgres database",
        &[
            "kd:res:npm:@modelcontextprotocol/server-postgres | kd:res:github:crystaldba/postgres-mcp | kd:res:npm:@henkey/postgres-mcp-server",
        ],
    ),
    (
        "web browser automation",
        &["kd:res:github:microsoft/playwright-mcp | kd:res:npm:@playwright/mcp"],
    ),
];

/// One hub with the bundled catalog for every test here that only reads: a catalog copy is
/// 150 MB on disk and its index takes seconds to build. Tests that write make their own.
pub(crate) fn shared() -> &'static TestApp {
    static APP: std::sync::OnceLock<TestApp> = std::sync::OnceLock::new();
    APP.get_or_init(TestApp::with_catalog)
}

pub(crate) fn discover(app: &TestApp, arguments: Value) -> Value {
    let reply = app.call("discover_resources", arguments);
    assert_eq!(reply["ok"], true, "{reply}");
    reply
}

pub(crate) fn ids(reply: &Value) -> Vec<String> {
    reply["data"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {reply}"))
        .iter()
        .map(|row| row["resource_id"].as_str().unwrap().to_owned())
        .collect()
}

/// The text a reader sees for result `index`: title, description and locator, whether the
/// boundary has lifted the free text into `untrusted_content` (id ":N") or not.
pub(crate) fn row_text(reply: &Value, index: usize) -> String {
    let row = &reply["data"]["results"][index];
    let mut text = format!("{} ", row["locator"].as_str().unwrap_or_default());
    for field in ["title", "description"] {
        if let Some(inline) = row[field].as_str() {
            text.push_str(inline);
            text.push(' ');
        }
    }
    let place = format!(":{index}");
    for item in reply["untrusted_content"]["items"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if item["id"] == place.as_str() {
            text.push_str(item["text"].as_str().unwrap_or_default());
            text.push(' ');
        }
    }
    text.to_lowercase()
}

pub(crate) fn data(reply: &Value) -> &Value {
    &reply["data"]
}

/// Every result of `need`, walking the pages with `next_offset`.
pub(crate) fn every_result(app: &TestApp, need: &str, include_demo: bool) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let reply = discover(
            app,
            json!({ "need": need, "limit": 50, "offset": at, "include_demo": include_demo }),
        );
        rows.extend(data(&reply)["results"].as_array().unwrap().iter().cloned());
        offset = data(&reply)["next_offset"].as_u64();
        assert!(rows.len() <= 5_000, "runaway paging");
    }
    rows
}

/// Imports catalog rows (the import path writes `resource.imported` events).
pub(crate) fn import(app: &TestApp, rows: &[Value]) {
    let text = rows
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime
        .block_on(kd_karmadue::catalog::import::import_lines(
            &app.hub,
            "test rows",
            std::io::Cursor::new(text),
            |_| {},
        ))
        .unwrap();
    assert!(report.bad.is_empty(), "{:?}", report.bad);
}

pub(crate) fn npm_row(name: &str, description: &str) -> Value {
    json!({
        "id": format!("kd:res:npm:{name}"), "locator": format!("npm:{name}"), "title": name, "type": "mcp_server",
        "version": "1.0.0", "downloads_a_month": 1000, "description": description,
    })
}

mod index;
mod input;
mod ordering;
mod relevance;
