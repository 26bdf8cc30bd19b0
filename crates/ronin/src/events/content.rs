//! The content rules of PROFILE (0) and LISTING (31100) (Ronin "Kinds", section 4), and the
//! readers every kind's content shares: a strict JSON object, bounded strings, 64-hex values.

use kd_protocol::nostr::Event;
use serde_json::{Map, Value};

use super::{Effect, LISTING_FIELDS, SOURCES, invalid};
use crate::Refusal;
use crate::store::{Listing, Profile};

/// The content as a JSON object, read strictly: a repeated key (which readers would resolve
/// differently) and the inputs PostgreSQL's jsonb refuses are `invalid`, as for signed
/// KarmaDue arguments (DECISIONS 11).
pub(super) fn content_object(event: &Event, what: &str) -> Result<Map<String, Value>, Refusal> {
    let canonical = kd_protocol::canonical::canonical_text(&event.content)
        .map_err(|error| invalid(format!("{what} content: {error}")))?;
    match serde_json::from_str::<Value>(&canonical) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(invalid(format!("{what} content must be a JSON object"))),
    }
}

/// Every string in `value` (keys included), joined by blank lines: what the scanner reads.
pub(super) fn all_text(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push_str("\n\n");
        }
        Value::Array(items) => items.iter().for_each(|item| all_text(item, out)),
        Value::Object(map) => {
            for (key, item) in map {
                out.push_str(key);
                out.push_str("\n\n");
                all_text(item, out);
            }
        }
        _ => {}
    }
}

/// A name or label: no control or format characters, not blank.
fn plain_label(text: &str) -> bool {
    !text.trim().is_empty()
        && !text
            .chars()
            .any(|c| c.is_control() || kd_core::scanner::is_format(c))
}

pub(super) fn optional_string<'a>(
    map: &'a Map<String, Value>,
    field: &str,
    max_chars: usize,
) -> Result<Option<&'a str>, Refusal> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.chars().count() <= max_chars => Ok(Some(text)),
        Some(Value::String(_)) => Err(invalid(format!(
            "{field} is at most {max_chars} characters"
        ))),
        Some(_) => Err(invalid(format!("{field} must be a string"))),
    }
}

pub(super) fn is_lower_hex_64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A PROFILE's `callback`: an absolute http(s) URL as a browser reads it (IPv6 literals and
/// international names included), with a host, no user name or password, and no invisible or
/// direction-changing character (docs/decisions.md 386). Whether its address may be reached
/// is decided at each delivery ([`kd_core::outbound`]).
fn is_http_url(text: &str) -> bool {
    if text
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || kd_core::scanner::is_format(c))
    {
        return false;
    }
    kd_core::outbound::parse_url(text, &kd_core::outbound::Policy::new(false)).is_ok()
}

pub(super) fn profile(event: &Event) -> Result<Effect, Refusal> {
    let map = content_object(event, "PROFILE")?;
    let name = match map.get("name") {
        Some(Value::String(name)) if (1..=64).contains(&name.chars().count()) => name.clone(),
        _ => {
            return Err(invalid(
                "PROFILE name must be a string of 1 to 64 characters",
            ));
        }
    };
    if !plain_label(&name) {
        return Err(invalid(
            "PROFILE name must not be blank or hold control or invisible characters",
        ));
    }
    let about = optional_string(&map, "about", 500)?.map(str::to_owned);
    match optional_string(&map, "keyType", 16)? {
        None | Some("secp256k1") => {}
        Some(_) => return Err(invalid("keyType must be secp256k1")),
    }
    let callback = optional_string(&map, "callback", 512)?;
    if let Some(url) = callback
        && !is_http_url(url)
    {
        return Err(invalid("callback must be an http(s) URL"));
    }
    let human = match map.get("human") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(human)) => *human,
        Some(_) => return Err(invalid("human must be true or false")),
    };
    let tagged = |name: &str| {
        event
            .tags
            .iter()
            .filter(|tag| tag.first().is_some_and(|first| first == name))
            .count()
    };
    if tagged("source") > 1 || tagged("referred_by") > 1 {
        return Err(invalid(
            "a PROFILE takes at most one source and one referred_by tag",
        ));
    }
    let source = event.tag_value("source");
    if let Some(source) = source
        && !SOURCES.contains(&source)
    {
        return Err(invalid(format!(
            "source must be one of {}",
            SOURCES.join(", ")
        )));
    }
    let referred_by = event.tag_value("referred_by");
    if let Some(referrer) = referred_by {
        if !is_lower_hex_64(referrer) {
            return Err(invalid("referred_by must be a 64-hex public key"));
        }
        if referrer == event.pubkey {
            return Err(invalid("a key cannot refer itself"));
        }
    }
    Ok(Effect::Profile(Profile {
        name,
        about,
        human,
        callback: callback.map(str::to_owned),
        source: source.map(str::to_owned),
        referred_by: referred_by.map(str::to_owned),
    }))
}

pub(super) fn listing(event: &Event) -> Result<Effect, Refusal> {
    let d = listing_slug(event)?;
    let map = content_object(event, "LISTING")?;
    if !matches!(map.get("title"), Some(Value::String(title)) if (1..=120).contains(&title.chars().count()))
    {
        return Err(invalid("title must be a string of 1 to 120 characters"));
    }
    optional_string(&map, "description", 2000)?;
    let kind = match optional_string(&map, "type", 16)? {
        None => "service",
        Some(kind @ ("service" | "skill" | "wanted")) => kind,
        Some(_) => return Err(invalid("type must be service, skill or wanted")),
    };
    if let Some(price) = map.get("price_hint").filter(|price| !price.is_null())
        && !price.as_f64().is_some_and(|price| price >= 0.0)
    {
        return Err(invalid("price_hint must be a number >= 0"));
    }
    if let Some(currency) = optional_string(&map, "currency", 16)?
        && currency.is_empty()
    {
        return Err(invalid("currency is 1 to 16 characters"));
    }
    let available = match map.get("available") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(available)) => *available,
        Some(_) => return Err(invalid("available must be true or false")),
    };
    if let Some(capabilities) = map.get("capabilities") {
        let valid = capabilities.as_array().is_some_and(|items| {
            items.len() <= 32
                && items.iter().all(|item| {
                    item.as_str()
                        .is_some_and(|text| (1..=64).contains(&text.chars().count()))
                })
        });
        if !valid {
            return Err(invalid(
                "capabilities must be up to 32 strings of 1 to 64 characters",
            ));
        }
    }
    check_skill_and_terms(&map, kind)?;
    crate::attachments::check_shape(&map, kind)?;
    // What the listing view shows: the known fields only (the signed event, with anything
    // else it holds, is at /events/<id>). The scanner reads every string of the content.
    let known: Map<String, Value> = map
        .iter()
        .filter(|(field, value)| LISTING_FIELDS.contains(&field.as_str()) && !value.is_null())
        .map(|(field, value)| (field.clone(), value.clone()))
        .collect();
    let mut text = String::new();
    all_text(&Value::Object(map.clone()), &mut text);
    let scanned = kd_core::scanner::scan(&text);
    Ok(Effect::Listing(Listing {
        d,
        kind: kind.to_owned(),
        available,
        content: Value::Object(known),
        scan: serde_json::to_value(scanned).unwrap_or(Value::Null),
    }))
}

/// A LISTING's one `d` tag: a slug of 1 to 64 lowercase letters, digits and dashes.
fn listing_slug(event: &Event) -> Result<String, Refusal> {
    let mut d_tags = event
        .tags
        .iter()
        .filter(|tag| tag.first().is_some_and(|name| name == "d"));
    let d = match (d_tags.next(), d_tags.next()) {
        (Some(tag), None) => tag.get(1).cloned().unwrap_or_default(),
        _ => return Err(invalid("a LISTING needs exactly one d tag")),
    };
    if d.is_empty()
        || d.len() > 64
        || !d
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(invalid(
            "the d tag is a slug of 1 to 64 lowercase letters, digits and dashes",
        ));
    }
    Ok(d)
}

/// A skill listing's format and license, and the terms (not on a wanted listing).
fn check_skill_and_terms(map: &Map<String, Value>, kind: &str) -> Result<(), Refusal> {
    let format = optional_string(map, "format", 16)?;
    let license = optional_string(map, "license", 16)?;
    if kind == "skill" {
        if !matches!(format, Some("skill.md" | "mcp" | "script" | "other")) {
            return Err(invalid(
                "a skill listing needs format: skill.md, mcp, script or other",
            ));
        }
        if !matches!(license, Some("per-use" | "perpetual")) {
            return Err(invalid(
                "a skill listing needs license: per-use or perpetual",
            ));
        }
    }
    if let Some(terms) = map.get("terms") {
        if kind == "wanted" {
            return Err(invalid("terms belong on a service or skill listing"));
        }
        check_terms(terms)?;
    }
    Ok(())
}

fn check_terms(terms: &Value) -> Result<(), Refusal> {
    let Value::Object(terms) = terms else {
        return Err(invalid("terms must be an object"));
    };
    for (field, value) in terms {
        let fine = match field.as_str() {
            "auto_accept" => value.is_boolean(),
            "min_price" => value.as_f64().is_some_and(|price| price >= 0.0),
            "currency" => value
                .as_str()
                .is_some_and(|text| (1..=16).contains(&text.chars().count())),
            "max_scope_chars" | "max_open" => value.as_u64().is_some_and(|n| n >= 1),
            _ => return Err(invalid(format!("terms.{field} is not a term"))),
        };
        if !fine {
            return Err(invalid(format!(
                "terms.{field} has the wrong type or range"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_http_url;

    #[test]
    fn a_callback_is_read_as_a_browser_reads_a_url() {
        for fine in [
            "https://example.com/hook",
            "http://127.0.0.1:8080/hook",
            "https://[2606:4700:4700::1111]/hook",
            "http://\u{43f}\u{440}\u{438}\u{43c}\u{435}\u{440}.\u{440}\u{444}/",
            "HTTPS://Example.COM/a?b=c",
        ] {
            assert!(is_http_url(fine), "{fine}");
        }
        for bad in [
            "ftp://example.com/",
            "https://example.com:99999/",
            "https://user:pw@example.com/",
            "https://example.com/\u{202e}",
            "https://exa mple.com/",
            "https://",
            "javascript:alert(1)",
            "/relative",
        ] {
            assert!(!is_http_url(bad), "{bad}");
        }
    }
}
