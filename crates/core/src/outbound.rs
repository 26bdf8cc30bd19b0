//! The hub's one outbound HTTP client (DECISIONS 9): every request the hub makes to an address
//! a user named (Ronin's callbacks, later OAuth Client ID Metadata Documents) goes through
//! [`send`] (or [`send_blocking`] off the async threads).
//!
//! The guards, in order, all before any connection:
//!
//! 1. The URL is parsed as a browser parses it (WHATWG, the `url` crate), so the odd IPv4
//!    forms (`http://2130706433/`, `http://0x7f.1/`, `http://017700000001/`) come out as the
//!    dotted address they name. `http` and `https` only ([`Policy::require_https`] refuses
//!    `http`); no user name or password in the URL.
//! 2. The host is resolved once ([`resolve`]); every address it resolves to must pass
//!    [`refusal`] (one refused address refuses the request, so a name answering a public and
//!    a private address cannot be used to reach the private one). Refused: loopback, RFC 1918
//!    private, link-local (169.254.0.0/16 with the cloud metadata address, fe80::/10), CGNAT
//!    100.64.0.0/10, unique-local fc00::/7, multicast, unspecified, broadcast, reserved,
//!    documentation and benchmark ranges, and the IPv4 addresses inside IPv6 forms
//!    (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
//!    `2002::/16`) by the IPv4 rules. [`Policy::allow_private`] (the operator's
//!    `--outbound-allow-private`, off by default) lets loopback, private, link-local, CGNAT and
//!    unique-local addresses through, for tests and local setups; the rest stay refused.
//! 3. The connection goes only to the vetted addresses: ureq's resolver is replaced by one that
//!    answers them, so no second lookup can rebind the name. No proxy, no redirect followed (a
//!    3xx comes back as the response), a connect timeout and a total timeout, and at most
//!    [`Policy::max_response_bytes`] of body read.
//! 4. https is checked against the public roots (Mozilla's) and, when the operator named some
//!    (`--outbound-ca-file`, [`Policy::trusted_cas`]), their own CAs too ([`trust`]); a refused
//!    certificate is [`OutboundError::Untrusted`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

mod trust;
pub use trust::TrustedCas;

/// Default time to open the connection (TCP and TLS), per address.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default time for the whole exchange, from the first connection to the last body byte.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(15);
/// Default most bytes of response body read (1 MiB).
pub const MAX_RESPONSE_BYTES: u64 = 1024 * 1024;

/// What a request may reach and how long it may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Let loopback, private (RFC 1918), link-local, CGNAT and unique-local addresses
    /// through (the operator's setting; off by default).
    pub allow_private: bool,
    /// Refuse `http` URLs (the caller's choice: e.g. metadata documents must be https).
    pub require_https: bool,
    /// Time to open the connection ([`CONNECT_TIMEOUT`]).
    pub connect_timeout: Duration,
    /// Time for the whole exchange ([`TOTAL_TIMEOUT`]).
    pub total_timeout: Duration,
    /// Most bytes of response body read ([`MAX_RESPONSE_BYTES`]); more is
    /// [`OutboundError::TooLarge`].
    pub max_response_bytes: u64,
    /// The operator's extra CAs, trusted for https next to the public roots
    /// (`--outbound-ca-file`; empty by default).
    pub trusted_cas: TrustedCas,
}

impl Policy {
    /// The defaults, with private targets allowed or not (the operator's setting).
    pub fn new(allow_private: bool) -> Self {
        Self {
            allow_private,
            require_https: false,
            connect_timeout: CONNECT_TIMEOUT,
            total_timeout: TOTAL_TIMEOUT,
            max_response_bytes: MAX_RESPONSE_BYTES,
            trusted_cas: TrustedCas::default(),
        }
    }

    /// The same policy, refusing `http` URLs.
    #[must_use]
    pub fn https_only(mut self) -> Self {
        self.require_https = true;
        self
    }
}

impl Default for Policy {
    /// Private targets refused.
    fn default() -> Self {
        Self::new(false)
    }
}

/// An HTTP method the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

/// One request: method, absolute URL, headers, body (empty for `GET`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The absolute `http(s)` URL.
    pub url: String,
    /// Header names and values, sent as given.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Request {
    /// A `GET` of `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self {
            method: Method::Get,
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A `POST` of `body` to `url`.
    pub fn post(url: impl Into<String>, body: Vec<u8>) -> Self {
        Self {
            method: Method::Post,
            url: url.into(),
            headers: Vec::new(),
            body,
        }
    }

    /// The same request with one more header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// The answer: any status (4xx, 5xx and 3xx included), its `Content-Type`, the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The `Content-Type` header, when sent.
    pub content_type: Option<String>,
    /// The `Cache-Control` header, when sent (what a cache of the answer may do).
    pub cache_control: Option<String>,
    /// The body, at most the policy's `max_response_bytes`.
    pub body: Vec<u8>,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Why a request was not made or did not complete. Messages name the URL's problem or the
/// refused address, never a header value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OutboundError {
    /// Not an absolute URL the client takes.
    #[error("not a usable URL: {0}")]
    BadUrl(String),
    /// An `http` URL where the policy requires https.
    #[error("the URL must be https")]
    HttpsRequired,
    /// The host (or an address it resolves to) is one the hub never connects to.
    #[error("refused address {address}: {reason}")]
    Refused {
        /// The refused address.
        address: IpAddr,
        /// Which range it is in.
        reason: &'static str,
    },
    /// The name did not resolve.
    #[error("cannot resolve the host: {0}")]
    Resolve(String),
    /// The response body is larger than the policy allows.
    #[error("the response is over {0} bytes")]
    TooLarge(u64),
    /// The exchange took longer than the policy allows.
    #[error("timed out")]
    Timeout,
    /// The server's TLS certificate chains to no trusted root (the public ones and the
    /// operator's [`Policy::trusted_cas`]), or is expired or not for this host.
    #[error("the server's TLS certificate is not trusted")]
    Untrusted,
    /// The connection or the exchange failed.
    #[error("request failed: {0}")]
    Failed(String),
    /// The operator's CA file (`--outbound-ca-file`) cannot be used.
    #[error("{path}: {reason}")]
    CaFile {
        /// The file as named.
        path: String,
        /// Why not.
        reason: String,
    },
}

/// Whether a refused range may be let through by [`Policy::allow_private`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Loopback, private, link-local, CGNAT, unique-local: local networks.
    Local,
    /// Never a target: unspecified, multicast, broadcast, reserved, documentation, benchmark.
    Never,
}

/// The IPv4 ranges refused, with their class and name.
const V4_REFUSED: &[(&str, Class, &str)] = &[
    ("0.0.0.0/8", Class::Never, "unspecified (this network)"),
    ("10.0.0.0/8", Class::Local, "private (RFC 1918)"),
    (
        "100.64.0.0/10",
        Class::Local,
        "shared address space (CGNAT)",
    ),
    ("127.0.0.0/8", Class::Local, "loopback"),
    // Never let through, even for local setups: it holds the cloud metadata address
    // (169.254.169.254; docs/decisions.md 386).
    (
        "169.254.0.0/16",
        Class::Never,
        "link-local (cloud metadata)",
    ),
    ("172.16.0.0/12", Class::Local, "private (RFC 1918)"),
    ("192.0.0.0/24", Class::Never, "IETF protocol assignments"),
    ("192.0.2.0/24", Class::Never, "documentation"),
    ("192.88.99.0/24", Class::Never, "6to4 relay anycast"),
    ("192.168.0.0/16", Class::Local, "private (RFC 1918)"),
    ("198.18.0.0/15", Class::Never, "benchmarking"),
    ("198.51.100.0/24", Class::Never, "documentation"),
    ("203.0.113.0/24", Class::Never, "documentation"),
    ("224.0.0.0/4", Class::Never, "multicast"),
    ("240.0.0.0/4", Class::Never, "reserved (and broadcast)"),
];

/// The IPv6 ranges refused (the IPv4-carrying forms are handled before these).
const V6_REFUSED: &[(&str, Class, &str)] = &[
    ("::/128", Class::Never, "unspecified"),
    ("::1/128", Class::Local, "loopback"),
    ("100::/64", Class::Never, "discard-only"),
    ("2001::/32", Class::Never, "Teredo"),
    ("2001:2::/48", Class::Never, "benchmarking"),
    ("2001:db8::/32", Class::Never, "documentation"),
    ("3fff::/20", Class::Never, "documentation"),
    ("fc00::/7", Class::Local, "unique-local"),
    ("fe80::/10", Class::Never, "link-local"),
    ("fec0::/10", Class::Local, "site-local"),
    ("ff00::/8", Class::Never, "multicast"),
];

fn lookup(table: &[(&str, Class, &'static str)], address: IpAddr) -> Option<(Class, &'static str)> {
    table.iter().find_map(|(net, class, reason)| {
        net.parse::<ipnet::IpNet>()
            .ok()
            .filter(|net| net.contains(&address))
            .map(|_| (*class, *reason))
    })
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible
/// (`::/96`, except `::` and `::1`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let segments = v6.segments();
    let octets = v6.octets();
    let low = Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15]);
    if let Some(mapped) = v6.to_ipv4_mapped() {
        return Some(mapped);
    }
    if segments[..6] == [0; 6] && u32::from(low) > 1 {
        return Some(low);
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low);
    }
    if segments[0] == 0x2002 {
        return Some(Ipv4Addr::new(octets[2], octets[3], octets[4], octets[5]));
    }
    None
}

/// Why the hub refuses to connect to `address` under `policy` (`None`: it may). IPv4 inside
/// IPv6 is judged as the IPv4 address it carries.
pub fn refusal(address: IpAddr, policy: &Policy) -> Option<&'static str> {
    let found = match address {
        IpAddr::V4(_) => lookup(V4_REFUSED, address),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => lookup(V4_REFUSED, IpAddr::V4(v4)),
            None => lookup(V6_REFUSED, address),
        },
    };
    match found {
        Some((Class::Local, _)) if policy.allow_private => None,
        Some((_, reason)) => Some(reason),
        None => None,
    }
}

/// Parses `text` as the client would use it: an absolute `http(s)` URL without credentials,
/// `https` when the policy requires it.
///
/// # Errors
/// [`OutboundError::BadUrl`] or [`OutboundError::HttpsRequired`].
pub fn parse_url(text: &str, policy: &Policy) -> Result<url::Url, OutboundError> {
    let url = url::Url::parse(text).map_err(|error| OutboundError::BadUrl(error.to_string()))?;
    match url.scheme() {
        "https" => {}
        "http" if policy.require_https => return Err(OutboundError::HttpsRequired),
        "http" => {}
        other => {
            return Err(OutboundError::BadUrl(format!(
                "scheme {other} is not http(s)"
            )));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OutboundError::BadUrl(
            "a user name or password in the URL".into(),
        ));
    }
    if url.host().is_none() {
        return Err(OutboundError::BadUrl("no host".into()));
    }
    Ok(url)
}

/// Resolves `url`'s host once (a literal address is taken as is) and vets every address:
/// the addresses the connection may use.
///
/// # Errors
/// [`OutboundError::Refused`] for the first refused address, [`OutboundError::Resolve`] when
/// the name does not resolve.
pub fn resolve(url: &url::Url, policy: &Policy) -> Result<Vec<SocketAddr>, OutboundError> {
    let port = url
        .port_or_known_default()
        .ok_or_else(|| OutboundError::BadUrl("no port".into()))?;
    let addresses: Vec<SocketAddr> = match url.host() {
        Some(url::Host::Ipv4(v4)) => vec![SocketAddr::new(IpAddr::V4(v4), port)],
        Some(url::Host::Ipv6(v6)) => vec![SocketAddr::new(IpAddr::V6(v6), port)],
        Some(url::Host::Domain(name)) => (name, port)
            .to_socket_addrs()
            .map_err(|error| OutboundError::Resolve(error.to_string()))?
            .collect(),
        None => return Err(OutboundError::BadUrl("no host".into())),
    };
    if addresses.is_empty() {
        return Err(OutboundError::Resolve("no address".into()));
    }
    for address in &addresses {
        if let Some(reason) = refusal(address.ip(), policy) {
            return Err(OutboundError::Refused {
                address: address.ip(),
                reason,
            });
        }
    }
    Ok(addresses)
}

/// ureq's resolver for one request: the vetted addresses, whatever it is asked.
#[derive(Debug)]
struct Vetted(Vec<SocketAddr>);

impl Resolver for Vetted {
    fn resolve(
        &self,
        _uri: &ureq::http::Uri,
        _config: &ureq::config::Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let mut addresses = self.empty();
        for address in &self.0 {
            if addresses.try_push(*address).is_err() {
                break;
            }
        }
        if self.0.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(addresses)
    }
}

fn failed(error: ureq::Error, policy: &Policy) -> OutboundError {
    match error {
        ureq::Error::Timeout(_) => OutboundError::Timeout,
        ureq::Error::BodyExceedsLimit(_) => OutboundError::TooLarge(policy.max_response_bytes),
        other if trust::is_untrusted(&other) => OutboundError::Untrusted,
        other => OutboundError::Failed(other.to_string()),
    }
}

/// Makes the request on this thread (it blocks): the guards of the module doc, then one
/// exchange.
///
/// # Errors
/// [`OutboundError`]: a refused URL or address before any connection, or the exchange's
/// failure.
pub fn send_blocking(request: &Request, policy: &Policy) -> Result<Response, OutboundError> {
    let url = parse_url(&request.url, policy)?;
    let addresses = resolve(&url, policy)?;
    match exchange(request, &url, &addresses, policy, None) {
        // Refused by the public roots: once more with the operator's CAs (trust module doc).
        Err(OutboundError::Untrusted) if !policy.trusted_cas.is_empty() => exchange(
            request,
            &url,
            &addresses,
            policy,
            Some(policy.trusted_cas.root_certs()),
        ),
        result => result,
    }
}

/// One exchange with the vetted `addresses`: the public roots, or `roots` when given.
fn exchange(
    request: &Request,
    url: &url::Url,
    addresses: &[SocketAddr],
    policy: &Policy,
    roots: Option<ureq::tls::RootCerts>,
) -> Result<Response, OutboundError> {
    let mut tls = ureq::tls::TlsConfig::builder();
    if let Some(roots) = roots {
        tls = tls.root_certs(roots);
    }
    let config = ureq::Agent::config_builder()
        .proxy(None)
        .max_redirects(0)
        .http_status_as_error(false)
        .https_only(policy.require_https)
        .timeout_connect(Some(policy.connect_timeout))
        .timeout_global(Some(policy.total_timeout))
        .tls_config(tls.build())
        .build();
    let agent = ureq::Agent::with_parts(
        config,
        DefaultConnector::default(),
        Vetted(addresses.to_vec()),
    );
    let method = match request.method {
        Method::Get => ureq::http::Method::GET,
        Method::Post => ureq::http::Method::POST,
    };
    let mut builder = ureq::http::Request::builder()
        .method(method)
        .uri(url.as_str());
    for (name, value) in &request.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let built = builder
        .body(request.body.clone())
        .map_err(|error| OutboundError::BadUrl(error.to_string()))?;
    let mut response = agent.run(built).map_err(|error| failed(error, policy))?;
    let header = |name: ureq::http::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let content_type = header(ureq::http::header::CONTENT_TYPE);
    let cache_control = header(ureq::http::header::CACHE_CONTROL);
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(policy.max_response_bytes)
        .read_to_vec()
        .map_err(|error| failed(error, policy))?;
    Ok(Response {
        status,
        content_type,
        cache_control,
        body,
    })
}

/// [`send_blocking`] on tokio's blocking pool, given up after the total timeout and a second
/// (a name lookup that hangs does not hold the caller).
///
/// # Errors
/// As [`send_blocking`]; [`OutboundError::Timeout`] past the deadline.
pub async fn send(request: Request, policy: Policy) -> Result<Response, OutboundError> {
    let deadline = policy.total_timeout + Duration::from_secs(1);
    let work = tokio::task::spawn_blocking(move || send_blocking(&request, &policy));
    match tokio::time::timeout(deadline, work).await {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => Err(OutboundError::Failed(error.to_string())),
        Err(_) => Err(OutboundError::Timeout),
    }
}

#[cfg(test)]
mod tests;
