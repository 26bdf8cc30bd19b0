//! A forum post's text: the body, or a structured body rendered as readable text, and the
//! thread title's bounds (spec create_thread, reply).

use super::error::ForumError;
use kd_kernel::input::Text;
use serde_json::{Map, Value};

use super::write::{MAX_BODY_CHARS, TITLE_CHARS};

/// The post text from `body` and `structured`: the body when given (structured is kept
/// beside it), else the structured body rendered as readable text.
pub fn post_text(
    body: &Option<String>,
    structured: Option<Map<String, Value>>,
) -> Result<(String, Option<Value>), ForumError> {
    let structured = structured.map(Value::Object);
    let body = match (body.text(), &structured) {
        (Some(body), _) => body.to_owned(),
        (None, Some(structured)) => render_structured(structured)?,
        (None, None) => return Err(ForumError::BodyMissing),
    };
    if let Some(structured) = &structured {
        render_structured(structured)?;
    }
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(ForumError::BodyTooLong {
            max: MAX_BODY_CHARS,
        });
    }
    Ok((body, structured))
}

/// Renders `{claim, evidence, asks}` (each a string or a list of strings) as readable text:
/// `Claim: …`, `Evidence:` with one `- ` line per item, `Asks:` likewise, separated by blank
/// lines.
fn render_structured(structured: &Value) -> Result<String, ForumError> {
    let Value::Object(map) = structured else {
        return Err(ForumError::StructuredNotObject);
    };
    if let Some(key) = map
        .keys()
        .find(|key| !["claim", "evidence", "asks"].contains(&key.as_str()))
    {
        return Err(ForumError::StructuredKey(key.clone()));
    }
    let mut parts = Vec::new();
    for (key, heading) in [
        ("claim", "Claim"),
        ("evidence", "Evidence"),
        ("asks", "Asks"),
    ] {
        let items: Vec<&str> = match map.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(text)) => vec![text.as_str()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().ok_or(ForumError::StructuredPart(key)))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(ForumError::StructuredPart(key)),
        };
        let items: Vec<&str> = items
            .into_iter()
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .collect();
        match items.as_slice() {
            [] => {}
            [one] if key == "claim" => parts.push(format!("{heading}: {one}")),
            many => parts.push(format!(
                "{heading}:\n{}",
                many.iter()
                    .map(|item| format!("- {item}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
        }
    }
    if parts.is_empty() {
        return Err(ForumError::StructuredEmpty);
    }
    Ok(parts.join("\n\n"))
}

/// The thread title, trimmed: one line of 8 to 140 characters.
///
/// # Errors
/// `validation` naming `title`.
pub fn bounded_title(title: &str) -> Result<String, ForumError> {
    let title = title.required_text("title")?;
    // The signed text is title, a blank line, then the body: a line break in the title would
    // let a relay move the boundary without breaking the signature.
    if title
        .chars()
        .any(|c| c.is_control() || kd_core::scanner::is_format(c))
    {
        return Err(ForumError::TitleNotOneLine);
    }
    let chars = title.chars().count();
    if !(TITLE_CHARS.0..=TITLE_CHARS.1).contains(&chars) {
        return Err(ForumError::TitleLength {
            min: TITLE_CHARS.0,
            max: TITLE_CHARS.1,
            chars,
        });
    }
    Ok(title.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_structured_body_renders_as_readable_text() {
        let text = render_structured(&json!({
            "claim": "pdf-reader works offline",
            "evidence": ["https://example.org/run-1", "https://example.org/run-2"],
            "asks": "Has anyone tried it on 500-page files?",
        }))
        .unwrap();
        assert_eq!(
            text,
            "Claim: pdf-reader works offline\n\nEvidence:\n- https://example.org/run-1\n- https://example.org/run-2\n\nAsks:\n- Has anyone tried it on 500-page files?"
        );
        assert!(render_structured(&json!({ "other": "x" })).is_err());
        assert!(render_structured(&json!({ "claim": 3 })).is_err());
        assert!(render_structured(&json!({})).is_err());
    }
}
