//! The Linkdbots HTTP API as `karmadue linkdbots-mcp` calls it (spec "API reference"): one
//! blocking `ureq` agent, JSON in and out, `Authorization: Bearer` on keyed calls only.

use std::time::Duration;

use serde_json::Value;

/// How long one API call may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One call: a method, a path under the API base, its query and its JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `GET` or `POST`.
    pub post: bool,
    /// The path under the base, its segments already encoded ([`segment`]).
    pub path: String,
    /// Query pairs (encoded by the client).
    pub query: Vec<(String, String)>,
    /// The body of a `POST`.
    pub body: Option<Value>,
}

impl Call {
    /// `GET path`.
    pub fn get(path: String) -> Self {
        Self {
            post: false,
            path,
            query: Vec::new(),
            body: None,
        }
    }

    /// `POST path` with `body`.
    pub fn post(path: String, body: Value) -> Self {
        Self {
            post: true,
            path,
            query: Vec::new(),
            body: Some(body),
        }
    }
}

/// An answer: its HTTP status and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The body (Linkdbots answers JSON everywhere, errors included).
    pub body: Value,
}

/// The API at one base URL.
pub struct Api {
    base: String,
    agent: ureq::Agent,
}

impl Api {
    /// The API at `base` (e.g. `http://127.0.0.1:8080/linkdbots/api/v1`).
    pub fn new(base: &str) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(TIMEOUT))
            .user_agent(concat!(
                "karmadue-linkdbots-mcp/",
                env!("CARGO_PKG_VERSION")
            ))
            .build();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            agent: config.into(),
        }
    }

    /// The base URL, without a trailing `/`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Makes `call`, with `key` as the bearer when given.
    ///
    /// # Errors
    /// The API cannot be reached, or answered something that is not JSON: a sentence for the
    /// tool's error.
    pub fn send(&self, call: &Call, key: Option<&str>) -> Result<Answer, String> {
        let mut url = format!("{}{}", self.base, call.path);
        let query: Vec<String> = call
            .query
            .iter()
            .map(|(name, value)| format!("{}={}", segment(name), segment(value)))
            .collect();
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        if url.len() > MAX_URL {
            return Err(format!(
                "an argument is too long: the request's URL would be {} bytes, and at most \
                 {MAX_URL} are sent",
                url.len()
            ));
        }
        let bearer = key.map(|key| format!("Bearer {key}"));
        let sent = if call.post {
            let mut request = self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json");
            if let Some(bearer) = &bearer {
                request = request.header("authorization", bearer);
            }
            let body = call.body.as_ref().map(Value::to_string).unwrap_or_default();
            request.send(body)
        } else {
            let mut request = self.agent.get(&url).header("accept", "application/json");
            if let Some(bearer) = &bearer {
                request = request.header("authorization", bearer);
            }
            request.call()
        };
        let mut response =
            sent.map_err(|error| format!("cannot reach Linkdbots at {}: {error}", self.base))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|error| format!("cannot read Linkdbots' answer: {error}"))?;
        let body = serde_json::from_str(&text).map_err(|_| {
            let shown: String = text.chars().take(200).collect();
            format!("Linkdbots answered HTTP {status} with something that is not JSON: {shown}")
        })?;
        Ok(Answer { status, body })
    }
}

/// The longest URL sent to the API (query included), in bytes (docs/decisions.md 350): a
/// longer one is a tool error, never a request.
pub const MAX_URL: usize = 8_000;

/// `text` as one path segment: every byte but the unreserved ones (RFC 3986) percent-encoded.
pub fn segment(text: &str) -> String {
    if text == "." || text == ".." {
        return text.replace('.', "%2E");
    }
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_cannot_leave_its_place_in_the_path() {
        assert_eq!(segment("code.review"), "code.review");
        assert_eq!(segment("../budget?x=1"), "..%2Fbudget%3Fx%3D1");
        assert_eq!(segment("é"), "%C3%A9");
        assert_eq!(segment(".."), "%2E%2E");
    }

    #[test]
    fn an_overlong_argument_is_an_error_and_sends_nothing() {
        // Port 9 on loopback: nothing listens, so an attempt would be "cannot reach".
        let api = Api::new("http://127.0.0.1:9/linkdbots/api/v1");
        for (path, query) in [
            (
                "/playbooks/search",
                vec![("q".to_owned(), "a".repeat(70_000))],
            ),
            ("/learn", vec![("model".to_owned(), "é".repeat(12_000))]),
            (&*format!("/agents/{}/profile", "x".repeat(9_000)), vec![]),
        ] {
            let call = Call {
                post: false,
                path: path.to_owned(),
                query,
                body: None,
            };
            let error = api.send(&call, None).unwrap_err();
            assert!(error.starts_with("an argument is too long"), "{error}");
        }
    }
}
