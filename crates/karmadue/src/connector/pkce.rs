//! PKCE (RFC 7636) with the S256 method only, and the redirect URI rules of the connector
//! (RFC 8252 §7.3, OAuth 2.1 §2.3.1): pure functions, no I/O.
//!
//! Library choice (docs/decisions.md 303): S256 is `BASE64URL(SHA-256(ASCII(verifier)))`,
//! computed with the workspace's `sha2` and `kd_protocol::b64`; the `oauth2` crate is a client
//! library (it makes challenges, it does not check them) and `oxide-auth` would own the grant
//! rules we must write ourselves (rotation, reuse, resource binding).

use sha2::{Digest, Sha256};

/// The one PKCE method accepted.
pub const S256: &str = "S256";

/// Whether `text` is a verifier or challenge of RFC 7636 §4.1 form: 43 to 128 characters of
/// `A-Z a-z 0-9 - . _ ~`.
pub fn well_formed(text: &str) -> bool {
    (43..=128).contains(&text.len())
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of `verifier`.
pub fn challenge_of(verifier: &str) -> String {
    kd_protocol::b64::encode_url(&Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` is well formed and its S256 challenge is `challenge` (constant-time
/// comparison).
pub fn verifies(verifier: &str, challenge: &str) -> bool {
    if !well_formed(verifier) {
        return false;
    }
    let computed = challenge_of(verifier);
    computed.len() == challenge.len()
        && computed
            .bytes()
            .zip(challenge.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A redirect URI split into what matching needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts<'a> {
    scheme: &'a str,
    host: &'a str,
    port: Option<&'a str>,
    rest: &'a str,
}

fn split(uri: &str) -> Option<Parts<'_>> {
    let (scheme, after) = uri.split_once("://")?;
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (inner, tail) = v6.split_once(']')?;
        let port = tail.strip_prefix(':');
        (&authority[..inner.len() + 2], port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if port.is_some_and(|port| port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    Some(Parts {
        scheme,
        host,
        port,
        rest,
    })
}

fn loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || matches!(host, "127.0.0.1" | "[::1]")
}

/// The longest redirect URI a client may register (docs/decisions.md 347).
pub const MAX_REDIRECT_URI: usize = 2_000;

/// Why a redirect URI cannot be registered, or `None` when it can: `https` (any host), or
/// `http` on a loopback host (`localhost`, `127.0.0.1`, `[::1]`) with any port; never a
/// fragment, userinfo, or another scheme (`javascript:`, `data:`, custom schemes).
pub fn redirect_refusal(uri: &str) -> Option<&'static str> {
    if uri.len() > MAX_REDIRECT_URI {
        return Some("A redirect URI is at most 2,000 characters.");
    }
    if !uri.is_ascii() {
        return Some(
            "A redirect URI is ASCII: write an international host in punycode (xn--…) and \
             percent-encode the rest.",
        );
    }
    if uri.contains('#') {
        return Some("A redirect URI may not have a fragment.");
    }
    if uri.chars().any(char::is_whitespace) {
        return Some("A redirect URI may not contain spaces.");
    }
    let Some(parts) = split(uri) else {
        return Some("A redirect URI is an absolute https URL, or http on localhost.");
    };
    if !host_is_plain(uri, parts.host) {
        return Some(
            "A redirect URI's host is a DNS name (letters, digits, hyphens and dots) or an IP \
             address.",
        );
    }
    match parts.scheme {
        "https" => None,
        "http" if loopback(parts.host) => None,
        "http" => Some("http redirect URIs are allowed only on localhost, 127.0.0.1 or [::1]."),
        _ => Some("A redirect URI is https, or http on localhost (no other scheme)."),
    }
}

/// Whether the URL parser (WHATWG, the `url` crate) reads `uri` with the host `host` our
/// own split found, and that host is an IP address or a DNS name of letters, digits and
/// hyphens in dot-separated labels: the grammar of a CSP host source, so a registered URI
/// can never carry `;` or other text into the consent page's `form-action` (issue 35: a
/// host like `good.example;sandbox` got there).
fn host_is_plain(uri: &str, host: &str) -> bool {
    let Ok(parsed) = url::Url::parse(uri) else {
        return false;
    };
    match parsed.host() {
        Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => parsed
            .host_str()
            .is_some_and(|seen| seen.eq_ignore_ascii_case(host)),
        Some(url::Host::Domain(domain)) => {
            domain.eq_ignore_ascii_case(host)
                && domain.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        }
        None => false,
    }
}

/// Whether `sent` matches the registered `registered` exactly, except that the port of an
/// `http` loopback URI is ignored (RFC 8252 §7.3: native apps pick an ephemeral port).
pub fn redirect_matches(registered: &str, sent: &str) -> bool {
    if registered == sent {
        return true;
    }
    match (split(registered), split(sent)) {
        (Some(left), Some(right)) => {
            left.scheme == "http"
                && right.scheme == "http"
                && loopback(left.host)
                && left.host.eq_ignore_ascii_case(right.host)
                && left.rest == right.rest
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            challenge_of(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(verifies(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!verifies("short", &challenge_of("short")));
        let bad_alphabet = format!("{}!", "a".repeat(43));
        assert!(!verifies(&bad_alphabet, &challenge_of(&bad_alphabet)));
        assert!(!well_formed(&"a".repeat(129)));
    }

    #[test]
    fn redirects() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://localhost/callback",
            "http://127.0.0.1:33418/cb",
            "http://[::1]:9/x",
        ] {
            assert_eq!(redirect_refusal(good), None, "{good}");
        }
        for bad in [
            "http://example.com/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "https://example.com/cb#frag",
            "myapp://cb",
            "https://user@example.com/cb",
            "",
            // Issue 35: hosts that are not DNS names, whatever a lenient parser accepts.
            "https://good.example;sandbox/cb",
            "https://good.example;script-src%20*/cb",
            "https://good.example,evil.example/cb",
            "https://good_example.com/cb",
            "https://-good.example/cb",
            "https://good..example/cb",
            "https://a.example\\@evil.example/cb",
        ] {
            assert!(redirect_refusal(bad).is_some(), "{bad}");
        }
        assert!(redirect_matches(
            "http://localhost/callback",
            "http://localhost:51234/callback"
        ));
        assert!(redirect_matches(
            "http://127.0.0.1:1/cb",
            "http://127.0.0.1:2/cb"
        ));
        assert!(!redirect_matches(
            "http://localhost/callback",
            "http://127.0.0.1:5/callback"
        ));
        assert!(!redirect_matches(
            "https://example.com/cb",
            "https://example.com:444/cb"
        ));
        assert!(!redirect_matches(
            "http://localhost/callback",
            "http://localhost:5/other"
        ));
    }
}
