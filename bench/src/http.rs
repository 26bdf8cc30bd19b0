//! A minimal HTTP/1.1 keep-alive client over a raw tokio `TcpStream`: the bench writes
//! pre-built request bytes and reads `Content-Length` responses, so the client spends as
//! little CPU as possible per request (the server shares the machine's cores with it).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The MCP endpoint.
pub const MCP_PATH: &str = "/functions/v1/mcp";

/// One keep-alive connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    chunk: Box<[u8]>,
}

/// A response: status and body (the body borrows the connection's buffer).
pub struct Response<'a> {
    /// The status code.
    pub status: u16,
    /// The body bytes.
    pub body: &'a [u8],
}

impl Conn {
    /// Connects with `TCP_NODELAY`.
    pub async fn connect(addr: SocketAddr) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(addr)
            .await
            .with_context(|| format!("connect {addr}"))?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(16 * 1024),
            chunk: vec![0u8; 16 * 1024].into_boxed_slice(),
        })
    }

    /// Connects from `local` (any port), with `TCP_NODELAY`: a bench client that plays many
    /// client addresses binds each connection to its own loopback address ([`next_source`]).
    pub async fn connect_from(local: IpAddr, addr: SocketAddr) -> anyhow::Result<Self> {
        let socket = match local {
            IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket
            .bind(SocketAddr::new(local, 0))
            .with_context(|| format!("bind {local}"))?;
        let stream = socket
            .connect(addr)
            .await
            .with_context(|| format!("connect {addr} from {local}"))?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(16 * 1024),
            chunk: vec![0u8; 16 * 1024].into_boxed_slice(),
        })
    }

    /// Sends one complete request and reads its response.
    pub async fn round_trip(&mut self, request: &[u8]) -> anyhow::Result<Response<'_>> {
        self.send(request).await?;
        self.receive().await
    }

    /// Writes one complete request.
    pub async fn send(&mut self, request: &[u8]) -> anyhow::Result<()> {
        self.stream.write_all(request).await?;
        Ok(())
    }

    /// Reads the next response.
    pub async fn receive(&mut self) -> anyhow::Result<Response<'_>> {
        self.buf.clear();
        let (head_len, body_len, status) = loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let (status, length) = parse_head(&self.buf[..end])?;
                break (end + 4, length, status);
            }
            self.fill().await?;
        };
        while self.buf.len() < head_len + body_len {
            self.fill().await?;
        }
        if self.buf.len() > head_len + body_len {
            bail!("the server sent more than one response");
        }
        Ok(Response {
            status,
            body: &self.buf[head_len..],
        })
    }

    async fn fill(&mut self) -> anyhow::Result<()> {
        let read = self.stream.read(&mut self.chunk).await?;
        if read == 0 {
            bail!("the server closed the connection");
        }
        self.buf.extend_from_slice(&self.chunk[..read]);
        Ok(())
    }
}

/// The loopback addresses handed out so far by [`next_source`].
static SOURCES: AtomicU32 = AtomicU32::new(0);

/// A loopback client address not handed out before in this process: 127.0.0.2, 127.0.0.3, …
/// (Linux routes all of 127.0.0.0/8 to the loopback device). Ronin counts its write limits
/// per client address (600 events a minute); the Ronin phases give each address at most
/// that many, so the limiter admits every event and still does its whole work per request.
pub fn next_source() -> IpAddr {
    let index = SOURCES.fetch_add(1, Ordering::Relaxed);
    let base = u32::from(Ipv4Addr::new(127, 0, 0, 2));
    IpAddr::V4(Ipv4Addr::from(base + (index % 0x00ff_fff0)))
}

/// The bytes of an HTTP/1.1 GET of `path` with extra headers.
pub fn get(host: &str, path: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut text = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\naccept: application/json\r\n");
    for (name, value) in headers {
        text.push_str(name);
        text.push_str(": ");
        text.push_str(value);
        text.push_str("\r\n");
    }
    text.push_str("\r\n");
    text.into_bytes()
}

/// A `POST` to the MCP endpoint with a JSON body and extra headers, as bytes.
pub fn mcp_request(host: &str, body: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    post(host, MCP_PATH, body, headers)
}

/// The bytes of an HTTP/1.1 POST of the JSON `body` to `path`, with the headers an MCP client
/// sends plus `headers`.
pub fn post(host: &str, path: &str, body: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut text = format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(name);
        text.push_str(": ");
        text.push_str(value);
        text.push_str("\r\n");
    }
    text.push_str("\r\n");
    text.push_str(body);
    text.into_bytes()
}

/// The position of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn parse_head(head: &[u8]) -> anyhow::Result<(u16, usize)> {
    let text = std::str::from_utf8(head).context("response head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("bad status line {status_line:?}"))?;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse::<usize>()?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            bail!("chunked responses are not supported by the bench client");
        }
    }
    Ok((status, length.unwrap_or(0)))
}
