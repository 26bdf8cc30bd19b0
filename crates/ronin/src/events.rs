//! `POST /api/v1/events` (Ronin "Events", "Kinds"): one signed event, or an ordered array of
//! up to 25 taken all or nothing.
//!
//! Each event is read strictly and verified ([`kd_protocol::nostr`]: the id recomputed, the
//! BIP-340 signature checked), its `created_at` must be at most 600 s ahead of the server clock
//! and at most 24 h behind, and its content must have its kind's shape, all before the store is
//! touched. Then, in one writer transaction, each event in order: a known id is `duplicate:`,
//! a revoked key is `restricted:`, a listing needs its owner's profile (an earlier event of the
//! same batch counts), and the event is stored, applied to the projections and recorded in the
//! global log as `ronin.event`. A refusal anywhere rolls the whole batch back and names the
//! failing `index`.
//!
//! Kinds taken so far: 0 PROFILE, 31100 LISTING and 1108 REVOKE. The task chain (1100-1106),
//! SUCCESSOR (1107), CLAIM (1109) and CERTIFY (1110) are refused as not supported yet.

use kd_core::db::{OptionalExtension, params};
use kd_core::eventlog::EventPayload;
use kd_core::store::WriteTxn;
use kd_protocol::nostr::Event;
use serde_json::{Map, Value};

use crate::{Refusal, Ronin};

/// The most events one POST may carry.
pub const BATCH_MAX: usize = 25;
/// How far ahead of the server clock `created_at` may be, in seconds.
pub const AHEAD_MAX_S: i64 = 600;
/// How far behind the server clock `created_at` may be, in seconds.
pub const BEHIND_MAX_S: i64 = 86_400;

/// PROFILE.
pub const PROFILE: u16 = 0;
/// LISTING (addressable, `d` tag).
pub const LISTING: u16 = 31100;
/// REVOKE.
pub const REVOKE: u16 = 1108;

/// The LISTING content fields the listing view shows (section 4).
pub const LISTING_FIELDS: [&str; 11] = [
    "title",
    "description",
    "type",
    "price_hint",
    "currency",
    "available",
    "capabilities",
    "format",
    "license",
    "terms",
    "skill",
];

/// The most tags an event may carry.
pub const TAGS_MAX: usize = 100;

/// The doors a PROFILE's `source` tag may name.
pub const SOURCES: [&str; 6] = ["web", "curl", "client", "worker", "mcp", "plugin"];

/// An event that passed every check that needs no store, with what its kind will write.
#[derive(Debug)]
pub(crate) struct Checked {
    event: Event,
    effect: Effect,
}

#[derive(Debug)]
enum Effect {
    Profile {
        name: String,
        about: Option<String>,
        human: bool,
        callback: Option<String>,
        source: Option<String>,
        referred_by: Option<String>,
    },
    Listing {
        d: String,
        kind: String,
        available: bool,
        content: Value,
        scan: Value,
    },
    Revoke,
}

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::invalid(message)
}

/// Reads the body: one event object, or an array of 1 to [`BATCH_MAX`] of them. Each event
/// comes back as its own JSON text, so that [`Event::parse`] sees it as sent (a repeated field
/// is refused there, never read as its last value). The flag says whether it was one object.
///
/// # Errors
/// `invalid:` for anything else (index 0).
pub(crate) fn read_body(body: &[u8]) -> Result<(Vec<String>, bool), Refusal> {
    let text = std::str::from_utf8(body).map_err(|_| invalid("the body is not UTF-8"))?;
    match text.trim_start().chars().next() {
        Some('{') => Ok((vec![text.to_owned()], true)),
        Some('[') => {
            let items: Vec<Box<serde_json::value::RawValue>> = serde_json::from_str(text)
                .map_err(|error| invalid(format!("the body is not a JSON array ({error})")))?;
            if items.is_empty() {
                return Err(invalid("an empty array holds no event"));
            }
            if items.len() > BATCH_MAX {
                return Err(invalid(format!(
                    "at most {BATCH_MAX} events per request, got {}",
                    items.len()
                )));
            }
            Ok((
                items.iter().map(|item| item.get().to_owned()).collect(),
                false,
            ))
        }
        _ => Err(invalid(
            "the body must be an event object or an array of them",
        )),
    }
}

/// Every check of one event that needs no store: shape, id, signature, time window, content.
///
/// # Errors
/// `invalid:` naming what is wrong.
pub(crate) fn check(text: &str, now_s: i64) -> Result<Checked, Refusal> {
    let event = Event::parse(text).map_err(|error| invalid(error.to_string()))?;
    event.verify().map_err(|error| invalid(error.to_string()))?;
    if event.tags.len() > TAGS_MAX {
        return Err(invalid(format!("an event carries at most {TAGS_MAX} tags")));
    }
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    if created_at > now_s.saturating_add(AHEAD_MAX_S) {
        return Err(invalid(
            "created_at is more than 600 s ahead of server time",
        ));
    }
    if created_at < now_s.saturating_sub(BEHIND_MAX_S) {
        return Err(invalid("created_at is more than 24 h behind server time"));
    }
    let effect = match event.kind {
        PROFILE => profile(&event)?,
        LISTING => listing(&event)?,
        REVOKE => {
            if event.content.chars().count() > 500 {
                return Err(invalid("a REVOKE reason is at most 500 characters"));
            }
            Effect::Revoke
        }
        1100..=1107 | 1109 | 1110 => {
            return Err(invalid(format!(
                "kind {} is not supported by this hub yet (so far: 0 PROFILE, 31100 LISTING, 1108 REVOKE)",
                event.kind
            )));
        }
        other => return Err(invalid(format!("kind {other} is not a Ronin kind"))),
    };
    Ok(Checked { event, effect })
}

/// The content as a JSON object, read strictly: a repeated key (which readers would resolve
/// differently) and the inputs PostgreSQL's jsonb refuses are `invalid`, as for signed
/// KarmaDue arguments (DECISIONS 11).
fn content_object(event: &Event, what: &str) -> Result<Map<String, Value>, Refusal> {
    let canonical = kd_protocol::canonical::canonical_text(&event.content)
        .map_err(|error| invalid(format!("{what} content: {error}")))?;
    match serde_json::from_str::<Value>(&canonical) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(invalid(format!("{what} content must be a JSON object"))),
    }
}

/// Every string in `value` (keys included), joined by blank lines: what the scanner reads.
fn all_text(value: &Value, out: &mut String) {
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

fn optional_string<'a>(
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

fn is_lower_hex_64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `http://` or `https://` (any case), then a host of letters, digits, dots, dashes and an
/// optional port, then nothing or a path; no spaces or control characters anywhere.
fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && port.is_none_or(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn profile(event: &Event) -> Result<Effect, Refusal> {
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
    Ok(Effect::Profile {
        name,
        about,
        human,
        callback: callback.map(str::to_owned),
        source: source.map(str::to_owned),
        referred_by: referred_by.map(str::to_owned),
    })
}

fn listing(event: &Event) -> Result<Effect, Refusal> {
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
    let format = optional_string(&map, "format", 16)?;
    let license = optional_string(&map, "license", 16)?;
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
    if ["skill", "inputs"]
        .iter()
        .any(|field| map.get(*field).is_some_and(|value| !value.is_null()))
    {
        return Err(invalid(
            "skill and inputs attachments are not supported by this hub yet",
        ));
    }
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
    Ok(Effect::Listing {
        d,
        kind: kind.to_owned(),
        available,
        content: Value::Object(known),
        scan: serde_json::to_value(scanned).unwrap_or(Value::Null),
    })
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

impl Checked {
    /// The signer's public key.
    pub(crate) fn pubkey(&self) -> &str {
        &self.event.pubkey
    }
}

/// What an accepted batch answers.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub ids: Vec<String>,
    pub kinds: Vec<u16>,
}

/// Stores a checked batch in one writer transaction (see the module doc).
///
/// # Errors
/// The first event's refusal (with its index), or `error:` when the store fails.
pub(crate) async fn store(ronin: &Ronin, batch: Vec<Checked>) -> Result<Accepted, Refusal> {
    let now_ms = ronin.clock.now_ms();
    let outcome = ronin
        .store
        .write(move |txn| {
            let mut accepted = Accepted {
                ids: Vec::new(),
                kinds: Vec::new(),
            };
            for (index, checked) in batch.into_iter().enumerate() {
                apply(txn, &checked, now_ms).map_err(|refusal| refusal.at(index))?;
                accepted.ids.push(checked.event.id.clone());
                accepted.kinds.push(checked.event.kind);
            }
            Ok::<_, Refusal>(accepted)
        })
        .await;
    match outcome {
        Ok(result) => result,
        Err(error) => Err(Refusal::server(error)),
    }
}

/// `ronin.event`: Ronin accepted a signed Nostr event. The log row names it; the event itself
/// (its content and signature) is kept in `ronin_events`, not in the log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoninEventAccepted {
    /// The Nostr event id (NIP-01, lowercase hex).
    pub id: String,
    /// The Nostr event kind.
    pub kind: u16,
    /// The author's x-only public key (hex).
    pub pubkey: String,
}

impl EventPayload for RoninEventAccepted {
    const KIND: &'static str = "ronin.event";
}

fn apply(txn: &mut WriteTxn<'_>, checked: &Checked, now_ms: i64) -> Result<(), Refusal> {
    let event = &checked.event;
    let conn = txn.conn();
    let known: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM ronin_events WHERE id = ?1)")
        .and_then(|mut statement| statement.query_row([&event.id], |row| row.get(0)))
        .map_err(Refusal::server)?;
    if known {
        return Err(Refusal::new("duplicate", "already have this event"));
    }
    let status: Option<String> = conn
        .prepare_cached("SELECT status FROM ronin_keys WHERE pubkey = ?1")
        .and_then(|mut statement| {
            statement
                .query_row([&event.pubkey], |row| row.get(0))
                .optional()
        })
        .map_err(Refusal::server)?;
    if status.as_deref() == Some("revoked") {
        return Err(Refusal::new("restricted", "this key is revoked"));
    }
    if let Effect::Listing { .. } = checked.effect {
        let has_profile: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM ronin_profiles WHERE pubkey = ?1)")
            .and_then(|mut statement| statement.query_row([&event.pubkey], |row| row.get(0)))
            .map_err(Refusal::server)?;
        if !has_profile {
            return Err(invalid("publish a PROFILE (kind 0) before a LISTING"));
        }
    }
    let row = txn
        .record(
            format!("ronin:{}", event.pubkey),
            event.id.clone(),
            &RoninEventAccepted {
                id: event.id.clone(),
                kind: event.kind,
                pubkey: event.pubkey.clone(),
            },
        )
        .map_err(Refusal::server)?;
    let conn = txn.conn();
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO ronin_events (id, pubkey, kind, created_at, event_json, received_ms, log_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut statement| {
        statement.execute(params![
            event.id,
            event.pubkey,
            event.kind,
            created_at,
            event.to_json_text(),
            now_ms,
            row.seq
        ])
    })
    .map_err(Refusal::server)?;
    conn.prepare_cached(
        "INSERT INTO ronin_keys (pubkey, status, first_seen_ms) VALUES (?1, 'active', ?2)
         ON CONFLICT (pubkey) DO NOTHING",
    )
    .and_then(|mut statement| statement.execute(params![event.pubkey, now_ms]))
    .map_err(Refusal::server)?;
    match &checked.effect {
        Effect::Profile {
            name,
            about,
            human,
            callback,
            source,
            referred_by,
        } => {
            // Latest wins: a newer created_at, or the same with a lower id.
            conn.prepare_cached(
                "INSERT INTO ronin_profiles
                   (pubkey, event_id, created_at, name, about, human, callback, source, referred_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (pubkey) DO UPDATE SET
                   event_id = excluded.event_id, created_at = excluded.created_at,
                   name = excluded.name, about = excluded.about, human = excluded.human,
                   callback = excluded.callback, source = excluded.source,
                   referred_by = excluded.referred_by
                 WHERE excluded.created_at > ronin_profiles.created_at
                    OR (excluded.created_at = ronin_profiles.created_at
                        AND excluded.event_id < ronin_profiles.event_id)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    event.pubkey,
                    event.id,
                    created_at,
                    name,
                    about,
                    human,
                    callback,
                    source,
                    referred_by
                ])
            })
            .map_err(Refusal::server)?;
        }
        Effect::Listing {
            d,
            kind,
            available,
            content,
            scan,
        } => {
            conn.prepare_cached(
                "INSERT INTO ronin_listings
                   (owner, d, event_id, created_at, type, available, content, scan)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (owner, d) DO UPDATE SET
                   event_id = excluded.event_id, created_at = excluded.created_at,
                   type = excluded.type, available = excluded.available,
                   content = excluded.content, scan = excluded.scan
                 WHERE excluded.created_at > ronin_listings.created_at
                    OR (excluded.created_at = ronin_listings.created_at
                        AND excluded.event_id < ronin_listings.event_id)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    event.pubkey,
                    d,
                    event.id,
                    created_at,
                    kind,
                    available,
                    content.to_string(),
                    scan.to_string()
                ])
            })
            .map_err(Refusal::server)?;
        }
        Effect::Revoke => {
            conn.prepare_cached(
                "UPDATE ronin_keys SET status = 'revoked', revoked_by = ?2 WHERE pubkey = ?1",
            )
            .and_then(|mut statement| statement.execute(params![event.pubkey, event.id]))
            .map_err(Refusal::server)?;
        }
    }
    Ok(())
}
