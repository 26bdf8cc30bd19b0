//! The task chain's events before the store (Ronin "Kinds", kinds 1100-1106): each kind's
//! tags and content, checked on the event alone. What the events reference (a live listing,
//! the right earlier event, the right signer) is checked in the writer ([`super::rules`]).

use kd_protocol::nostr::Event;
use serde_json::{Map, Value};

use super::content::{all_text, content_object, is_lower_hex_64, optional_string};
use super::invalid;
use crate::Refusal;

/// OFFER: the hirer asks for work on a live listing.
pub const OFFER: u16 = 1100;
/// ACCEPT: the listing owner takes the OFFER.
pub const ACCEPT: u16 = 1101;
/// DELIVER: the agent hands over the work.
pub const DELIVER: u16 = 1102;
/// COMPLETE: the buyer confirms the delivery.
pub const COMPLETE: u16 = 1103;
/// RATING: the buyer who completed rates the agent, 1 to 5.
pub const RATING: u16 = 1104;
/// PAID: the buyer who completed records a payment (no money moves here).
pub const PAID: u16 = 1105;
/// RECEIVED: the agent named in the PAID acknowledges it.
pub const RECEIVED: u16 = 1106;

/// A kind's name as the spec writes it.
pub fn name(kind: u16) -> &'static str {
    match kind {
        OFFER => "OFFER",
        ACCEPT => "ACCEPT",
        DELIVER => "DELIVER",
        COMPLETE => "COMPLETE",
        RATING => "RATING",
        PAID => "PAID",
        RECEIVED => "RECEIVED",
        1107 => "SUCCESSOR",
        1108 => "REVOKE",
        1109 => "CLAIM",
        1110 => "CERTIFY",
        0 => "PROFILE",
        31100 => "LISTING",
        _ => "event",
    }
}

/// An OFFER as checked: the listing it names and its terms.
#[derive(Debug)]
pub(crate) struct Offer {
    /// The listing's owner, from the `a` tag.
    pub owner: String,
    /// The listing's `d`, from the `a` tag.
    pub d: String,
    /// The `p` tag: the key the offer names.
    pub p: String,
    pub scope: String,
    /// The price as signed (a JSON number's text).
    pub price: String,
    pub price_value: f64,
    pub currency: String,
    pub deadline: Option<i64>,
    /// The scanner's verdict on the scope.
    pub scan: Value,
    /// Whether that verdict is `clean`.
    pub clean: bool,
}

/// A later event of the chain: the event it references (`e`), the key it names (`p`), and
/// what it adds.
#[derive(Debug)]
pub(crate) struct Step {
    pub kind: u16,
    pub e: String,
    pub p: String,
    pub detail: Detail,
}

/// What a step adds beyond its references.
#[derive(Debug)]
pub(crate) enum Detail {
    /// ACCEPT and COMPLETE (content ignored).
    Plain,
    /// DELIVER: its content (note, hash, url) and the scanner's verdict on it.
    Deliver { content: Value, scan: Value },
    /// RATING: 1 to 5.
    Rating(i64),
    /// PAID and RECEIVED: the `amount` and `currency` tags.
    Money { amount: String, currency: String },
}

fn tags<'a>(event: &'a Event, tag: &str) -> Vec<&'a [String]> {
    event
        .tags
        .iter()
        .filter(|parts| parts.first().is_some_and(|first| first == tag))
        .map(Vec::as_slice)
        .collect()
}

/// The value of the one tag named `tag`: `invalid` when there is none, more than one, or an
/// empty one.
fn one_tag<'a>(event: &'a Event, tag: &str) -> Result<&'a str, Refusal> {
    match tags(event, tag).as_slice() {
        [parts] => match parts.get(1) {
            Some(value) if !value.is_empty() => Ok(value),
            _ => Err(invalid(format!(
                "the {tag} tag of {} has no value",
                article(event.kind)
            ))),
        },
        _ => Err(invalid(format!(
            "{} needs exactly one {tag} tag",
            article(event.kind)
        ))),
    }
}

/// "an OFFER", "a DELIVER".
pub(crate) fn article(kind: u16) -> String {
    let name = name(kind);
    let an = matches!(name.as_bytes().first(), Some(b'A' | b'E' | b'O'));
    format!("{} {name}", if an { "an" } else { "a" })
}

/// A key named in a tag: 64 lowercase hex.
fn key_tag<'a>(event: &'a Event, tag: &str) -> Result<&'a str, Refusal> {
    let key = one_tag(event, tag)?;
    if is_lower_hex_64(key) {
        Ok(key)
    } else {
        Err(invalid(format!(
            "the {tag} tag of {} must be a 64-hex public key",
            article(event.kind)
        )))
    }
}

/// OFFER: `["a","31100:<owner>:<d>"]`, `["p","<owner>"]`, content `{scope, price, currency,
/// deadline?}`.
pub(super) fn offer(event: &Event) -> Result<Offer, Refusal> {
    let address = one_tag(event, "a")?;
    let (owner, d) = match address.split(':').collect::<Vec<_>>().as_slice() {
        ["31100", owner, d] if is_lower_hex_64(owner) && !d.is_empty() => {
            ((*owner).to_owned(), (*d).to_owned())
        }
        _ => {
            return Err(invalid(
                "the a tag of an OFFER must be 31100:<owner pubkey>:<d>",
            ));
        }
    };
    let p = key_tag(event, "p")?.to_owned();
    let map = content_object(event, "OFFER")?;
    let scope = match map.get("scope") {
        Some(Value::String(scope)) if (1..=2000).contains(&scope.chars().count()) => scope.clone(),
        _ => return Err(invalid("scope must be a string of 1 to 2000 characters")),
    };
    let (price, price_value) = match map.get("price") {
        Some(Value::Number(number)) if number.as_f64().is_some_and(|value| value >= 0.0) => {
            (number.to_string(), number.as_f64().unwrap_or(0.0))
        }
        _ => return Err(invalid("price must be a number >= 0")),
    };
    let currency = match map.get("currency") {
        Some(Value::String(currency)) if (1..=16).contains(&currency.chars().count()) => {
            currency.clone()
        }
        _ => return Err(invalid("currency must be a string of 1 to 16 characters")),
    };
    let deadline = match map.get("deadline") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|deadline| i64::try_from(deadline).ok())
                .ok_or_else(|| invalid("deadline must be a Unix time in seconds"))?,
        ),
    };
    let scanned = kd_core::scanner::scan(&scope);
    Ok(Offer {
        owner,
        d,
        p,
        scope,
        price,
        price_value,
        currency,
        deadline,
        clean: scanned.level == kd_core::scanner::Level::Clean,
        scan: serde_json::to_value(scanned).unwrap_or(Value::Null),
    })
}

/// ACCEPT to RECEIVED: one `e` tag (an event id), one `p` tag (a key), and each kind's own
/// tags and content.
pub(super) fn step(event: &Event) -> Result<Step, Refusal> {
    let e = one_tag(event, "e")?;
    if !is_lower_hex_64(e) {
        return Err(invalid(format!(
            "the e tag of {} must be a 64-hex event id",
            article(event.kind)
        )));
    }
    let p = key_tag(event, "p")?;
    let detail = match event.kind {
        DELIVER => deliver(event)?,
        RATING => {
            if event.content.chars().count() > 1000 {
                return Err(invalid("a RATING's text is at most 1000 characters"));
            }
            match one_tag(event, "rating")? {
                value @ ("1" | "2" | "3" | "4" | "5") => Detail::Rating(value.parse().unwrap_or(0)),
                _ => return Err(invalid("the rating tag must be \"1\" to \"5\"")),
            }
        }
        PAID | RECEIVED => {
            if event.kind == PAID {
                paid_content(event)?;
            }
            money(event)?
        }
        _ => Detail::Plain,
    };
    Ok(Step {
        kind: event.kind,
        e: e.to_owned(),
        p: p.to_owned(),
        detail,
    })
}

/// DELIVER content: `{"note"?: <=2000, "hash"?: 64 hex, "url"?: <=512}` or `{}` (an empty
/// content counts as `{}`).
fn deliver(event: &Event) -> Result<Detail, Refusal> {
    let map = if event.content.trim().is_empty() {
        Map::new()
    } else {
        content_object(event, "DELIVER")?
    };
    optional_string(&map, "note", 2000)?;
    optional_string(&map, "url", 512)?;
    if let Some(hash) = optional_string(&map, "hash", 64)?
        && !is_lower_hex_64(hash)
    {
        return Err(invalid("hash must be 64 lowercase hex (a sha256)"));
    }
    let shown: Map<String, Value> = map
        .iter()
        .filter(|(field, value)| {
            ["note", "hash", "url"].contains(&field.as_str()) && !value.is_null()
        })
        .map(|(field, value)| (field.clone(), value.clone()))
        .collect();
    let mut text = String::new();
    all_text(&Value::Object(map), &mut text);
    let scanned = kd_core::scanner::scan(&text);
    Ok(Detail::Deliver {
        content: Value::Object(shown),
        scan: serde_json::to_value(scanned).unwrap_or(Value::Null),
    })
}

/// PAID content: `{"receipt"?: 64 hex}` or empty.
fn paid_content(event: &Event) -> Result<(), Refusal> {
    if event.content.trim().is_empty() {
        return Ok(());
    }
    let map = content_object(event, "PAID")?;
    if let Some(receipt) = optional_string(&map, "receipt", 64)?
        && !is_lower_hex_64(receipt)
    {
        return Err(invalid("receipt must be 64 lowercase hex"));
    }
    Ok(())
}

/// A decimal amount: digits, then optionally a dot and digits (`"2.50"`).
pub(crate) fn is_amount(text: &str) -> bool {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits =
        |part: &str| (1..=18).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && digits(fraction)
}

fn money(event: &Event) -> Result<Detail, Refusal> {
    let amount = one_tag(event, "amount")?;
    if !is_amount(amount) {
        return Err(invalid(
            "the amount tag is a decimal number as a string, like \"2.50\"",
        ));
    }
    let currency = one_tag(event, "currency")?;
    if currency.chars().count() > 16 {
        return Err(invalid("the currency tag is 1 to 16 characters"));
    }
    Ok(Detail::Money {
        amount: amount.to_owned(),
        currency: currency.to_owned(),
    })
}
