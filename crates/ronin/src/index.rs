//! The skill index (spec section 6d): `GET /api/v1/index?q=&level=&source=&limit=&offset=`,
//! `GET /api/v1/index/<hash>` and `GET /api/v1/index/stats`, over the bundled snapshot
//! `data/catalog/skills-index.jsonl.gz` (976 `SKILL.md` files of 11 public repositories, each
//! at its snapshot's commit; sources in `data/SOURCES.md`).
//!
//! Only metadata is kept; the text stays at its source (`raw_url`). The snapshot holds no
//! text, so the hub has read none of it: every entry's scan is `unscanned` ("listed, not
//! read"), never `clean` (docs/decisions.md 259). The index is read-only, parsed once, and
//! held in memory (about 1,000 entries); it is not in the store and not in the log.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::sync::OnceLock;

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Refusal, answer};

/// The bundled snapshot (gzip of JSON Lines), as the catalog import also reads it.
const SNAPSHOT: &[u8] = include_bytes!("../../../data/catalog/skills-index.jsonl.gz");

/// The most characters `q` may have.
pub const QUERY_MAX_CHARS: usize = 200;

/// The index's sources (section 6d: Anthropic's repository, the ClawHub feed, GitHub).
pub const SOURCES: [&str; 3] = ["anthropic", "clawhub", "github"];

/// The scan levels an entry may have: the scanner's three, and `unscanned`.
pub const LEVELS: [&str; 4] = ["clean", "review", "high", "unscanned"];

/// One `SKILL.md` of the snapshot, as the snapshot states it.
#[derive(Debug, Deserialize)]
struct Row {
    name: Option<String>,
    repo: String,
    path: String,
    locator: String,
    commit: String,
    commit_date: Option<String>,
    license: Option<String>,
    license_source: Option<String>,
    license_file_kind: Option<String>,
    sha256: String,
    bytes: u64,
}

/// One entry of the index: its answer, and the lowercase text `q` is matched against.
#[derive(Debug)]
struct Entry {
    view: Value,
    hash: String,
    source: &'static str,
    haystack: String,
}

/// The index, parsed once.
fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| match parse(SNAPSHOT) {
        Ok(entries) => entries,
        Err(error) => {
            tracing::error!(%error, "the bundled skill index cannot be read");
            Vec::new()
        }
    })
}

/// The entries of a gzipped JSON Lines snapshot, in file order.
fn parse(gz: &[u8]) -> std::io::Result<Vec<Entry>> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz).read_to_string(&mut text)?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str::<Row>(line)
                .map(entry)
                .map_err(std::io::Error::other)
        })
        .collect()
}

/// The source of a repository: `anthropic` for Anthropic's own, `github` for the others.
fn source_of(repo: &str) -> &'static str {
    if repo.split('/').next() == Some("anthropics") {
        "anthropic"
    } else {
        "github"
    }
}

fn entry(row: Row) -> Entry {
    let source = source_of(&row.repo);
    // Four files have no front-matter name: their folder names them.
    let name = row
        .name
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| {
            let folder = row.path.rsplit('/').nth(1).unwrap_or(&row.path);
            folder.to_owned()
        });
    let haystack = format!("{name}\n{}\n{}", row.repo, row.path).to_lowercase();
    let raw_url = format!(
        "https://raw.githubusercontent.com/{}/{}/{}",
        row.repo, row.commit, row.path
    );
    let view = json!({
        "hash": row.sha256,
        "name": name,
        "source": source,
        "repo": row.repo,
        "path": row.path,
        "url": row.locator,
        "raw_url": raw_url,
        "commit": row.commit,
        "commit_date": row.commit_date,
        "bytes": row.bytes,
        "license": row.license,
        "license_source": row.license_source,
        "license_file_kind": row.license_file_kind,
        "scan": {
            "level": "unscanned",
            "label": "listed, not read",
            "flags": [],
            "reasons": [],
        },
    });
    Entry {
        view,
        hash: row.sha256,
        source,
        haystack,
    }
}

/// The parameters `GET /api/v1/index` takes (`hide_flagged`: `1` leaves out entries the
/// scanner flagged; none is, the index being unscanned).
const PARAMETERS: [&str; 6] = ["q", "level", "source", "hide_flagged", "limit", "offset"];

/// A query that is not one of the allowed values, or out of range: `invalid` (400).
fn one_of(name: &str, value: Option<&str>, allowed: &[&str]) -> Result<(), Refusal> {
    match value {
        Some(value) if !allowed.contains(&value) => Err(Refusal::invalid(format!(
            "{name} must be one of {}",
            allowed.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// `GET /api/v1/index?q=&level=&source=&limit=&offset=`: the entries whose name, repository
/// or path contains `q` (case-insensitive), of that scan level and source, in snapshot order:
/// `{"ok":true,"entries":[…],"total","limit","offset"}`. Bad parameters → 400 `invalid`.
pub async fn index(Query(query): Query<HashMap<String, String>>) -> Response {
    match search(&query) {
        Ok(body) => answer(StatusCode::OK, &body),
        Err(refusal) => refusal.into_response(),
    }
}

fn search(query: &HashMap<String, String>) -> Result<Value, Refusal> {
    if query
        .keys()
        .any(|name| !PARAMETERS.contains(&name.as_str()))
    {
        return Err(Refusal::invalid(format!(
            "the index takes {} only",
            PARAMETERS.join(", ")
        )));
    }
    let get = |name: &str| query.get(name).map(String::as_str);
    one_of("level", get("level"), &LEVELS)?;
    one_of(
        "hide_flagged",
        get("hide_flagged"),
        &["0", "1", "true", "false"],
    )?;
    one_of("source", get("source"), &SOURCES)?;
    let needle = get("q").unwrap_or("").trim().to_lowercase();
    if needle.chars().count() > QUERY_MAX_CHARS {
        return Err(Refusal::invalid(format!(
            "q must be at most {QUERY_MAX_CHARS} characters"
        )));
    }
    let (limit, offset) = crate::read::page(query)?;
    // Every entry is unscanned (the module's doc): another level matches none.
    let level_matches = get("level").is_none_or(|level| level == "unscanned");
    let matching: Vec<&Entry> = entries()
        .iter()
        .filter(|_| level_matches)
        .filter(|entry| get("source").is_none_or(|source| source == entry.source))
        .filter(|entry| entry.haystack.contains(&needle))
        .collect();
    let entries: Vec<&Value> = matching
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(0))
        .map(|entry| &entry.view)
        .collect();
    Ok(json!({
        "ok": true,
        "entries": entries,
        "total": matching.len(),
        "limit": limit,
        "offset": offset,
    }))
}

/// The first entry whose `SKILL.md` has this sha256 (its view), if the index holds one.
pub(crate) fn by_hash(hash: &str) -> Option<&'static Value> {
    entries()
        .iter()
        .find(|entry| entry.hash == hash)
        .map(|entry| &entry.view)
}

/// `GET /api/v1/index/<hash>`: every entry whose `SKILL.md` has that sha256 (the same file
/// may sit in several repositories): `{"ok":true,"hash","entries":[…]}`. A hash that is not
/// 64 lowercase hex → 400 `invalid`; one the index does not hold → 404.
pub async fn entry_by_hash(Path(hash): Path<String>) -> Response {
    if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Refusal::invalid("the hash must be 64 lowercase hex digits (a SKILL.md's sha256)")
            .into_response();
    }
    let found: Vec<&Value> = entries()
        .iter()
        .filter(|entry| entry.hash == hash)
        .map(|entry| &entry.view)
        .collect();
    if found.is_empty() {
        return Refusal::not_found().into_response();
    }
    answer(
        StatusCode::OK,
        &json!({ "ok": true, "hash": hash, "entries": found }),
    )
}

/// `GET /api/v1/index/stats`: `{"ok":true,"total","distinct_hashes","by_source","by_level",
/// "by_repo","by_license_file_kind"}`, every source and level named (0 when none).
pub async fn stats() -> Response {
    static STATS: OnceLock<Value> = OnceLock::new();
    answer(StatusCode::OK, STATS.get_or_init(|| stats_of(entries())))
}

fn stats_of(entries: &[Entry]) -> Value {
    let mut by_source: BTreeMap<&str, usize> = SOURCES.iter().map(|source| (*source, 0)).collect();
    let mut by_level: BTreeMap<&str, usize> = LEVELS.iter().map(|level| (*level, 0)).collect();
    let mut by_repo: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut hashes = std::collections::HashSet::new();
    for entry in entries {
        *by_source.entry(entry.source).or_default() += 1;
        *by_level.entry("unscanned").or_default() += 1;
        *by_repo
            .entry(entry.view["repo"].as_str().unwrap_or(""))
            .or_default() += 1;
        *by_kind
            .entry(
                entry.view["license_file_kind"]
                    .as_str()
                    .unwrap_or("unknown"),
            )
            .or_default() += 1;
        hashes.insert(entry.hash.as_str());
    }
    json!({
        "ok": true,
        "total": entries.len(),
        "distinct_hashes": hashes.len(),
        "by_source": by_source,
        "by_level": by_level,
        "by_repo": by_repo,
        "by_license_file_kind": by_kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_snapshot_parses_whole() {
        let entries = entries();
        assert_eq!(entries.len(), 976);
        assert!(entries.iter().all(|entry| entry.hash.len() == 64));
        assert!(
            entries
                .iter()
                .all(|entry| !entry.view["name"].as_str().unwrap().is_empty())
        );
    }
}
