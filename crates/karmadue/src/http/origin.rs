//! DNS-rebinding protection of the MCP endpoint (MCP transport "Security"; docs/decisions.md
//! 143). The `Host` must name this hub (its public host or a loopback name). An `Origin`, when
//! sent, must be one of this hub's origins, compared by scheme, host and port (a missing port
//! is the scheme's default):
//!
//! - with a public URL (`--public-url`): that URL's origin, only;
//! - without one, listening on a loopback address: `http://localhost`, `http://127.0.0.1` and
//!   `http://[::1]` at the port the hub serves on;
//! - without one, on any other address: `http://<that address>:<port>`; listening on every
//!   address (`0.0.0.0`), none (set `--public-url` for browser clients).

use axum::http::{HeaderMap, header};

use crate::hub::Hub;

/// An origin as compared: lowercase scheme and host (IPv6 in brackets), and the port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Reads `scheme://host[:port]` (an `Origin` header; a URL's path, if any, is ignored).
    /// `None` for anything else (`null`, no scheme, a bad port, an unknown scheme without one).
    pub fn parse(text: &str) -> Option<Self> {
        let (scheme, rest) = text.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let authority = rest.split(['/', '?', '#']).next()?.to_ascii_lowercase();
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (host, port) = if let Some(after) = authority.strip_prefix('[') {
            let (inside, tail) = after.split_once(']')?;
            (format!("[{inside}]"), tail.strip_prefix(':'))
        } else {
            match authority.split_once(':') {
                Some((host, port)) => (host.to_owned(), Some(port)),
                None => (authority.clone(), None),
            }
        };
        let default_port = match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        let port = match port {
            Some(port) => port.parse().ok()?,
            None => default_port?,
        };
        (!host.is_empty()).then_some(Self { scheme, host, port })
    }
}

/// The origins allowed to call this hub from a browser.
pub fn allowed_origins(hub: &Hub) -> Vec<Origin> {
    let config = &hub.config;
    let Some(public) = Origin::parse(&config.public_url) else {
        return Vec::new();
    };
    if config.public_url_given {
        return vec![public];
    }
    let listen = config.listen.ip();
    if listen.is_loopback() {
        ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(|host| Origin {
                scheme: "http".into(),
                host: host.into(),
                port: public.port,
            })
            .collect()
    } else if listen.is_unspecified() {
        Vec::new()
    } else {
        vec![public]
    }
}

/// Whether `headers` pass: a `Host` naming this hub, and no `Origin` or an allowed one.
pub fn allowed(hub: &Hub, headers: &HeaderMap) -> bool {
    let hosts = allowed_hosts(hub);
    let host_ok = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .is_none_or(|host| hosts.iter().any(|name| *name == hostname(host)));
    let origin_ok = headers.get(header::ORIGIN).is_none_or(|value| {
        value
            .to_str()
            .ok()
            .and_then(Origin::parse)
            .is_some_and(|origin| allowed_origins(hub).contains(&origin))
    });
    host_ok && origin_ok
}

fn allowed_hosts(hub: &Hub) -> Vec<String> {
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "[::1]".to_owned(),
        "::1".to_owned(),
    ];
    if let Some((_, rest)) = hub.config.public_url.split_once("://") {
        names.push(hostname(rest.split('/').next().unwrap_or("")).to_owned());
    }
    let listen = hub.config.listen.ip();
    if !listen.is_unspecified() {
        names.push(match listen {
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            std::net::IpAddr::V4(ip) => ip.to_string(),
        });
    }
    names
}

/// The host part of `host[:port]` (keeping IPv6 brackets), lowercased.
fn hostname(authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    if authority.starts_with('[') {
        return authority
            .split_once(']')
            .map_or(authority.clone(), |(host, _)| format!("{host}]"));
    }
    authority.split(':').next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::Origin;

    #[test]
    fn origins_compare_by_scheme_host_and_port_with_default_ports() {
        let same =
            |a: &str, b: &str| Origin::parse(a).is_some() && Origin::parse(a) == Origin::parse(b);
        assert!(same(
            "https://Hub.Example.org",
            "https://hub.example.org:443"
        ));
        assert!(same("http://127.0.0.1:8080", "http://127.0.0.1:8080/path"));
        assert!(same("http://[::1]:80", "http://[::1]"));
        assert!(!same("http://hub.example.org", "https://hub.example.org"));
        assert!(!same(
            "https://hub.example.org:8443",
            "https://hub.example.org"
        ));
        for junk in [
            "null",
            "hub.example.org",
            "http://",
            "http://h:99999",
            "ftp://h",
            "http://a@h",
        ] {
            assert_eq!(Origin::parse(junk), None, "{junk}");
        }
    }
}
