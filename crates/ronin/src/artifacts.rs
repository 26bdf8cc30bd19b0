//! Delivering a file (Ronin section 6b): `POST /api/v1/artifacts` stores the raw body
//! content-addressed, `GET /api/v1/artifacts/<sha256>` serves it to anyone, immutable.
//!
//! The upload is authenticated by NIP-98 as `me` is, method `POST`, and its `payload` tag
//! must be the sha256 hex of the body (so a captured header cannot carry another body). The
//! checks, in order, each before anything is written: the body at most [`FILE_MAX_BYTES`]
//! (413 `invalid:`), the auth (401 `unauthorized:`), a non-empty body and a readable
//! `Content-Type` (400 `invalid:`), the write limits (429 `rate-limited:`, one write), the auth
//! event once (401), a retired or revoked key (403 `restricted:`), and the lineage's
//! [`LINEAGE_MAX_BYTES`] (413 `invalid:`). A file the hub holds already answers at once and
//! costs nothing. Otherwise the bytes go to `<dir>/<first two hex>/<sha256>` (written to a
//! temporary name, synced, renamed), then the metadata row is written in the writer's
//! transaction (which checks the lineage's quota again). An upload is not a signed event:
//! it is not in the log.
//!
//! Every file is graded by the scanner (section 6c): UTF-8 text is scanned as text; a ZIP
//! whose entries are encrypted is `high`; any other bytes are `unscanned` (not read).

use std::path::{Path as FilePath, PathBuf};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::me::take_auth;
use crate::nip98::{Nip98Post, ReadBody};
use crate::store::{self, Artifact};
use crate::{Refusal, Ronin, answer};

/// The most bytes one file may hold (10 MiB).
pub const FILE_MAX_BYTES: usize = 10 * 1024 * 1024;
/// The most bytes the files a lineage stored may hold together (200 MiB).
pub const LINEAGE_MAX_BYTES: i64 = 200 * 1024 * 1024;
/// The folder of the files, in the hub's data directory.
pub const DIR_NAME: &str = "ronin-artifacts";
/// The longest `Content-Type` kept.
pub const CONTENT_TYPE_MAX: usize = 255;
/// `Cache-Control` of a served file: it never changes.
pub const CACHE_CONTROL: &str = "public, max-age=31536000, immutable";

/// The `Content-Type` every stored file is served with: bytes to save, never a document a
/// browser renders or runs beside the hub's pages (issue 35).
pub const SERVED_TYPE: &str = "application/octet-stream";

/// Where the file with this hash lives under `dir`.
pub(crate) fn path_of(dir: &FilePath, hash: &str) -> PathBuf {
    dir.join(hash.get(..2).unwrap_or("00")).join(hash)
}

/// The URL of a stored file, relative to Ronin's origin: `mount` (Ronin's, `""` at the root
/// of its own address) then `/api/v1/artifacts/<hash>`, as section 6b's answer shows it
/// (docs/decisions.md 390).
pub fn url_of(mount: &str, hash: &str) -> String {
    format!("{mount}/api/v1/artifacts/{hash}")
}

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The scanner's verdict on a file's bytes (see the module doc).
pub(crate) fn scan_bytes(bytes: &[u8]) -> Value {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return serde_json::to_value(kd_core::scanner::Scanner::shipped().scan(text))
            .unwrap_or(Value::Null);
    }
    if encrypted_zip(bytes) {
        return json!({
            "level": "high",
            "label": "questionable: high-risk pattern",
            "flags": ["password_archive"],
            "reasons": [{
                "rule": "password_archive.encrypted_zip",
                "why": "a password-protected archive: its contents cannot be scanned",
                "excerpt": "",
            }],
        });
    }
    json!({ "level": "unscanned", "label": "not read: not UTF-8 text", "flags": [], "reasons": [] })
}

/// Whether a ZIP's local file header has the "encrypted" flag (general purpose bit 0).
fn encrypted_zip(bytes: &[u8]) -> bool {
    const LOCAL_HEADER: &[u8] = b"PK\x03\x04";
    if !bytes.starts_with(LOCAL_HEADER) {
        return false;
    }
    bytes.windows(8).any(|window| {
        window.starts_with(LOCAL_HEADER) && window.get(6).is_some_and(|flags| flags & 1 == 1)
    })
}

/// The upload's `Content-Type`: absent is `application/octet-stream`.
fn content_type(headers: &HeaderMap) -> Result<String, Refusal> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok("application/octet-stream".to_owned());
    };
    value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|text| !text.is_empty() && text.len() <= CONTENT_TYPE_MAX)
        .map(str::to_owned)
        .ok_or_else(|| {
            Refusal::invalid("Content-Type must be visible ASCII of at most 255 characters")
        })
}

/// An upload's words for a body it cannot read: 413 past [`FILE_MAX_BYTES`], else the
/// framework's reason ([`Nip98Post<FileBody>`]).
#[derive(Debug)]
pub struct FileBody;

impl ReadBody for FileBody {
    fn read(body: Result<Bytes, BytesRejection>) -> Result<Bytes, Refusal> {
        body.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Refusal::unreadable(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("a file is at most 10 MB ({FILE_MAX_BYTES} bytes)"),
                )
            } else {
                Refusal::unreadable(
                    rejection.status(),
                    format!("the body cannot be read: {}", rejection.body_text()),
                )
            }
        })
    }
}

fn uploaded(artifact: &Artifact, mount: &str) -> Response {
    answer(
        StatusCode::OK,
        &json!({
            "ok": true,
            "hash": artifact.hash,
            "url": url_of(mount, &artifact.hash),
            "bytes": artifact.bytes,
            "type": artifact.content_type,
            "scan": artifact.scan,
        }),
    )
}

/// `POST /api/v1/artifacts` (see the module doc). Answers `{"ok":true,"hash","url","bytes",
/// "type","scan"}`, the same for a file the hub holds already.
pub async fn upload(
    State(ronin): State<Ronin>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    Nip98Post {
        event: auth, body, ..
    }: Nip98Post<FileBody>,
) -> Response {
    let checked = (|| {
        if body.is_empty() {
            return Err(Refusal::invalid(
                "the body is empty: upload the file's bytes",
            ));
        }
        content_type(&headers)
    })();
    let content_type = match checked {
        Ok(checked) => checked,
        Err(refusal) => return refusal.into_response(),
    };
    if let Err(response) = crate::charge_writes(&ronin, &[&auth.pubkey], &extensions).await {
        return response;
    }
    let stored = async {
        take_auth(&ronin, auth.id).await?;
        let artifact = Artifact {
            hash: hex::encode(Sha256::digest(&body)),
            bytes: i64::try_from(body.len()).unwrap_or(i64::MAX),
            content_type,
            uploader: auth.pubkey,
            scan: scan_bytes(&body),
            created_ms: ronin.clock.now_ms(),
        };
        store_file(&ronin, artifact, body).await
    };
    match stored.await {
        Ok(artifact) => uploaded(&artifact, &ronin.mount),
        Err(refusal) => refusal.into_response(),
    }
}

/// The checks against the store (the key's status, a file held already, the lineage's
/// quota): `Ok(Some)` is the file held already, `Ok(None)` a new file within the quota.
fn admit(
    conn: &kd_core::db::Connection,
    artifact: &Artifact,
    lineage_max: i64,
) -> Result<Option<Artifact>, Refusal> {
    crate::events::may_write(conn, &artifact.uploader)?;
    if let Some(held) = store::artifact(conn, &artifact.hash).map_err(Refusal::server)? {
        return Ok(Some(held));
    }
    let keys = store::lineage(conn, &artifact.uploader).map_err(Refusal::server)?;
    let used = store::stored_bytes(conn, &keys).map_err(Refusal::server)?;
    if used.saturating_add(artifact.bytes) > lineage_max {
        return Err(Refusal::unreadable(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a key's lineage stores at most {lineage_max} bytes of files; it holds {used}"),
        ));
    }
    Ok(None)
}

/// Checks, writes the file, then records it (see the module doc).
async fn store_file(ronin: &Ronin, artifact: Artifact, body: Bytes) -> Result<Artifact, Refusal> {
    let probe = artifact.clone();
    let lineage_max = ronin.artifacts_lineage_max;
    let held = ronin
        .store
        .read(move |conn| Ok::<_, kd_core::store::StoreError>(admit(conn, &probe, lineage_max)))
        .await
        .map_err(Refusal::server)??;
    if let Some(held) = held {
        return Ok(held);
    }
    let dir = ronin.artifacts_dir.clone();
    let hash = artifact.hash.clone();
    tokio::task::spawn_blocking(move || write_file(&dir, &hash, &body))
        .await
        .map_err(Refusal::server)?
        .map_err(|error| Refusal::internal("the file could not be stored; try again", error))?;
    let row = artifact.clone();
    let recorded = ronin
        .store
        .write(move |txn| {
            // Again inside the writer: two uploads of one lineage cannot both pass the quota.
            match admit(txn.conn(), &row, lineage_max)? {
                Some(held) => Ok(held),
                None => {
                    store::insert_artifact(txn.conn(), &row).map_err(Refusal::server)?;
                    Ok::<_, Refusal>(row)
                }
            }
        })
        .await
        .map_err(Refusal::server)?;
    if recorded.is_err() {
        discard_unrecorded(ronin, &artifact.hash).await;
    }
    recorded
}

/// Removes a file written for an upload the writer then refused, unless a row names it.
async fn discard_unrecorded(ronin: &Ronin, hash: &str) {
    let key = hash.to_owned();
    let known = ronin
        .store
        .read(move |conn| store::artifact(conn, &key).map_err(kd_core::store::StoreError::from))
        .await;
    if let Ok(None) = known {
        let path = path_of(&ronin.artifacts_dir, hash);
        let _ = tokio::task::spawn_blocking(move || std::fs::remove_file(path)).await;
    }
}

/// Writes `bytes` at the file's address: to a temporary name beside it (mode 0600, its
/// folders 0700), synced, renamed (an existing file with this address holds the same bytes,
/// and is kept).
fn write_file(dir: &FilePath, hash: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let path = path_of(dir, hash);
    if path.exists() {
        return Ok(());
    }
    let folder = path.parent().unwrap_or(dir);
    // Owner-only, as everything under the data folder (docs/decisions.md 491).
    kd_core::private_files::make_private_dir(dir)?;
    kd_core::private_files::make_private_dir(folder)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let temporary = folder.join(format!(".{hash}.{}.{nanos}.part", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// `GET /api/v1/artifacts/<sha256>`: the file's bytes as uploaded, with `ETag`
/// (`"<sha256>"`) and `Cache-Control: public, max-age=31536000, immutable`; 304 when
/// `If-None-Match` names it; 404 `error: not found` for a hash the hub does not hold. The
/// file is data, never a page of this hub: it is served as `application/octet-stream` with
/// `Content-Disposition: attachment; filename="<sha256>"`, `nosniff` and a sandboxing CSP,
/// whatever type it was declared with (the declared type stays on the task view's
/// `artifact.type`; docs/decisions.md 490).
pub async fn download(
    State(ronin): State<Ronin>,
    Path(hash): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !is_hash(&hash) {
        return Refusal::not_found().into_response();
    }
    let key = hash.clone();
    let found = ronin
        .store
        .read(move |conn| store::artifact(conn, &key).map_err(kd_core::store::StoreError::from))
        .await;
    match found {
        Ok(Some(_)) => {}
        Ok(None) => return Refusal::not_found().into_response(),
        Err(error) => return Refusal::server(error).into_response(),
    }
    let etag = format!("\"{hash}\"");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .map(|tag| tag.trim().trim_start_matches("W/"))
                .any(|tag| tag == etag || tag == "*")
        });
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let path = path_of(&ronin.artifacts_dir, &hash);
        let read = tokio::task::spawn_blocking(move || std::fs::read(path))
            .await
            .unwrap_or_else(|joined| Err(std::io::Error::other(joined)));
        match read {
            Ok(bytes) => (StatusCode::OK, Body::from(bytes)).into_response(),
            Err(error) => {
                return Refusal::internal("the file could not be read; try again", error)
                    .into_response();
            }
        }
    };
    let fixed = [
        (header::ETAG, etag),
        (header::CACHE_CONTROL, CACHE_CONTROL.to_owned()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; sandbox".to_owned(),
        ),
        (header::CONTENT_TYPE, SERVED_TYPE.to_owned()),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{hash}\""),
        ),
    ];
    for (name, value) in fixed {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// What a task view shows of the stored file a DELIVER names by `hash`: `{hash, url, bytes,
/// type, scan}` (`url` under `mount`: [`url_of`]), or `None` when the hub holds no file
/// with that hash.
///
/// # Errors
/// The database's error.
pub(crate) fn shown(
    conn: &kd_core::db::Connection,
    hash: &str,
    mount: &str,
) -> kd_core::db::Result<Option<Value>> {
    Ok(store::artifact(conn, hash)?.map(|artifact| {
        json!({
            "hash": artifact.hash,
            "url": url_of(mount, &artifact.hash),
            "bytes": artifact.bytes,
            "type": artifact.content_type,
            "scan": artifact.scan,
        })
    }))
}
