//! The key events (Ronin sections 7 and 8): SUCCESSOR 1107 (rotation with the new key's
//! proof), CLAIM 1109 (a principal names its agent, with the agent's proof) and CERTIFY 1110
//! (the hub operator vouches that a key is a person). [`successor`], [`claim`] and
//! [`certify`] check the event alone; [`admit_successor`], [`admit_claim`] and
//! [`admit_certify`] check it against the store, before anything is written.

use kd_core::db::Connection;
use kd_protocol::nostr::{Event, verify_schnorr};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::content::{content_object, is_lower_hex_64};
use super::invalid;
use crate::Refusal;
use crate::store;

/// SUCCESSOR: the old key (the signer) names its new key.
pub const SUCCESSOR: u16 = 1107;
/// CLAIM: a principal (the signer) claims an agent.
pub const CLAIM: u16 = 1109;
/// CERTIFY: the operator vouches for a key.
pub const CERTIFY: u16 = 1110;

/// What a key event names.
#[derive(Debug)]
pub(crate) struct KeyEvent {
    /// The `p` tag: the new key (SUCCESSOR), the agent (CLAIM), the key vouched for (CERTIFY).
    pub key: String,
    /// CERTIFY: `{"human": true}` (false withdraws it).
    pub human: bool,
}

fn one_value<'a>(event: &'a Event, name: &str, what: &str) -> Result<&'a str, Refusal> {
    let mut found = event
        .tags
        .iter()
        .filter(|tag| tag.first().is_some_and(|first| first == name));
    match (found.next(), found.next()) {
        (Some(tag), None) => Ok(tag.get(1).map(String::as_str).unwrap_or_default()),
        _ => Err(invalid(format!("{what} needs exactly one {name} tag"))),
    }
}

fn key_tag<'a>(event: &'a Event, what: &str) -> Result<&'a str, Refusal> {
    let key = one_value(event, "p", what)?;
    if is_lower_hex_64(key) {
        Ok(key)
    } else {
        Err(invalid(format!(
            "the p tag of {what} must be a 64-hex public key"
        )))
    }
}

/// Whether `proof` is `signer`'s BIP-340 signature over sha256 of `over`'s 32 key bytes.
fn proves(signer: &str, over: &str, proof: &str) -> bool {
    let decode = |text: &str| hex::decode(text).ok();
    let (Some(signer), Some(over), Some(proof)) = (decode(signer), decode(over), decode(proof))
    else {
        return false;
    };
    let (Ok(signer), Ok(proof)) = (<[u8; 32]>::try_from(signer), <[u8; 64]>::try_from(proof))
    else {
        return false;
    };
    verify_schnorr(&signer, &Sha256::digest(over), &proof).is_ok()
}

/// SUCCESSOR: `["p", <new key>]`, `["proof", <new key's signature over sha256(old key)>]`,
/// content empty.
pub(super) fn successor(event: &Event) -> Result<KeyEvent, Refusal> {
    let new_key = key_tag(event, "a SUCCESSOR")?;
    if new_key == event.pubkey {
        return Err(invalid("a SUCCESSOR names a new key, not the old one"));
    }
    proven(
        event,
        new_key,
        "a SUCCESSOR",
        "the proof must be the new key's signature over sha256 of the old public key's bytes",
    )
}

/// The event's `proof` tag is `key`'s signature over sha256 of the signer's key bytes: the
/// event names `key` (`invalid: <refusal>` otherwise).
fn proven(event: &Event, key: &str, what: &str, refusal: &str) -> Result<KeyEvent, Refusal> {
    let proof = one_value(event, "proof", what)?;
    if !proves(key, &event.pubkey, proof) {
        return Err(invalid(refusal));
    }
    Ok(KeyEvent {
        key: key.to_owned(),
        human: false,
    })
}

/// CLAIM: `["p", <agent>]`, `["proof", <agent's signature over sha256(principal key)>]`, a
/// note of at most 500 characters.
pub(super) fn claim(event: &Event) -> Result<KeyEvent, Refusal> {
    let agent = key_tag(event, "a CLAIM")?;
    if agent == event.pubkey {
        return Err(invalid(
            "a CLAIM is signed by a principal, not by the agent",
        ));
    }
    if event.content.chars().count() > 500 {
        return Err(invalid("a CLAIM's note is at most 500 characters"));
    }
    proven(
        event,
        agent,
        "a CLAIM",
        "the proof must be the agent key's signature over sha256 of the principal's public key bytes",
    )
}

/// CERTIFY: `["p", <key>]`, content `{"human": true}`.
pub(super) fn certify(event: &Event) -> Result<KeyEvent, Refusal> {
    let key = key_tag(event, "a CERTIFY")?;
    let map = content_object(event, "CERTIFY")?;
    let Some(Value::Bool(human)) = map.get("human") else {
        return Err(invalid("CERTIFY content must be {\"human\": true}"));
    };
    Ok(KeyEvent {
        key: key.to_owned(),
        human: *human,
    })
}

fn db<T>(result: kd_core::db::Result<T>) -> Result<T, Refusal> {
    result.map_err(Refusal::server)
}

/// The old key has a profile; the new key is fresh: never a signer here, never a successor.
pub(super) fn admit_successor(
    conn: &Connection,
    event: &Event,
    successor: &KeyEvent,
) -> Result<(), Refusal> {
    if !db(store::lineage_has_profile(conn, &event.pubkey))? {
        return Err(invalid("publish a PROFILE (kind 0) before a SUCCESSOR"));
    }
    let seen = db(store::key_status(conn, &successor.key))?.is_some()
        || db(store::predecessor(conn, &successor.key))?.is_some()
        || db(store::successor(conn, &successor.key))?.is_some();
    if seen {
        return Err(invalid(
            "the new key must be fresh: it has signed on this hub before",
        ));
    }
    Ok(())
}

/// The agent exists (it has signed here), and the principal has not claimed it before.
pub(super) fn admit_claim(
    conn: &Connection,
    event: &Event,
    claim: &KeyEvent,
) -> Result<(), Refusal> {
    if db(store::key_status(conn, &claim.key))?.is_none() {
        return Err(invalid("the agent of a CLAIM must exist on this hub"));
    }
    if db(store::claimed(conn, &claim.key, &event.pubkey))? {
        return Err(Refusal::duplicate(
            "this principal has claimed this agent already",
        ));
    }
    Ok(())
}

/// Only the hub's operator key signs a CERTIFY.
pub(super) fn admit_certify(operator: &str, event: &Event) -> Result<(), Refusal> {
    if event.pubkey != operator {
        return Err(Refusal::restricted(
            "only the hub's operator key signs a CERTIFY",
        ));
    }
    Ok(())
}
