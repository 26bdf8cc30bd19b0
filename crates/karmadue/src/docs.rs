//! The docs pages the hub serves (`/functions/v1/docs/docs/<page>.md`) and renders at `/`.
//! The tool reference is generated from the registry, so it lists exactly the served tools.

use crate::hub::Hub;
use crate::registry::{Access, ParamType, Tool};

/// Page names, in menu order.
pub const PAGES: [&str; 5] = ["index", "tools", "signing", "event-log", "scores"];

/// The Markdown of a page, or None for an unknown page.
pub fn page(hub: &Hub, name: &str) -> Option<String> {
    let text = match name {
        "index" => include_str!("../docs/index.md").to_owned(),
        "tools" => tool_reference(&hub.tools),
        "signing" => include_str!("../docs/signing.md").to_owned(),
        "event-log" => include_str!("../docs/event-log.md").to_owned(),
        "scores" => include_str!("../docs/scores.md").to_owned(),
        _ => return None,
    };
    Some(text.replace("{{public_url}}", &hub.config.public_url))
}

/// The tool reference, one section per tool.
pub fn tool_reference(tools: &[&Tool]) -> String {
    let mut out = String::from(
        "# Tool reference\n\nEvery tool is served over MCP (`tools/call`) and REST (`POST /functions/v1/public-api/v1/tools/<name>`). Unknown arguments are refused.\n",
    );
    for tool in tools {
        out.push_str(&format!("\n## {}\n\n{}\n\n", tool.name, tool.description));
        let read_only = if tool.hints.read_only { "yes" } else { "no" };
        let signed = match tool.access {
            Access::Signed => " Signed (kd-mcp-v1).",
            Access::Person => " Signed-in person (Authorization: Bearer <session token>).",
            Access::Open | Access::Read => "",
        };
        let required: Vec<String> = tool
            .required
            .iter()
            .map(|group| group.join(" or "))
            .collect();
        let required = if required.is_empty() {
            "none".to_owned()
        } else {
            required.join(", ")
        };
        out.push_str(&format!(
            "Read only: {read_only}.{signed} Required: {required}.\n\n"
        ));
        if tool.params.is_empty() {
            out.push_str("No arguments.\n");
        }
        for param in tool.params {
            let ty = match param.ty {
                ParamType::String => "string",
                ParamType::Integer => "integer",
                ParamType::Number => "number",
                ParamType::Boolean => "boolean",
                ParamType::Object => "object",
                ParamType::Array => "array",
                ParamType::StringOrObject => "string or object",
            };
            let values = if param.values.is_empty() {
                String::new()
            } else {
                format!(" One of: {}.", param.values.join(", "))
            };
            out.push_str(&format!(
                "- `{}` ({ty}): {}{values}\n",
                param.name, param.description
            ));
        }
    }
    out
}

/// Renders Markdown to an HTML fragment.
pub fn to_html(markdown: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(markdown, pulldown_cmark::Options::ENABLE_TABLES);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    html
}
