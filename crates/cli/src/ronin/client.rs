//! The HTTP side of `karmadue ronin`: the key file, event signing, NIP-98 headers and the
//! calls to a Ronin hub (spec `004`, sections 2, 5 and 6b).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use base64::Engine as _;
use kd_protocol::nostr::{Event, sign_event, sign_schnorr};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The longest a call may take (a `me/wait` holds up to 55 s).
const TIMEOUT: Duration = Duration::from_secs(70);

/// The key file `~/.ronin/key.json` (mode 0600), the same shape as `ronin.mjs` and
/// `ronin.py` keep: the secp256k1 secret and its x-only public key, lowercase hex.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Key {
    /// 32-byte secret, hex. Never sent anywhere.
    pub secret: String,
    /// x-only public key, hex.
    pub pubkey: String,
}

impl Key {
    /// A fresh key from the system's random source.
    pub fn generate() -> Self {
        loop {
            let mut secret = [0u8; 32];
            rand::rngs::OsRng.fill_bytes(&mut secret);
            if let Some(pubkey) = kd_protocol::nostr::public_key_hex(&secret) {
                return Self {
                    secret: hex::encode(secret),
                    pubkey,
                };
            }
        }
    }

    /// The secret as bytes.
    ///
    /// # Errors
    /// The file's secret is not 64 hex digits.
    pub fn secret_bytes(&self) -> anyhow::Result<[u8; 32]> {
        let bytes = hex::decode(&self.secret).context("the key file's secret is not hex")?;
        bytes
            .try_into()
            .map_err(|_| anyhow::anyhow!("the key file's secret is not 32 bytes"))
    }

    /// An event of `kind` signed by this key now.
    ///
    /// # Errors
    /// The secret is unusable, or a tag is empty.
    pub fn sign(
        &self,
        kind: u16,
        tags: Vec<Vec<String>>,
        content: String,
    ) -> anyhow::Result<Event> {
        let mut aux = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut aux);
        sign_event(&self.secret_bytes()?, now_s(), kind, tags, content, &aux)
            .map_err(|error| anyhow::anyhow!("cannot sign: {error}"))
    }

    /// Signs a hub template `{kind, tags, content}` as it is.
    ///
    /// # Errors
    /// The template is not one.
    pub fn sign_template(&self, template: &Value) -> anyhow::Result<Event> {
        let kind = template["kind"]
            .as_u64()
            .and_then(|kind| u16::try_from(kind).ok())
            .context("the template has no kind")?;
        let tags: Vec<Vec<String>> =
            serde_json::from_value(template["tags"].clone()).context("the template's tags")?;
        let content = template["content"].as_str().unwrap_or_default().to_owned();
        self.sign(kind, tags, content)
    }

    /// The SUCCESSOR proof: this (new) key's BIP-340 signature over sha256 of the old public
    /// key's 32 bytes, hex.
    ///
    /// # Errors
    /// `old_pubkey` is not 64 hex digits.
    pub fn proof_for(&self, old_pubkey: &str) -> anyhow::Result<String> {
        let old = hex::decode(old_pubkey).context("the old public key is not hex")?;
        let digest = Sha256::digest(old);
        let mut aux = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut aux);
        sign_schnorr(&self.secret_bytes()?, &digest, &aux)
            .map(hex::encode)
            .context("cannot sign the proof")
    }
}

/// Unix seconds now.
pub fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// The folder of the key and cursor files: `RONIN_HOME`, or `~/.ronin`.
///
/// # Errors
/// Neither `RONIN_HOME` nor `HOME` is set.
pub fn home() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("RONIN_HOME") {
        return Ok(PathBuf::from(home));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; set RONIN_HOME")?;
    Ok(PathBuf::from(home).join(".ronin"))
}

/// Reads `key.json` in `home`.
///
/// # Errors
/// No key file (run `karmadue ronin keygen`), or not one.
pub fn load_key(home: &Path) -> anyhow::Result<Key> {
    let path = home.join("key.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("no key at {} (run `karmadue ronin keygen`)", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a key file", path.display()))
}

/// Writes `value` to `path` with mode 0600 (a temporary name, then a rename).
///
/// # Errors
/// The folder or file cannot be written.
pub fn write_private(path: &Path, value: &Value) -> anyhow::Result<()> {
    if let Some(folder) = path.parent()
        && !folder.exists()
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(folder)
            .with_context(|| format!("cannot make {}", folder.display()))?;
    }
    let temporary = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(&temporary)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    std::io::Write::write_all(&mut file, format!("{value:#}\n").as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// A Ronin hub at one URL (`RONIN_URL`, e.g. `http://127.0.0.1:8080/ronin`).
pub struct Hub {
    base: String,
    agent: ureq::Agent,
}

/// What `POST`/`GET` answered: the status and the JSON body.
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// The body (Ronin answers JSON everywhere).
    pub body: Value,
}

impl Answer {
    /// The body when the hub took the request; the hub's `error` text otherwise.
    ///
    /// # Errors
    /// A refusal, as the hub's words.
    pub fn ok(self) -> anyhow::Result<Value> {
        if (200..300).contains(&self.status) {
            return Ok(self.body);
        }
        match self.body["error"].as_str() {
            Some(error) => bail!("{error}"),
            None => bail!("the hub answered {}: {}", self.status, self.body),
        }
    }
}

impl Hub {
    /// The hub at `base` (no trailing `/`).
    pub fn new(base: &str) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(TIMEOUT))
            .user_agent(concat!("karmadue-ronin/", env!("CARGO_PKG_VERSION")))
            .build();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            agent: config.into(),
        }
    }

    /// A path the hub answered (`/ronin/api/v1/artifacts/…`) as an absolute URL on the
    /// hub's origin, so a buyer can fetch it from anywhere (docs/decisions.md 373).
    pub fn absolute(&self, path: &str) -> String {
        if !path.starts_with('/') {
            return path.to_owned();
        }
        let after_scheme = self.base.find("://").map_or(0, |at| at + 3);
        let origin_end = self.base[after_scheme..]
            .find('/')
            .map_or(self.base.len(), |at| after_scheme + at);
        format!("{}{path}", &self.base[..origin_end])
    }

    fn url(&self, path: &str) -> String {
        format!("{}/api/v1{path}", self.base)
    }

    fn read(
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> anyhow::Result<Answer> {
        let mut response = response.context("the hub cannot be reached")?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .context("the hub's answer cannot be read")?;
        let body = serde_json::from_str(&text)
            .with_context(|| format!("the hub answered {status} with something not JSON"))?;
        Ok(Answer { status, body })
    }

    /// `GET /api/v1{path}`, no auth.
    ///
    /// # Errors
    /// The hub cannot be reached or answered something not JSON.
    pub fn get(&self, path: &str) -> anyhow::Result<Answer> {
        Self::read(self.agent.get(&self.url(path)).call())
    }

    /// `POST /api/v1/events` with one event or a batch (`?full=1` when `full`).
    ///
    /// # Errors
    /// As [`Hub::get`].
    pub fn post_events(&self, events: &[Event], full: bool) -> anyhow::Result<Answer> {
        let body = match events {
            [one] => one.to_json_text(),
            many => format!(
                "[{}]",
                many.iter()
                    .map(Event::to_json_text)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        let path = if full { "/events?full=1" } else { "/events" };
        Self::read(
            self.agent
                .post(&self.url(path))
                .header("content-type", "application/json")
                .send(body.as_bytes()),
        )
    }

    /// The NIP-98 `Authorization` value for `method` on `url` (kind 27235; a `payload` tag
    /// when a body is signed).
    fn authorization(
        key: &Key,
        url: &str,
        method: &str,
        body: Option<&[u8]>,
    ) -> anyhow::Result<String> {
        let mut nonce = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let mut tags = vec![
            vec!["u".to_owned(), url.to_owned()],
            vec!["method".to_owned(), method.to_owned()],
            vec!["nonce".to_owned(), hex::encode(nonce)],
        ];
        if let Some(body) = body {
            tags.push(vec![
                "payload".to_owned(),
                hex::encode(Sha256::digest(body)),
            ]);
        }
        let event = key.sign(27235, tags, String::new())?;
        Ok(format!(
            "Nostr {}",
            base64::engine::general_purpose::STANDARD.encode(event.to_json_text())
        ))
    }

    /// `GET /api/v1{path}` signed by `key` (NIP-98).
    ///
    /// # Errors
    /// As [`Hub::get`].
    pub fn get_signed(&self, key: &Key, path: &str) -> anyhow::Result<Answer> {
        let url = self.url(path);
        let authorization = Self::authorization(key, &url, "GET", None)?;
        Self::read(
            self.agent
                .get(&url)
                .header("authorization", &authorization)
                .call(),
        )
    }

    /// `POST /api/v1{path}` of `body` signed by `key` (NIP-98 with the `payload` tag).
    ///
    /// # Errors
    /// As [`Hub::get`].
    pub fn post_signed(
        &self,
        key: &Key,
        path: &str,
        content_type: &str,
        body: &[u8],
    ) -> anyhow::Result<Answer> {
        let url = self.url(path);
        let authorization = Self::authorization(key, &url, "POST", Some(body))?;
        Self::read(
            self.agent
                .post(&url)
                .header("authorization", &authorization)
                .header("content-type", content_type)
                .send(body),
        )
    }

    /// Uploads a file (`POST /api/v1/artifacts`); its `{hash, url, ...}`.
    ///
    /// # Errors
    /// The file cannot be read, or the hub refused it.
    pub fn upload(
        &self,
        key: &Key,
        path: &Path,
        content_type: Option<&str>,
    ) -> anyhow::Result<Value> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let content_type = content_type.unwrap_or_else(|| content_type_of(path));
        self.post_signed(key, "/artifacts", content_type, &bytes)?
            .ok()
    }
}

/// A file's content type from its extension (what the hub stores and serves it as).
pub fn content_type_of(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("md") => "text/markdown",
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        Some("html") => "text/html",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

/// A JSON value as compact text (what every command prints, one line).
pub fn line(value: &Value) -> String {
    value.to_string()
}
