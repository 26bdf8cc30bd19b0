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
    (
        "sqlite",
        &["kd:res:github:modelcontextprotocol/servers/src/sqlite"],
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
];

fn discover(app: &TestApp, arguments: Value) -> Value {
    let reply = app.call("discover_resources", arguments);
    assert_eq!(reply["ok"], true, "{reply}");
    reply
}

fn ids(reply: &Value) -> Vec<String> {
    reply["data"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {reply}"))
        .iter()
        .map(|row| row["resource_id"].as_str().unwrap().to_owned())
        .collect()
}

/// The text a reader sees for result `index`: title, description and locator, whether the
/// boundary has lifted the free text into `untrusted_content` (id ":N") or not.
fn row_text(reply: &Value, index: usize) -> String {
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

#[test]
fn realistic_needs_find_the_records_a_user_expects_in_the_first_eight() {
    let app = TestApp::with_catalog();
    let mut failures = Vec::new();
    let mut table = String::from("\n| need | expected in top 8 | result |\n| --- | --- | --- |\n");
    for (need, expectations) in RELEVANCE {
        let reply = discover(&app, json!({ "need": need }));
        let found = ids(&reply);
        let mut row_ok = true;
        for expectation in *expectations {
            let hit = expectation
                .split(" | ")
                .any(|id| found.iter().any(|found| found == id));
            row_ok &= hit;
        }
        table.push_str(&format!(
            "| {need} | {} | {} |\n",
            expectations.join("; ").replace(" | ", " or "),
            if row_ok { "pass" } else { "FAIL" }
        ));
        if !row_ok {
            failures.push(format!("{need:?} → {found:?}"));
        }
    }
    eprintln!("{table}");
    assert!(RELEVANCE.len() >= 25, "the table keeps at least 25 needs");
    assert!(
        failures.is_empty(),
        "{} of {} needs missed:\n{}",
        failures.len(),
        RELEVANCE.len(),
        failures.join("\n")
    );
}

#[test]
fn generic_words_only_hint_so_every_postgres_result_is_about_postgres() {
    let app = TestApp::with_catalog();
    for (need, word) in [
        ("postgres mcp server", "postgres"),
        ("calendar connector", "calendar"),
        ("slack mcp", "slack"),
    ] {
        let reply = discover(&app, json!({ "need": need }));
        let count = reply["data"]["results"].as_array().unwrap().len();
        assert_eq!(count, 8, "{reply}");
        for index in 0..count {
            let text = row_text(&reply, index);
            assert!(
                text.contains(word),
                "{need}: result {index} is not about {word}: {text}"
            );
        }
    }
}
