//! A minimal HTTP/1.1 keep-alive client over a raw tokio `TcpStream`: the bench writes
//! pre-built request bytes and reads `Content-Length` responses, so the client spends as
//! little CPU as possible per request (the server shares the machine's cores with it).

use std::net::SocketAddr;

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

    /// Sends one complete request and reads its response.
    pub async fn round_trip(&mut self, request: &[u8]) -> anyhow::Result<Response<'_>> {
        self.stream.write_all(request).await?;
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
