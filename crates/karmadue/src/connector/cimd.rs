//! Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; the MCP
//! authorization spec's preferred registration; issue 12; docs/decisions.md 408): a client
//! whose `client_id` is the https URL of a JSON document describing it needs no registration.
//! The hub fetches the document through its one outbound client (`kd_core::outbound`: SSRF
//! guards on every resolved address, no redirects, time limits) with a 64 KiB cap, checks it,
//! and keeps it in `oauth_clients` like a registered client for as long as its
//! `Cache-Control: max-age` says (at least a minute, at most a day, five minutes when it says
//! nothing).
//!
//! The document must be served as JSON (`application/json` or `application/…+json`), say each
//! top-level key once (docs/decisions.md 423), and be a JSON object whose `client_id` is the
//! URL byte for byte, with 1 to 10 `redirect_uris` under the registration rules, a
//! `client_name` under the same rules (the URL's host when absent), and a
//! `token_endpoint_auth_method` of `none` when present (the hub issues public clients only). A `client_id` is taken as a document URL when it is an
//! https URL with a path; with the operator's `--outbound-allow-private` (tests and local
//! setups) an `http://` URL on a loopback host is taken too. A fetch that fails is refused in
//! plain words (decision 422); expired copies are pruned by the next fetch's write (426).
//! Fetches past [`FETCHES_PER_MINUTE`] answer 429 (425).

use kd_core::outbound::{self, Request};
use kd_kernel::Kernel;
use serde::Deserialize;

use super::{ConnectorError, pkce, store};
use store::ClientRow;

/// Document fetches one address may cause in a rolling minute (a stored copy in date costs
/// nothing), as registrations (docs/decisions.md 408).
pub const FETCHES_PER_MINUTE: u32 = 10;
/// The most bytes of a metadata document read.
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024;
/// How long a document is used when its answer says nothing about caching, in seconds.
pub const DEFAULT_CACHE_S: i64 = 300;
/// The shortest time a fetched document is used, in seconds.
pub const MIN_CACHE_S: i64 = 60;
/// The longest time a fetched document is used, in seconds (a day).
pub const MAX_CACHE_S: i64 = 86_400;

/// Whether `client_id` names a metadata document: an https URL with a path other than `/`
/// (with `allow_private`, also an http URL on 127.0.0.1, `[::1]` or `localhost`).
pub fn is_document_url(client_id: &str, allow_private: bool) -> bool {
    // Parsed as a browser parses it (the outbound client's parser, nothing refused yet).
    let Ok(url) = outbound::parse_url(client_id, &outbound::Policy::new(true)) else {
        return false;
    };
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"));
    let scheme_ok =
        url.scheme() == "https" || (allow_private && url.scheme() == "http" && loopback);
    scheme_ok
        && url.path() != "/"
        && url.username().is_empty()
        && url.password().is_none()
        && url.fragment().is_none()
        && url.as_str() == client_id
}

/// A metadata document's fields the hub uses (anything else is ignored).
#[derive(Debug, Deserialize)]
struct Document {
    client_id: String,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Makes sure the client of the document at `client_id` is stored and fresh: a stored copy
/// still in date is used as is; otherwise the document is fetched and checked, and stored.
///
/// # Errors
/// `invalid_client` naming what was wrong (the fetch refused or failed, not 200, not the
/// document of this URL, bad redirect URIs or name, a confidential method); `rate_limited`
/// past [`FETCHES_PER_MINUTE`] fetches from `ip`; a store failure.
pub async fn refresh(
    hub: &Kernel,
    client_id: &str,
    ip: Option<std::net::IpAddr>,
) -> Result<(), ConnectorError> {
    let id = client_id.to_owned();
    let now_ms = hub.clock.now_ms();
    let expiry = hub
        .store
        .read(move |conn| store::document_expiry(conn, &id).map_err(ConnectorError::from))
        .await?;
    if expiry.is_some_and(|until| until > now_ms) {
        return Ok(());
    }
    super::admit_per_address(hub, ip, "oauth:cimd-ip", FETCHES_PER_MINUTE)
        .await
        .map_err(|error| match error {
            ConnectorError::RateLimited { retry_after_s } => {
                ConnectorError::DocumentFetchesLimited { retry_after_s }
            }
            other => other,
        })?;
    let policy = outbound::Policy {
        max_response_bytes: MAX_DOCUMENT_BYTES,
        ..hub.config.outbound_policy()
    };
    let request = Request::get(client_id).header("accept", "application/json");
    let response = outbound::send(request, policy)
        .await
        .map_err(|error| not_fetched(client_id, &error))?;
    if response.status != 200 {
        return Err(refused(
            client_id,
            &format!("it answered HTTP {}", response.status),
        ));
    }
    if let Some(why) = media_type_refusal(response.content_type.as_deref()) {
        return Err(refused(client_id, &why));
    }
    let client = checked(client_id, &response.body)?;
    let cache_s = cache_seconds(response.cache_control.as_deref());
    hub.store
        .write(move |txn| -> Result<(), ConnectorError> {
            let now = txn.now_ms();
            super::prune::expired_documents(txn.conn(), now)?;
            store::upsert_document_client(txn.conn(), &client, now + cache_s * 1000, now)?;
            Ok(())
        })
        .await?
}

/// The top-level keys of a JSON object, in order, repeats kept (serde_json keeps the last
/// of a repeated key silently; a document saying two things is refused instead).
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Keys;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Why a document served with `content_type` is refused (docs/decisions.md 423): it must be
/// `application/json` or an `application/…+json` type, parameters aside.
fn media_type_refusal(content_type: Option<&str>) -> Option<String> {
    let Some(value) = content_type else {
        return Some("it was served without a Content-Type; it must be application/json".into());
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let json = essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"));
    (!json).then(|| {
        let shown: String = essence
            .chars()
            .take(60)
            .filter(|c| !c.is_control())
            .collect();
        format!("it was served as {shown}, not as JSON; it must be application/json")
    })
}

/// The refusal of a fetch that did not complete, in plain words (the outbound client's own
/// words go to the log only; docs/decisions.md 422).
fn not_fetched(client_id: &str, error: &outbound::OutboundError) -> ConnectorError {
    use outbound::OutboundError as E;
    let why = match error {
        E::Untrusted => "its TLS certificate is not trusted".to_owned(),
        E::Timeout => "its host did not answer in time".to_owned(),
        E::Failed(detail) => {
            tracing::info!(client_id, detail = %detail, "metadata document fetch failed");
            "the connection to its host failed".to_owned()
        }
        other => other.to_string(),
    };
    ConnectorError::InvalidClient(format!(
        "The client's metadata document at {client_id} could not be fetched: {why}."
    ))
}

/// The client a fetched document describes, checked.
fn checked(client_id: &str, body: &[u8]) -> Result<ClientRow, ConnectorError> {
    let Keys(keys) =
        serde_json::from_slice(body).map_err(|_| refused(client_id, "it is not a JSON object"))?;
    let mut seen = std::collections::HashSet::new();
    if let Some(repeated) = keys.iter().find(|key| !seen.insert(key.as_str())) {
        let shown: String = repeated
            .chars()
            .take(40)
            .filter(|c| !c.is_control())
            .collect();
        return Err(refused(
            client_id,
            &format!("the key \"{shown}\" appears more than once in it"),
        ));
    }
    let document: Document = serde_json::from_slice(body)
        .map_err(|_| refused(client_id, "it is not a JSON object with string fields"))?;
    if document.client_id != client_id {
        return Err(refused(
            client_id,
            "its client_id is not this URL, byte for byte",
        ));
    }
    if document.redirect_uris.is_empty() || document.redirect_uris.len() > 10 {
        return Err(refused(client_id, "redirect_uris must hold 1 to 10 URIs"));
    }
    for uri in &document.redirect_uris {
        if let Some(why) = pkce::redirect_refusal(uri) {
            return Err(refused(client_id, why));
        }
    }
    if document
        .token_endpoint_auth_method
        .as_deref()
        .is_some_and(|method| method != "none")
    {
        return Err(refused(
            client_id,
            "this hub takes public clients only: token_endpoint_auth_method must be none",
        ));
    }
    let host = outbound::parse_url(client_id, &outbound::Policy::new(true))
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default();
    let name = document
        .client_name
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or(host);
    if super::name_refusal(&name).is_some() {
        return Err(refused(
            client_id,
            "client_name must be one line of at most 100 characters without invisible characters",
        ));
    }
    Ok(ClientRow {
        client_id: client_id.to_owned(),
        client_name: name,
        redirect_uris: document.redirect_uris,
    })
}

/// How long a fetched document is used, from its `Cache-Control`: `max-age` clamped to
/// [`MIN_CACHE_S`]..=[`MAX_CACHE_S`]; `no-store` or `no-cache` the minimum; nothing said
/// [`DEFAULT_CACHE_S`].
pub fn cache_seconds(cache_control: Option<&str>) -> i64 {
    let Some(text) = cache_control else {
        return DEFAULT_CACHE_S;
    };
    let mut max_age = None;
    for directive in text.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return MIN_CACHE_S;
        }
        if let Some(seconds) = lower.strip_prefix("max-age=") {
            max_age = seconds.trim_matches('"').parse::<i64>().ok();
        }
    }
    max_age.map_or(DEFAULT_CACHE_S, |seconds| {
        seconds.clamp(MIN_CACHE_S, MAX_CACHE_S)
    })
}

/// The host (and port, when the URL names one) of a metadata-document client's URL, shown
/// next to its name on the consent screen and *Connected apps* (two apps may share a name;
/// docs/decisions.md 424); `None` for a client registered by DCR (`kdcl_…`).
pub fn document_host(client_id: &str) -> Option<String> {
    let url = outbound::parse_url(client_id, &outbound::Policy::new(true)).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

fn refused(client_id: &str, why: &str) -> ConnectorError {
    ConnectorError::InvalidClient(format!(
        "The client's metadata document at {client_id} cannot be used: {why}."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls_are_https_with_a_path_or_loopback_http_when_allowed() {
        assert!(is_document_url(
            "https://app.example/oauth/client.json",
            false
        ));
        assert!(!is_document_url("https://app.example/", false));
        assert!(!is_document_url("https://app.example", false));
        assert!(!is_document_url("kdcl_0123", false));
        assert!(!is_document_url("http://127.0.0.1:8000/client.json", false));
        assert!(is_document_url("http://127.0.0.1:8000/client.json", true));
        assert!(!is_document_url("http://app.example/client.json", true));
        assert!(!is_document_url("https://user@app.example/c.json", false));
        assert!(!is_document_url("https://app.example/c.json#x", false));
        assert!(!is_document_url("https://APP.example/c.json", false));
    }

    #[test]
    fn json_media_types_pass_and_others_are_refused() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/oauth-client+json",
        ] {
            assert_eq!(media_type_refusal(Some(ok)), None, "{ok}");
        }
        for bad in [
            None,
            Some("text/html"),
            Some("text/json"),
            Some("application/jsonp"),
        ] {
            assert!(media_type_refusal(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn the_document_host_is_the_urls_host_and_port() {
        assert_eq!(
            document_host("https://app.example/c.json").as_deref(),
            Some("app.example")
        );
        assert_eq!(
            document_host("https://127.0.0.1:8443/c.json").as_deref(),
            Some("127.0.0.1:8443")
        );
        assert_eq!(document_host("kdcl_0123"), None);
    }

    #[test]
    fn the_cache_follows_max_age_within_bounds() {
        assert_eq!(cache_seconds(None), DEFAULT_CACHE_S);
        assert_eq!(cache_seconds(Some("public, max-age=3600")), 3600);
        assert_eq!(cache_seconds(Some("max-age=5")), MIN_CACHE_S);
        assert_eq!(cache_seconds(Some("max-age=9999999")), MAX_CACHE_S);
        assert_eq!(cache_seconds(Some("no-store")), MIN_CACHE_S);
        assert_eq!(cache_seconds(Some("private")), DEFAULT_CACHE_S);
    }
}
