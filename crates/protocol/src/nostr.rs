//! Nostr-style signed events, as Ronin takes them (Ronin document, "Events" and "The key is the
//! cookie: me"; DESIGN "protocol": Nostr event id + BIP-340, NIP-98).
//!
//! An event is `{id, pubkey, created_at, kind, tags, content, sig}`. Its `id` is the lowercase
//! hex SHA-256 of the UTF-8 JSON text of `[0, pubkey, created_at, kind, tags, content]` with no
//! whitespace, strings escaped as `JSON.stringify` escapes them (the seven short escapes
//! `\n \" \\ \r \t \b \f`, `\u00xx` in lowercase hex for the other C0 controls, everything
//! else verbatim: DEL, `/`, U+2028, non-ASCII). `sig` is the BIP-340 Schnorr signature over the
//! 32 id bytes (not hashed again) by the x-only secp256k1 key `pubkey`.
//!
//! [`Event::parse`] reads the wire form strictly: every field present once (a repeated field
//! is refused, so no reader can act on a value another reader did not see), `id`, `pubkey` and
//! `sig` lowercase hex of 64, 64 and 128 digits, `kind` an integer 0-65535, `created_at` a
//! whole number of seconds up to 2^53 - 1 (beyond that JavaScript clients cannot write the
//! same digits), `tags` arrays of one or more strings, `content` a string. Unknown top-level
//! fields are ignored (they are not part of the id). Lone surrogates are refused by the JSON
//! reader. [`Event::verify`] recomputes the id (the `id` field is never trusted) and checks
//! the signature.
//!
//! [`verify_http_auth`] checks a NIP-98 `Authorization: Nostr <base64 event>` header the way
//! Ronin's `me` endpoints take it: kind 27235, `created_at` within 60 s of the server clock,
//! `u` exactly the absolute URL called, `method` the request method (any case), a `nonce` tag,
//! empty content, and a `payload` tag equal to the SHA-256 of the raw body when the endpoint
//! requires one (or whenever the tag is present). Remembering used auth event ids is the
//! caller's part.

use sha2::{Digest, Sha256};

/// The largest `created_at` accepted: 2^53 - 1, the largest integer JavaScript writes exactly.
pub const MAX_CREATED_AT: u64 = (1 << 53) - 1;

/// The NIP-98 HTTP auth event kind.
pub const HTTP_AUTH_KIND: u16 = 27235;

/// How far, in seconds and in either direction, a NIP-98 event's `created_at` may be from the
/// server clock (Ronin: "within 60 s of server time").
pub const HTTP_AUTH_WINDOW_SECS: u64 = 60;

/// The largest decoded NIP-98 event accepted, in bytes.
pub const HTTP_AUTH_MAX_BYTES: usize = 64 * 1024;

/// A signed event as received. Build one with [`Event::parse`] or [`sign_event`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Event {
    /// Lowercase hex SHA-256 of the serialization (as claimed; [`Event::verify`] recomputes it).
    pub id: String,
    /// Lowercase hex x-only secp256k1 public key, 32 bytes.
    pub pubkey: String,
    /// Unix seconds, as the signer wrote them.
    pub created_at: u64,
    /// Event kind, 0-65535.
    pub kind: u16,
    /// Tags, each one or more strings, in the order received (order and duplicates count).
    pub tags: Vec<Vec<String>>,
    /// The content string.
    pub content: String,
    /// Lowercase hex BIP-340 signature over the id bytes, 64 bytes.
    pub sig: String,
}

/// The wire form, read field by field (serde refuses a repeated field and ignores unknown ones).
#[derive(serde::Deserialize)]
struct Wire {
    id: String,
    pubkey: String,
    created_at: u64,
    kind: u16,
    tags: Vec<Vec<String>>,
    content: String,
    sig: String,
}

/// Why an event is refused. The text is what Ronin sends after `invalid: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// Not a JSON object of the event shape (a missing, repeated or mistyped field, bad JSON).
    #[error("not an event: {0}")]
    Shape(String),
    /// A field has the right type but not the right form.
    #[error("{field}: {reason}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong, in plain words.
        reason: &'static str,
    },
    /// `id` is not the SHA-256 of the event's serialization.
    #[error("id is computed incorrectly")]
    IdMismatch,
    /// `pubkey` is not an x-only point on the curve.
    #[error("pubkey is not a valid secp256k1 x-only public key")]
    BadPublicKey,
    /// `sig` does not verify.
    #[error("signature is invalid")]
    BadSignature,
}

fn is_lower_hex(text: &str, digits: usize) -> bool {
    text.len() == digits && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Event {
    /// Reads an event from its JSON text, strictly (see the module doc). The id and signature
    /// are not checked here: call [`Event::verify`].
    ///
    /// # Errors
    /// [`EventError::Shape`] for bad JSON or a missing, repeated or mistyped field;
    /// [`EventError::Field`] for a field of the wrong form.
    pub fn parse(text: &str) -> Result<Self, EventError> {
        // An object only: serde would also read the struct from an array of field values.
        if !text.trim_start().starts_with('{') {
            return Err(EventError::Shape("an event is a JSON object".to_owned()));
        }
        let wire: Wire =
            serde_json::from_str(text).map_err(|error| EventError::Shape(error.to_string()))?;
        Self::from_wire(wire)
    }

    /// Reads an event from an already parsed JSON value. A parsed object has already kept
    /// the last of any repeated key, so prefer [`Event::parse`] on the received text.
    ///
    /// # Errors
    /// As [`Event::parse`] (a value that is not an object is [`EventError::Shape`]).
    pub fn from_value(value: serde_json::Value) -> Result<Self, EventError> {
        if !value.is_object() {
            return Err(EventError::Shape("an event is a JSON object".to_owned()));
        }
        let wire: Wire =
            serde_json::from_value(value).map_err(|error| EventError::Shape(error.to_string()))?;
        Self::from_wire(wire)
    }

    fn from_wire(wire: Wire) -> Result<Self, EventError> {
        let field = |field, reason| Err(EventError::Field { field, reason });
        if !is_lower_hex(&wire.id, 64) {
            return field("id", "must be 64 lowercase hex digits");
        }
        if !is_lower_hex(&wire.pubkey, 64) {
            return field("pubkey", "must be 64 lowercase hex digits");
        }
        if !is_lower_hex(&wire.sig, 128) {
            return field("sig", "must be 128 lowercase hex digits");
        }
        if wire.created_at > MAX_CREATED_AT {
            return field("created_at", "must be at most 2^53 - 1");
        }
        if wire.tags.iter().any(Vec::is_empty) {
            return field("tags", "each tag must hold at least one string");
        }
        Ok(Self {
            id: wire.id,
            pubkey: wire.pubkey,
            created_at: wire.created_at,
            kind: wire.kind,
            tags: wire.tags,
            content: wire.content,
            sig: wire.sig,
        })
    }

    /// The id this event's fields hash to ([`compute_id`]).
    pub fn computed_id(&self) -> String {
        compute_id(
            &self.pubkey,
            self.created_at,
            self.kind,
            &self.tags,
            &self.content,
        )
    }

    /// Checks that `id` is the hash of the fields and that `sig` is `pubkey`'s BIP-340
    /// signature over the id bytes.
    ///
    /// # Errors
    /// [`EventError::IdMismatch`], [`EventError::BadPublicKey`] or [`EventError::BadSignature`].
    pub fn verify(&self) -> Result<(), EventError> {
        if self.computed_id() != self.id {
            return Err(EventError::IdMismatch);
        }
        let id = decode_hex::<32>(&self.id).ok_or(EventError::IdMismatch)?;
        let pubkey = decode_hex::<32>(&self.pubkey).ok_or(EventError::BadPublicKey)?;
        let sig = decode_hex::<64>(&self.sig).ok_or(EventError::BadSignature)?;
        verify_schnorr(&pubkey, &id, &sig)
    }

    /// The first value of the first tag named `name` (`["name", value, ...]`).
    pub fn tag_value(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|tag| tag.first().is_some_and(|first| first == name))
            .and_then(|tag| tag.get(1))
            .map(String::as_str)
    }

    /// The event as JSON text with the fields in NIP-01 order (id, pubkey, created_at, kind,
    /// tags, content, sig): the canonical form to store and serve, whatever the sender wrote.
    pub fn to_json_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The NIP-01 serialization: `[0,<pubkey>,<created_at>,<kind>,<tags>,<content>]` as compact
/// JSON with `JSON.stringify`'s string escaping (serde_json writes the same bytes).
pub fn serialize_for_id(
    pubkey: &str,
    created_at: u64,
    kind: u16,
    tags: &[Vec<String>],
    content: &str,
) -> String {
    serde_json::to_string(&(0u8, pubkey, created_at, kind, tags, content)).unwrap_or_default()
}

/// The event id: lowercase hex SHA-256 of [`serialize_for_id`]'s UTF-8 bytes.
pub fn compute_id(
    pubkey: &str,
    created_at: u64,
    kind: u16,
    tags: &[Vec<String>],
    content: &str,
) -> String {
    hex::encode(Sha256::digest(
        serialize_for_id(pubkey, created_at, kind, tags, content).as_bytes(),
    ))
}

fn decode_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    hex::decode(text).ok()?.try_into().ok()
}

/// BIP-340 verification of `sig` over `message` (any length; for an event, the 32 id bytes)
/// by the x-only key `pubkey`.
///
/// # Errors
/// [`EventError::BadPublicKey`] when `pubkey` is not on the curve; [`EventError::BadSignature`]
/// when the signature does not verify.
pub fn verify_schnorr(pubkey: &[u8; 32], message: &[u8], sig: &[u8; 64]) -> Result<(), EventError> {
    let key = secp256k1::XOnlyPublicKey::from_byte_array(*pubkey)
        .map_err(|_| EventError::BadPublicKey)?;
    let signature = secp256k1::schnorr::Signature::from_byte_array(*sig);
    secp256k1::schnorr::verify(&signature, message, &key).map_err(|_| EventError::BadSignature)
}

/// The x-only public key of a secret key, lowercase hex; `None` for an invalid secret (zero or
/// not below the curve order).
pub fn public_key_hex(secret: &[u8; 32]) -> Option<String> {
    let keypair = secp256k1::Keypair::from_secret_bytes(*secret).ok()?;
    Some(hex::encode(keypair.x_only_public_key().0.to_byte_array()))
}

/// BIP-340 signature of `message` (any length) by `secret` with the given auxiliary
/// randomness; `None` for an invalid secret key.
pub fn sign_schnorr(secret: &[u8; 32], message: &[u8], aux_rand: &[u8; 32]) -> Option<[u8; 64]> {
    let keypair = secp256k1::Keypair::from_secret_bytes(*secret).ok()?;
    Some(secp256k1::schnorr::sign_with_aux_rand(message, &keypair, aux_rand).to_byte_array())
}

/// Signs a new event with `secret`: computes its id and the BIP-340 signature with the given
/// auxiliary randomness (pass 32 fresh random bytes; zeros make the signature deterministic,
/// for tests).
///
/// # Errors
/// [`EventError::Field`] for an invalid secret key, a `created_at` past [`MAX_CREATED_AT`], or
/// an empty tag.
pub fn sign_event(
    secret: &[u8; 32],
    created_at: u64,
    kind: u16,
    tags: Vec<Vec<String>>,
    content: String,
    aux_rand: &[u8; 32],
) -> Result<Event, EventError> {
    let keypair =
        secp256k1::Keypair::from_secret_bytes(*secret).map_err(|_| EventError::Field {
            field: "secret",
            reason: "not a valid secp256k1 secret key",
        })?;
    if created_at > MAX_CREATED_AT {
        return Err(EventError::Field {
            field: "created_at",
            reason: "must be at most 2^53 - 1",
        });
    }
    if tags.iter().any(Vec::is_empty) {
        return Err(EventError::Field {
            field: "tags",
            reason: "each tag must hold at least one string",
        });
    }
    let pubkey = hex::encode(keypair.x_only_public_key().0.to_byte_array());
    let id = compute_id(&pubkey, created_at, kind, &tags, &content);
    let id_bytes = decode_hex::<32>(&id).ok_or(EventError::IdMismatch)?;
    let sig = secp256k1::schnorr::sign_with_aux_rand(&id_bytes, &keypair, aux_rand);
    Ok(Event {
        id,
        pubkey,
        created_at,
        kind,
        tags,
        content,
        sig: hex::encode(sig.to_byte_array()),
    })
}

/// What a NIP-98 header is checked against: the request as the server received it.
#[derive(Debug, Clone, Copy)]
pub struct HttpRequest<'a> {
    /// The absolute URL called, query included, as the public sees it (built from the
    /// configured public URL, never from the `Host` header).
    pub url: &'a str,
    /// The request method, e.g. `GET`.
    pub method: &'a str,
    /// The raw request body (empty for none).
    pub body: &'a [u8],
    /// Whether this endpoint requires a `payload` tag (uploads, POSTs with a body).
    pub payload_required: bool,
    /// The server clock, Unix seconds.
    pub now_s: u64,
}

/// Why a NIP-98 header is refused. The text is what Ronin sends after `unauthorized: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpAuthError {
    /// No `Nostr <base64>` value.
    #[error("Authorization must be \"Nostr <base64 of a signed kind 27235 event>\"")]
    Scheme,
    /// The value is not base64 of at most 64 KiB.
    #[error("the Authorization value is not base64 of an event of at most 64 KiB")]
    Encoding,
    /// The event itself is refused.
    #[error("auth event: {0}")]
    Event(#[from] EventError),
    /// Not kind 27235.
    #[error("the auth event must be kind 27235")]
    Kind,
    /// `created_at` more than 60 s from the server clock.
    #[error("the auth event's created_at must be within 60 s of server time")]
    Stale,
    /// The `u` tag is not the URL called.
    #[error("the auth event's u tag must be exactly the absolute URL called, query included")]
    Url,
    /// The `method` tag is not the request method.
    #[error("the auth event's method tag must be the request method")]
    Method,
    /// No `nonce` tag.
    #[error("the auth event needs a nonce tag")]
    Nonce,
    /// Content is not empty.
    #[error("the auth event's content must be empty")]
    Content,
    /// The `payload` tag is missing where required, or is not the body's SHA-256.
    #[error("the auth event's payload tag must be the sha256 hex of the request body")]
    Payload,
}

/// Checks an `Authorization` header value against the request (see the module doc) and returns
/// the verified auth event; the caller refuses an event id it has seen before.
///
/// The scheme is matched case-insensitively; the event is standard base64, padded or not.
///
/// # Errors
/// [`HttpAuthError`] naming the first failed check.
pub fn verify_http_auth(header: &str, request: &HttpRequest<'_>) -> Result<Event, HttpAuthError> {
    use base64::Engine as _;
    let (scheme, encoded) = header.split_once(' ').ok_or(HttpAuthError::Scheme)?;
    if !scheme.eq_ignore_ascii_case("nostr") || encoded.is_empty() {
        return Err(HttpAuthError::Scheme);
    }
    if encoded.len() > HTTP_AUTH_MAX_BYTES.div_ceil(3) * 4 {
        return Err(HttpAuthError::Encoding);
    }
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let bytes = lenient
        .decode(encoded.trim())
        .map_err(|_| HttpAuthError::Encoding)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| HttpAuthError::Encoding)?;
    let event = Event::parse(text)?;
    event.verify()?;
    if event.kind != HTTP_AUTH_KIND {
        return Err(HttpAuthError::Kind);
    }
    if event.created_at.abs_diff(request.now_s) > HTTP_AUTH_WINDOW_SECS {
        return Err(HttpAuthError::Stale);
    }
    if event.tag_value("u") != Some(request.url) {
        return Err(HttpAuthError::Url);
    }
    if !event
        .tag_value("method")
        .is_some_and(|method| method.eq_ignore_ascii_case(request.method))
    {
        return Err(HttpAuthError::Method);
    }
    if event.tag_value("nonce").is_none_or(str::is_empty) {
        return Err(HttpAuthError::Nonce);
    }
    if !event.content.is_empty() {
        return Err(HttpAuthError::Content);
    }
    match event.tag_value("payload") {
        Some(payload) if payload == hex::encode(Sha256::digest(request.body)) => {}
        None if !request.payload_required => {}
        _ => return Err(HttpAuthError::Payload),
    }
    Ok(event)
}

#[cfg(test)]
mod tests;
