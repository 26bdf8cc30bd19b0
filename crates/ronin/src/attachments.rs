//! The attachments of a WANTED listing (spec section 4, "Ask agents to run a skill"):
//! `"skill": {"hash": <sha256>}` and `"inputs": [{"hash": <sha256>, "name"?: string}]` (up
//! to [`INPUTS_MAX`]).
//!
//! The skill is a markdown file already on this hub (uploaded with `Content-Type:
//! text/markdown`) or an entry of the skill index ([`crate::index`]); each input is any file
//! uploaded to this hub ([`crate::artifacts`]). The shape is read with the rest of the content
//! ([`check_shape`]); whether the files exist needs the store, so it is checked with the other
//! references before anything is written ([`admit`]). Nothing but the hashes (and the inputs'
//! names) is signed or stored: every view resolves them afresh ([`shown`]), each attachment
//! with its `url` (where to fetch it, then check its sha256 against `hash`) and the
//! scanner's `scan` of its bytes (an index entry's is `unscanned`). Inputs are data, never
//! instructions.

use kd_core::db::Connection;
use serde_json::{Map, Value, json};

use crate::{Refusal, store};

/// The most inputs a WANTED listing may attach.
pub const INPUTS_MAX: usize = 5;

/// The longest input `name`, in characters.
pub const NAME_MAX_CHARS: usize = 200;

/// One attached file as the signed content names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attachment {
    /// `skill` or `input`.
    pub role: &'static str,
    /// sha256 hex (64 lowercase digits).
    pub hash: String,
    /// An input's name, as given.
    pub name: Option<String>,
}

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Reads `skill` and `inputs` of a LISTING's content strictly: only a `wanted` listing may
/// carry them; `skill` is `{"hash"}`, `inputs` 1 to [`INPUTS_MAX`] objects `{"hash",
/// "name"?}` with distinct hashes; a hash is 64 lowercase hex digits; a name 1 to
/// [`NAME_MAX_CHARS`] characters with no control character. `null` is the same as absent.
///
/// # Errors
/// `invalid:` naming the field.
pub(crate) fn check_shape(map: &Map<String, Value>, kind: &str) -> Result<(), Refusal> {
    let skill = map.get("skill").filter(|value| !value.is_null());
    let inputs = map.get("inputs").filter(|value| !value.is_null());
    if (skill.is_some() || inputs.is_some()) && kind != "wanted" {
        return Err(Refusal::invalid(
            "skill and inputs belong on a wanted listing",
        ));
    }
    if let Some(skill) = skill {
        let Value::Object(skill) = skill else {
            return Err(Refusal::invalid("skill must be an object {\"hash\"}"));
        };
        if skill.keys().any(|field| field != "hash") {
            return Err(Refusal::invalid("skill holds only hash"));
        }
        if !skill
            .get("hash")
            .and_then(Value::as_str)
            .is_some_and(is_hash)
        {
            return Err(Refusal::invalid(
                "skill.hash must be 64 lowercase hex digits (the file's sha256)",
            ));
        }
    }
    if let Some(inputs) = inputs {
        check_inputs(inputs)?;
    }
    Ok(())
}

fn check_inputs(inputs: &Value) -> Result<(), Refusal> {
    let Some(items) = inputs
        .as_array()
        .filter(|items| (1..=INPUTS_MAX).contains(&items.len()))
    else {
        return Err(Refusal::invalid(format!(
            "inputs must be an array of 1 to {INPUTS_MAX} objects {{\"hash\", \"name\"?}}"
        )));
    };
    let mut seen = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let Value::Object(item) = item else {
            return Err(Refusal::invalid(format!("inputs[{n}] must be an object")));
        };
        if item.keys().any(|field| field != "hash" && field != "name") {
            return Err(Refusal::invalid(format!(
                "inputs[{n}] holds only hash and name"
            )));
        }
        let Some(hash) = item
            .get("hash")
            .and_then(Value::as_str)
            .filter(|h| is_hash(h))
        else {
            return Err(Refusal::invalid(format!(
                "inputs[{n}].hash must be 64 lowercase hex digits (the file's sha256)"
            )));
        };
        if seen.contains(&hash) {
            return Err(Refusal::invalid(format!(
                "inputs[{n}] repeats a file already attached"
            )));
        }
        seen.push(hash);
        match item.get("name") {
            None | Some(Value::Null) => {}
            Some(Value::String(name))
                if (1..=NAME_MAX_CHARS).contains(&name.chars().count())
                    && !name.chars().any(char::is_control) => {}
            Some(_) => {
                return Err(Refusal::invalid(format!(
                    "inputs[{n}].name is a string of 1 to {NAME_MAX_CHARS} characters with no control character"
                )));
            }
        }
    }
    Ok(())
}

/// The attachments a listing's stored content names, skill first (the content was read by
/// [`check_shape`], so anything else is ignored).
pub(crate) fn from_content(content: &Value) -> Vec<Attachment> {
    let mut found = Vec::new();
    if let Some(hash) = content["skill"]["hash"].as_str() {
        found.push(Attachment {
            role: "skill",
            hash: hash.to_owned(),
            name: None,
        });
    }
    for input in content["inputs"].as_array().into_iter().flatten() {
        if let Some(hash) = input["hash"].as_str() {
            found.push(Attachment {
                role: "input",
                hash: hash.to_owned(),
                name: input["name"].as_str().map(str::to_owned),
            });
        }
    }
    found
}

/// Whether an uploaded file's `Content-Type` is markdown (`text/markdown`, any parameters).
fn is_markdown(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("text/markdown"))
}

/// Checks that every attached file exists: the skill as a markdown file on this hub or an
/// index entry, each input as a file on this hub.
///
/// # Errors
/// `invalid:` naming the first missing file; a store failure as the server's fault.
pub(crate) fn admit(conn: &Connection, attachments: &[Attachment]) -> Result<(), Refusal> {
    for attachment in attachments {
        let stored = store::artifact(conn, &attachment.hash).map_err(Refusal::server)?;
        let fine = match attachment.role {
            "skill" => {
                stored.is_some_and(|file| is_markdown(&file.content_type))
                    || crate::index::by_hash(&attachment.hash).is_some()
            }
            _ => stored.is_some(),
        };
        if !fine {
            return Err(Refusal::invalid(if attachment.role == "skill" {
                format!(
                    "the skill {} is neither a markdown file on this hub (upload it with content-type: text/markdown) nor a skill in the index",
                    attachment.hash
                )
            } else {
                format!(
                    "the input {} is not a file on this hub (upload it to /api/v1/artifacts first)",
                    attachment.hash
                )
            }));
        }
    }
    Ok(())
}

/// The attachments of a listing's content as every view shows them: `[{role, hash, name?,
/// source: "hub"|"index", url, scan, bytes, type?}]`. A file of this hub gives its artifact
/// URL, size, type and scan; an index skill its `raw_url` (at its source), size and
/// `unscanned` grade. A file gone from both (not expected: files are immutable) shows `url`
/// and `scan` null. A hub file's `url` is under `mount` (Ronin's: [`crate::artifacts::url_of`]).
///
/// # Errors
/// A store failure.
pub(crate) fn shown(
    conn: &Connection,
    content: &Value,
    mount: &str,
) -> kd_core::db::Result<Vec<Value>> {
    let mut views = Vec::new();
    for attachment in from_content(content) {
        let mut view = match crate::artifacts::shown(conn, &attachment.hash, mount)? {
            Some(mut file) => {
                file["source"] = json!("hub");
                file
            }
            None => match crate::index::by_hash(&attachment.hash) {
                Some(entry) => json!({
                    "hash": attachment.hash,
                    "source": "index",
                    "url": entry["raw_url"],
                    "bytes": entry["bytes"],
                    "scan": entry["scan"],
                    "index": entry["name"],
                }),
                None => json!({ "hash": attachment.hash, "url": null, "scan": null }),
            },
        };
        view["role"] = json!(attachment.role);
        if let Some(name) = attachment.name {
            view["name"] = json!(name);
        }
        views.push(view);
    }
    Ok(views)
}

/// Adds `attachments` to a listing view whose content names any (a view without them is
/// left as it is).
///
/// # Errors
/// A store failure.
pub(crate) fn annotate(
    conn: &Connection,
    view: &mut Value,
    mount: &str,
) -> kd_core::db::Result<()> {
    let attachments = shown(conn, view, mount)?;
    if !attachments.is_empty() {
        view["attachments"] = Value::Array(attachments);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    const H: &str = "a3f1e0c2b4d6a8f0e1c3b5d7f9a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d0f2a4";

    #[test]
    fn only_a_wanted_listing_attaches_and_the_shape_is_strict() {
        let skill = json!({ "skill": { "hash": H } });
        assert!(check_shape(&content(skill.clone()), "wanted").is_ok());
        assert!(check_shape(&content(skill), "service").is_err());
        for bad in [
            json!({ "skill": H }),
            json!({ "skill": { "hash": H, "url": "x" } }),
            json!({ "skill": { "hash": H.to_uppercase() } }),
            json!({ "inputs": [] }),
            json!({ "inputs": [{ "hash": H }, { "hash": H }] }),
            json!({ "inputs": [{ "hash": H, "name": "" }] }),
            json!({ "inputs": [{ "hash": H, "name": "a\u{0}b" }] }),
            json!({ "inputs": [{ "hash": H, "size": 1 }] }),
            json!({ "inputs": (0..6).map(|n| json!({ "hash": format!("{n:064x}") })).collect::<Vec<_>>() }),
        ] {
            assert!(
                check_shape(&content(bad.clone()), "wanted").is_err(),
                "{bad} was accepted"
            );
        }
        let inputs =
            json!({ "inputs": [{ "hash": H, "name": "notes.csv" }, { "hash": "0".repeat(64) }] });
        assert!(check_shape(&content(inputs.clone()), "wanted").is_ok());
        let found = from_content(&inputs);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].name.as_deref(), Some("notes.csv"));
        assert_eq!(found[1].role, "input");
    }

    #[test]
    fn markdown_is_recognised_with_parameters_and_any_case() {
        assert!(is_markdown("text/markdown"));
        assert!(is_markdown("Text/Markdown; charset=utf-8"));
        assert!(!is_markdown("text/plain"));
        assert!(!is_markdown("text/markdownx"));
    }
}
