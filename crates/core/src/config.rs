//! The typed configuration of a hub process (DESIGN rule 9). The CLI fills it from flags and
//! their `KARMADUE_*` environment twins; nothing reads the environment anywhere else.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Default data folder, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = "./karmadue-data";
/// Largest request body accepted on any endpoint, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;

/// Default cap on connections served at once (`--max-connections`): below the usual 1024 open
/// files of a process, leaving room for the database, the keys and the search index.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Default share of the cap one address (an IPv6 /64) may hold (`--max-connections-per-address`):
/// an eighth of the default cap, far above what a browser (six) or an MCP client (one or two)
/// opens, so one client cannot take the hub's slots (docs/decisions.md 206).
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 64;
/// Default time a request's head may take, and a kept-alive connection may sit idle.
pub const DEFAULT_HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Default longest wait for the next chunk of a request body.
pub const DEFAULT_BODY_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// Default time in-flight requests get to finish once shutdown begins.
pub const DEFAULT_SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Default time between the transparency log's checkpoints while the log grows.
pub const DEFAULT_CHECKPOINT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// Ronin's mount on the hub's address unless told otherwise (`--ronin-mount`).
pub const DEFAULT_RONIN_MOUNT: &str = "/ronin";

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
    /// Whether `public_url` was given (`--public-url`) rather than made from the listen
    /// address. Browser origins other than the public URL's are allowed only when it was not
    /// and the hub listens on loopback.
    pub public_url_given: bool,
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
    /// Reverse proxies whose `X-Forwarded-For` names the client (empty: the header is
    /// ignored and every request counts for the address that connected).
    pub trusted_proxies: TrustedProxies,
    /// The public ledger folder (DECISIONS 8): the hub writes one `heads/YYYY-MM-DD.json` per
    /// UTC day there, with the verifier `scripts/verify_head.py`. `None`: `<data_dir>/ledger`.
    pub ledger_dir: Option<PathBuf>,
    /// The database (`--database-url`): a `postgres://` URL runs the hub on PostgreSQL, where
    /// several hub processes may share it; `None`: the SQLite file `karmadue.sqlite` in the
    /// data folder.
    pub database_url: Option<Secret>,
    /// Connections served at once; a connection past the cap is closed when accepted.
    pub max_connections: usize,
    /// Connections one address (an IPv6 /64) may hold at once; a trusted proxy's are not
    /// counted. Past it a connection from that address is closed when accepted.
    pub max_connections_per_address: usize,
    /// How long a request's head may take to arrive, counted from when the connection opened
    /// or its previous response went out (so also the idle timeout between requests).
    pub header_read_timeout: std::time::Duration,
    /// Longest wait for the next chunk of a request body.
    pub body_idle_timeout: std::time::Duration,
    /// How long in-flight requests get to finish after shutdown begins; then they are closed.
    pub shutdown_grace: std::time::Duration,
    /// How often the hub signs a checkpoint of the transparency log while the log grows
    /// (`--checkpoint-interval-s`; `kd_core::tlog`).
    pub checkpoint_interval: std::time::Duration,
    /// Whether the hub keeps the transparency log: the writer extends the tree every batch,
    /// checkpoints are signed and signed writes answer a receipt. Always on in the `karmadue`
    /// binary (no flag turns it off); `kd-bench` turns it off for its tree-off baseline
    /// (docs/decisions.md 242).
    pub transparency: bool,
    /// Whether the hub's outbound requests ([`crate::outbound`]: Ronin's callbacks) may reach
    /// loopback, private (RFC 1918), link-local, CGNAT and unique-local addresses
    /// (`--outbound-allow-private`, `KARMADUE_OUTBOUND_ALLOW_PRIVATE`). Off by default: a
    /// callback URL could otherwise make the hub call services on its own network. Turn it on
    /// only for tests and local setups.
    pub outbound_allow_private: bool,
    /// The operator's extra CAs for the outbound client's https, next to the public roots
    /// (`--outbound-ca-file`, `KARMADUE_OUTBOUND_CA_FILE`; docs/decisions.md 420). Empty by
    /// default.
    pub outbound_trusted_cas: crate::outbound::TrustedCas,
    /// Ronin's mount path on the listen address (`--ronin-mount`, default `/ronin`): `/` and
    /// one or more segments, no trailing slash ([`check_ronin_mount`]).
    pub ronin_mount: String,
    /// Ronin's own listen address (`--ronin-listen`): when set, Ronin is served at the root of
    /// it and not on [`Config::listen`] (docs/decisions.md 389).
    pub ronin_listen: Option<SocketAddr>,
    /// The public URL of [`Config::ronin_listen`] (`--ronin-public-url`, no trailing slash;
    /// default `http://<ronin_listen>`). Unused without `ronin_listen`.
    pub ronin_public_url: Option<String>,
}

/// The reverse proxies a hub believes about the client's address (`--trusted-proxies`).
///
/// Behind a proxy every request arrives from the proxy's address, so per-address limits would
/// put all anonymous callers in one bucket. A request that arrives from a trusted proxy is
/// counted for the client its `X-Forwarded-For` names: the list is read from the right (the
/// hop nearest the hub) and the first address that is not itself a trusted proxy is the
/// client. Entries left of it are whatever the client sent and are never read. An entry that
/// is not an address (`unknown`, garbage) ends the walk at the last address read. A request
/// from any other address keeps that address, whatever its headers say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<ipnet::IpNet>);

impl TrustedProxies {
    /// Parses a comma-separated list of addresses and CIDR ranges, e.g.
    /// `127.0.0.1, 10.0.0.0/8, fd00::/8`. Empty text: no proxy is trusted.
    ///
    /// # Errors
    /// The entry that is neither an IP address nor a CIDR range.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for entry in text
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
        {
            let net = entry
                .parse::<ipnet::IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    format!("{entry:?} is not an IP address or a CIDR range (e.g. 10.0.0.0/8)")
                })?;
            let net = ipv4_mapped(net).trunc();
            if net.prefix_len() == 0 {
                return Err(format!(
                    "{entry:?} trusts every address: any client could then name its own address in X-Forwarded-For; list the proxies' addresses or ranges"
                ));
            }
            nets.push(net);
        }
        Ok(Self(nets))
    }

    /// No proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `address` is one of the trusted proxies.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|net| net.contains(&address))
    }

    /// The client's address for a request that came from `peer` carrying the
    /// `X-Forwarded-For` header values `forwarded_for` (in the order received; several
    /// headers read as one comma-separated list).
    pub fn client<'a>(
        &self,
        peer: IpAddr,
        forwarded_for: impl IntoIterator<Item = &'a str>,
    ) -> IpAddr {
        let mut client = peer.to_canonical();
        if !self.contains(client) {
            return client;
        }
        let entries: Vec<&str> = forwarded_for
            .into_iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect();
        for entry in entries.iter().rev() {
            let Some(address) = forwarded_address(entry) else {
                break;
            };
            client = address;
            if !self.contains(client) {
                break;
            }
        }
        client
    }
}

impl std::fmt::Display for TrustedProxies {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let nets: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        formatter.write_str(&nets.join(", "))
    }
}

/// An IPv4-mapped IPv6 range (`::ffff:10.0.0.0/104`, as a dual-stack listener shows IPv4
/// peers) as the IPv4 range it maps (`10.0.0.0/8`): peers are compared in their canonical form.
fn ipv4_mapped(net: ipnet::IpNet) -> ipnet::IpNet {
    if let ipnet::IpNet::V6(v6) = net
        && let Some(v4) = v6.addr().to_ipv4_mapped()
        && v6.prefix_len() >= 96
        && let Ok(mapped) = ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96)
    {
        return ipnet::IpNet::V4(mapped);
    }
    net
}

/// One `X-Forwarded-For` entry as an address: `203.0.113.7`, `2001:db8::1`, or with a port
/// (`203.0.113.7:41234`, `[2001:db8::1]:41234`), as some proxies write it.
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|socket| socket.ip()))
        .ok()
        .map(|address| address.to_canonical())
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
        let public_url_given = public_url.is_some();
        let public_url = public_url
            .map(|url| url.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| default_public_url(listen));
        Self {
            listen,
            data_dir,
            mail_from: default_mail_from(&public_url),
            public_url,
            public_url_given,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            conformance_fixtures: false,
            bundled_catalog: true,
            smtp_url: None,
            access_tiers: crate::tiers::AccessTiers::default(),
            metrics: true,
            trusted_proxies: TrustedProxies::default(),
            ledger_dir: None,
            database_url: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_idle_timeout: DEFAULT_BODY_IDLE_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            checkpoint_interval: DEFAULT_CHECKPOINT_INTERVAL,
            transparency: true,
            outbound_allow_private: false,
            outbound_trusted_cas: crate::outbound::TrustedCas::default(),
            ronin_mount: DEFAULT_RONIN_MOUNT.to_owned(),
            ronin_listen: None,
            ronin_public_url: None,
        }
    }

    /// Where Ronin is served: `(mount, Some(own public URL))` at the root of its own listen
    /// address, else `(ronin_mount, None)` on the hub's.
    pub fn ronin_base(&self) -> (String, Option<String>) {
        match self.ronin_listen {
            Some(listen) => (
                String::new(),
                Some(
                    self.ronin_public_url
                        .as_ref()
                        .map(|url| url.trim_end_matches('/').to_owned())
                        .unwrap_or_else(|| default_public_url(listen)),
                ),
            ),
            None => (self.ronin_mount.clone(), None),
        }
    }

    /// The database file inside the data folder (the default database).
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("karmadue.sqlite")
    }

    /// Where the store lives: `database_url`, or the SQLite file in the data folder.
    pub fn database(&self) -> crate::db::Location {
        self.database_url.as_ref().map_or_else(
            || crate::db::Location::Sqlite(self.database_path()),
            |url| crate::db::Location::parse(url.expose()),
        )
    }

    /// The public ledger folder: `ledger_dir`, or `ledger` inside the data folder.
    pub fn ledger_path(&self) -> PathBuf {
        self.ledger_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("ledger"))
    }

    /// The outbound client's policy for this hub ([`crate::outbound::Policy`]): the defaults,
    /// with private targets allowed only when the operator said so, and the operator's extra
    /// CAs trusted.
    pub fn outbound_policy(&self) -> crate::outbound::Policy {
        crate::outbound::Policy {
            trusted_cas: self.outbound_trusted_cas.clone(),
            ..crate::outbound::Policy::new(self.outbound_allow_private)
        }
    }

    /// The folder of the server keys inside the data folder.
    pub fn keys_dir(&self) -> PathBuf {
        self.data_dir.join("keys")
    }
}

/// The first path segments of the hub's own routes (KarmaDue's, Linkdbots' mount and the
/// metrics): a Ronin mount may not start with one, or it would sit inside or collide with
/// them (docs/decisions.md 391). The API suite checks that every hub route starts with one.
pub const HUB_PATH_ROOTS: [&str; 19] = [
    ".well-known",
    "connect",
    "findings",
    "forum",
    "functions",
    "inbox",
    "linkdbots",
    "llms.txt",
    "log",
    "mcp",
    "metrics",
    "oauth",
    "resource",
    "signin",
    "signout",
    "signup",
    "standards",
    "verify-help",
    "you",
];

/// Checks a mount path for the hub's address: `/` then one or more segments, no trailing
/// slash, no `?`, `#` or `{` (e.g. `/ronin`, `/hire`, `/market/ronin`). The root is not a
/// mount: Ronin is served at the root only on a listen address of its own (decision 389).
///
/// # Errors
/// A sentence naming what is wrong with `mount`.
pub fn check_ronin_mount(mount: &str) -> Result<(), String> {
    if !mount.starts_with('/') {
        return Err(format!("{mount:?} must start with / (e.g. /ronin)"));
    }
    if mount == "/" {
        return Err("the root / is not a mount: give Ronin a listen address of its own (--ronin-listen) to serve it at the root".to_owned());
    }
    if mount.ends_with('/') {
        return Err(format!("{mount:?} must not end with / (e.g. /ronin)"));
    }
    if mount.contains("//") {
        return Err(format!("{mount:?} has an empty segment (//)"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.' | '~');
    if let Some(bad) = mount.chars().find(|c| !allowed(*c)) {
        return Err(format!(
            "{mount:?} holds {bad:?}: use letters, digits, -, _, . and ~ between the slashes"
        ));
    }
    let first = mount[1..].split('/').next().unwrap_or_default();
    if HUB_PATH_ROOTS
        .iter()
        .any(|root| root.eq_ignore_ascii_case(first))
    {
        return Err(format!(
            "{mount:?} starts with /{first}, which the hub's own pages and APIs use: pick another path (e.g. /ronin)"
        ));
    }
    Ok(())
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

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn trusted_proxies_parse_addresses_and_ranges_and_name_a_bad_entry() {
        let proxies = TrustedProxies::parse(" 127.0.0.1, 10.0.0.0/8 ,fd00::/8,").unwrap();
        assert_eq!(proxies.to_string(), "127.0.0.1/32, 10.0.0.0/8, fd00::/8");
        assert!(proxies.contains(ip("10.9.8.7")));
        assert!(proxies.contains(ip("::ffff:127.0.0.1")));
        assert!(!proxies.contains(ip("11.0.0.1")));
        // Host bits are dropped: 10.1.2.3/8 is 10.0.0.0/8.
        assert_eq!(
            TrustedProxies::parse("10.1.2.3/8").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        // IPv4-mapped IPv6 (how a dual-stack listener shows an IPv4 proxy) is the IPv4 range.
        let mapped = TrustedProxies::parse("::ffff:127.0.0.1, ::ffff:10.0.0.0/104").unwrap();
        assert_eq!(mapped.to_string(), "127.0.0.1/32, 10.0.0.0/8");
        assert!(mapped.contains(ip("::ffff:10.1.2.3")));
        assert!(mapped.contains(ip("10.1.2.3")));
        // Trusting everyone would let any client name its own address.
        for everyone in ["0.0.0.0/0", "::/0", "10.0.0.0/8, ::ffff:0.0.0.0/96"] {
            let error = TrustedProxies::parse(everyone).unwrap_err();
            assert!(
                error.contains("trusts every address"),
                "{everyone}: {error}"
            );
        }
        let error = TrustedProxies::parse("127.0.0.1, proxy.local").unwrap_err();
        assert!(error.contains("\"proxy.local\""), "{error}");
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
    }

    #[test]
    fn the_client_is_the_first_untrusted_hop_from_the_right() {
        let proxies = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").unwrap();
        let peer = ip("127.0.0.1");
        assert_eq!(proxies.client(peer, ["203.0.113.7"]), ip("203.0.113.7"));
        // What the client wrote left of its own address is never read.
        assert_eq!(
            proxies.client(peer, ["1.2.3.4, 203.0.113.7"]),
            ip("203.0.113.7")
        );
        // Trusted hops are skipped, over several headers too.
        assert_eq!(
            proxies.client(peer, ["198.51.100.9, 10.1.1.1", "10.2.2.2"]),
            ip("198.51.100.9")
        );
        // Ports and IPv4-mapped IPv6 are read as addresses.
        assert_eq!(
            proxies.client(peer, ["203.0.113.7:41234"]),
            ip("203.0.113.7")
        );
        assert_eq!(
            proxies.client(peer, ["[2001:db8::1]:443"]),
            ip("2001:db8::1")
        );
        assert_eq!(
            proxies.client(peer, ["::ffff:203.0.113.7"]),
            ip("203.0.113.7")
        );
        // Garbage ends the walk at the last address read.
        assert_eq!(
            proxies.client(peer, ["203.0.113.7, unknown, 10.1.1.1"]),
            ip("10.1.1.1")
        );
        assert_eq!(proxies.client(peer, ["unknown"]), peer);
        // No header, or only trusted hops: the leftmost address read.
        assert_eq!(proxies.client(peer, []), peer);
        assert_eq!(proxies.client(peer, ["10.3.3.3"]), ip("10.3.3.3"));
        // A peer that is not a trusted proxy keeps its own address, whatever it sends.
        assert_eq!(
            proxies.client(ip("198.51.100.1"), ["203.0.113.7"]),
            ip("198.51.100.1")
        );
        assert_eq!(
            TrustedProxies::default().client(peer, ["203.0.113.7"]),
            peer
        );
    }

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
