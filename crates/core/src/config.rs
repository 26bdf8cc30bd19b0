//! The typed configuration of a hub process (DESIGN rule 9). The CLI fills it from flags and
//! their `KARMADUE_*` environment twins; nothing reads the environment anywhere else.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Default data folder, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = "./karmadue-data";
/// Largest request body accepted on any endpoint, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;

/// Everything `karmadue serve` needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to bind.
    pub listen: SocketAddr,
    /// Folder for the database and the server keys; created on first start.
    pub data_dir: PathBuf,
    /// The public base URL (scheme, host, optional port; no trailing slash). Absolute URLs in
    /// responses are built from it.
    pub public_url: String,
    /// Largest accepted request body, bytes.
    pub max_body_bytes: usize,
    /// Serve the MCP conformance suite's fixture tools (loopback only).
    pub conformance_fixtures: bool,
    /// Load the bundled catalog snapshot when the catalog is empty (first start).
    pub bundled_catalog: bool,
    /// The SMTP relay for mail to people (`smtp://host:port`, `smtps://user:pass@host`, as
    /// lettre reads it). None: mail stays in the outbox for the operator (DECISIONS 7).
    pub smtp_url: Option<Secret>,
    /// The From address of mail to people.
    pub mail_from: String,
    /// The `access_tiers` table: per-minute limits and what each tier unlocks.
    pub access_tiers: crate::tiers::AccessTiers,
    /// Serve `GET /metrics` (Prometheus text: counts only, no ids) on the listen address.
    pub metrics: bool,
}

/// A configuration value that must not be printed (it may hold credentials): `Debug` shows
/// `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("[redacted]")
    }
}

/// `KarmaDue <no-reply@HOST>` for the public URL's host name (`localhost` when the host is an
/// address, which a mailbox cannot name without brackets).
pub fn default_mail_from(public_url: &str) -> String {
    let host = public_url
        .split_once("://")
        .map_or(public_url, |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .unwrap_or_default();
    let host = if host.chars().any(|c| c.is_ascii_alphabetic()) && !host.contains('[') {
        host
    } else {
        "localhost"
    };
    format!("KarmaDue <no-reply@{host}>")
}

impl Config {
    /// A configuration with defaults for everything but the listen address and data folder.
    /// `public_url` defaults to `http://<listen>` (with `localhost` for an unspecified address).
    pub fn new(listen: SocketAddr, data_dir: PathBuf, public_url: Option<String>) -> Self {
        let public_url = public_url
            .map(|url| url.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| default_public_url(listen));
        Self {
            listen,
            data_dir,
            mail_from: default_mail_from(&public_url),
            public_url,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            conformance_fixtures: false,
            bundled_catalog: true,
            smtp_url: None,
            access_tiers: crate::tiers::AccessTiers::default(),
            metrics: true,
        }
    }

    /// The database file inside the data folder.
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("karmadue.sqlite")
    }

    /// The folder of the server keys inside the data folder.
    pub fn keys_dir(&self) -> PathBuf {
        self.data_dir.join("keys")
    }
}

/// `http://<listen>`, writing `localhost` for an unspecified (0.0.0.0 / ::) address.
pub fn default_public_url(listen: SocketAddr) -> String {
    if listen.ip().is_unspecified() {
        format!("http://localhost:{}", listen.port())
    } else {
        format!("http://{listen}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_url_defaults_from_the_listen_address() {
        let config = Config::new("127.0.0.1:8080".parse().unwrap(), "d".into(), None);
        assert_eq!(config.public_url, "http://127.0.0.1:8080");
        let config = Config::new("0.0.0.0:9000".parse().unwrap(), "d".into(), None);
        assert_eq!(config.public_url, "http://localhost:9000");
        let config = Config::new(
            "0.0.0.0:9000".parse().unwrap(),
            "d".into(),
            Some("https://hub.example/".into()),
        );
        assert_eq!(config.public_url, "https://hub.example");
        assert_eq!(config.mail_from, "KarmaDue <no-reply@hub.example>");
    }

    #[test]
    fn the_smtp_url_is_redacted_in_debug_output() {
        let mut config = Config::new("127.0.0.1:8080".parse().unwrap(), "d".into(), None);
        config.smtp_url = Some(Secret::new("smtps://user:hunter2@mail.example"));
        let printed = format!("{config:?}");
        assert!(
            !printed.contains("hunter2") && printed.contains("[redacted]"),
            "{printed}"
        );
        assert_eq!(config.mail_from, "KarmaDue <no-reply@localhost>");
    }
}
