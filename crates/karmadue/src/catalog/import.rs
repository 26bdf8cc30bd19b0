//! Importing catalog rows (spec issue "A real catalog, bundled"; DECISIONS 9).
//!
//! Rows are JSON Lines in the formats of the bundled snapshots (`data/catalog/*.jsonl.gz`,
//! described in `data/SOURCES.md`): npm, PyPI, GitHub-list and agent-skill rows, told apart by
//! their `id` prefix. Each row is parsed and normalised before anything is written; a bad row is
//! reported with its line number and skipped, never half-loaded. A row whose source record is
//! unchanged since the last import is skipped (imports are idempotent). Each new or changed row
//! is one `resource.imported` event carrying the source row as read (the projection is
//! `parse_row` of it), written with the projections in the same transaction.

use std::io::BufRead;

use crate::catalog::events::ResourceImported;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::model::{Claim, METADATA_READ, Resource, claim_id, store_resource};
use kd_kernel::Kernel;
use kd_kernel::error::ToolError;

/// The evidence label of a `released_at` claim whose source gives no time (it holds the
/// import time instead; spec issue: "released_at as the upstream time read or the import time").
pub const IMPORT_TIME_LABEL: &str =
    "The source gives no release time: this is when this hub imported the record; not a check.";

/// Rows per write transaction.
const CHUNK: usize = 500;

/// The bundled snapshot, compressed (`data/catalog/`). Loaded on first start
/// (`first_start::load_bundled`), the files in this order.
pub const BUNDLED: [(&str, &[u8]); 4] = [
    (
        "catalog-github.jsonl.gz",
        include_bytes!("../../../../data/catalog/catalog-github.jsonl.gz"),
    ),
    (
        "skills-index.jsonl.gz",
        include_bytes!("../../../../data/catalog/skills-index.jsonl.gz"),
    ),
    (
        "catalog-npm.jsonl.gz",
        include_bytes!("../../../../data/catalog/catalog-npm.jsonl.gz"),
    ),
    (
        "catalog-pypi.jsonl.gz",
        include_bytes!("../../../../data/catalog/catalog-pypi.jsonl.gz"),
    ),
];

/// Rows in the bundled snapshot's files together (catalog version 2: 8,747 GitHub, 976 skill,
/// 41,129 npm and 61,775 PyPI rows; `data/SOURCES.md`). A first start imports them as one
/// `resource.imported` event each, then the 3 DEMO fixtures.
pub const BUNDLED_ROWS: u64 = 112_627;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    /// Lines read (blank lines included).
    pub lines: u64,
    /// Rows written (new or changed).
    pub imported: u64,
    /// Rows skipped because their source record is unchanged.
    pub unchanged: u64,
    /// Rows refused: (line number, reason).
    pub bad: Vec<(u64, String)>,
}

/// Parses one source row into a resource and its claims. `now_ms` stands in for an upstream
/// time the row does not give.
///
/// # Errors
/// A plain reason when the row is not a catalog row this hub understands.
pub fn parse_row(line: &str, now_ms: i64) -> Result<(Resource, Vec<Claim>), String> {
    parse_value(&read_row(line)?, now_ms)
}

/// One line as a JSON object.
fn read_row(line: &str) -> Result<Value, String> {
    match serde_json::from_str(line) {
        Ok(row @ Value::Object(_)) => Ok(row),
        Ok(_) => Err("not a JSON object".into()),
        Err(error) => Err(format!("not JSON: {error}")),
    }
}

/// [`parse_row`] of a row already read (a JSON object).
fn parse_value(value: &Value, now_ms: i64) -> Result<(Resource, Vec<Claim>), String> {
    let Value::Object(row) = value else {
        return Err("not a JSON object".into());
    };
    let id = text(row, "id").ok_or("missing id")?;
    let record_hash = hex::encode(Sha256::digest(
        kd_protocol::canonical::canonical_value_text(value).as_bytes(),
    ));
    let (source, rest) = id
        .strip_prefix("kd:res:")
        .and_then(|rest| rest.split_once(':'))
        .ok_or("id must look like kd:res:<source>:<name>")?;
    if rest.is_empty() || rest.len() > 300 || rest.chars().any(char::is_control) {
        return Err("id has an empty, over-long or control-character name".into());
    }
    let mut resource = match source {
        "npm" => npm(row, rest)?,
        "pypi" => pypi(row, rest)?,
        "github" => github(row)?,
        "skill" => skill(row, rest)?,
        other => return Err(format!("unknown source {other:?}")),
    };
    resource.resource_id = id.to_owned();
    resource.record_hash = record_hash;
    if resource.released_ms.is_none() {
        resource.released_ms = Some(now_ms);
        resource.released_source = "import".into();
    }
    let claims = metadata_claims(&resource, now_ms);
    Ok((resource, claims))
}

fn text<'a>(row: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    row.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

fn base(source: &str, locator: &str, title: &str, kind: &str, owner: &str) -> Resource {
    Resource {
        resource_id: String::new(),
        source: source.into(),
        locator: locator.into(),
        title: title.into(),
        kind: kind.into(),
        description: None,
        owner: owner.to_lowercase(),
        license: None,
        version: None,
        released_ms: None,
        released_source: "upstream".into(),
        popularity: 0.0,
        popularity_label: None,
        curated: false,
        archived: false,
        risky: false,
        demo: false,
        package_ids: Vec::new(),
        registered_by: None,
        record_hash: String::new(),
    }
}

fn npm(row: &Map<String, Value>, name: &str) -> Result<Resource, String> {
    let locator = text(row, "locator").unwrap_or_default();
    if locator != format!("npm:{name}") {
        return Err("npm locator must be npm:<name> matching the id".into());
    }
    let owner = name
        .strip_prefix('@')
        .and_then(|scoped| scoped.split('/').next())
        .unwrap_or(name);
    let mut resource = base(
        "npm",
        locator,
        text(row, "title").unwrap_or(name),
        text(row, "type").unwrap_or("package"),
        owner,
    );
    resource.description = text(row, "description").map(str::to_owned);
    resource.version = text(row, "version").map(str::to_owned);
    if let Some(downloads) = row.get("downloads_a_month").and_then(Value::as_u64) {
        // log10 scale: 10 million downloads a month reads as 1.0.
        resource.popularity = ((downloads as f64 + 1.0).log10() / 7.0).clamp(0.0, 1.0);
        resource.popularity_label =
            Some(format!("{} downloads a month (npm)", thousands(downloads)));
    }
    Ok(resource)
}

fn pypi(row: &Map<String, Value>, name: &str) -> Result<Resource, String> {
    let locator = text(row, "locator").unwrap_or_default();
    if locator != format!("pypi:{name}") {
        return Err("pypi locator must be pypi:<name> matching the id".into());
    }
    let mut resource = base(
        "pypi",
        locator,
        text(row, "title").unwrap_or(name),
        text(row, "type").unwrap_or("package"),
        name,
    );
    resource.description = text(row, "description").map(str::to_owned);
    resource.version = text(row, "version").map(str::to_owned);
    if let Some(month) = text(row, "month") {
        resource.released_ms = month_start_ms(month);
    }
    if let Some(rank) = row
        .get("rank_among_15000_most_downloaded")
        .and_then(Value::as_u64)
    {
        // Rank 1 reads as 1.0, rank 15,000 as about 0.45; unranked packages stay 0.
        resource.popularity = (1.0 - (rank as f64).log10() / 8.0).clamp(0.0, 1.0);
        resource.popularity_label = Some(format!(
            "rank {} among the 15,000 most downloaded PyPI packages",
            thousands(rank)
        ));
    }
    Ok(resource)
}

fn github(row: &Map<String, Value>) -> Result<Resource, String> {
    let repo = text(row, "repo").ok_or("github row needs repo")?;
    let (owner, _) = repo.split_once('/').ok_or("repo must be owner/name")?;
    let locator = text(row, "locator").ok_or("github row needs locator")?;
    if !locator.starts_with("https://github.com/") {
        return Err("github locator must be a https://github.com/ URL".into());
    }
    let title = text(row, "title").unwrap_or(repo);
    let mut resource = base(
        "github",
        locator,
        title,
        text(row, "type").unwrap_or("repo"),
        owner,
    );
    resource.description = text(row, "description").map(str::to_owned);
    resource.license = text(row, "license").map(str::to_owned);
    resource.version = text(row, "version").map(str::to_owned);
    resource.released_ms = text(row, "last_commit").and_then(rfc3339_ms);
    let lists = row
        .get("source_list")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let categories: Vec<&str> = std::iter::once(text(row, "category"))
        .flatten()
        .chain(
            row.get("categories")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|entry| entry.get("category").and_then(Value::as_str)),
        )
        .collect();
    resource.archived = categories
        .iter()
        .any(|category| category.contains("Archived"));
    resource.curated = repo == "modelcontextprotocol/servers"
        || repo == "ggml-org/whisper.cpp"
        || categories.iter().any(|category| {
            *category == "Reference Servers" || *category == "Official Integrations"
        });
    // No stars in the lists: being listed by several curated lists is the popularity signal.
    resource.popularity = (lists as f64 / 4.0).clamp(0.0, 1.0) * 0.6;
    resource.popularity_label = Some(format!(
        "listed in {lists} curated MCP server list{}",
        if lists == 1 { "" } else { "s" }
    ));
    Ok(resource)
}

fn skill(row: &Map<String, Value>, rest: &str) -> Result<Resource, String> {
    let repo = text(row, "repo").ok_or("skill row needs repo")?;
    let (owner, _) = repo.split_once('/').ok_or("repo must be owner/name")?;
    let path = text(row, "path").ok_or("skill row needs path")?;
    if rest != format!("{repo}/{path}") {
        return Err("skill id must be kd:res:skill:<repo>/<path>".into());
    }
    let locator = text(row, "locator").ok_or("skill row needs locator")?;
    let name = text(row, "name").unwrap_or(path);
    let mut resource = base("skill", locator, name, "skill", owner);
    resource.description = Some(format!("Agent skill {name} ({path} in {repo})"));
    resource.license = text(row, "license")
        .filter(|license| !license.starts_with("Complete terms"))
        .or_else(|| text(row, "license_file_kind"))
        .map(str::to_owned);
    resource.version = text(row, "commit").map(|commit| commit.chars().take(12).collect());
    resource.released_ms = text(row, "commit_date").and_then(rfc3339_ms);
    Ok(resource)
}

/// The claims a metadata read makes: license, version, released_at (each when known).
fn metadata_claims(resource: &Resource, now_ms: i64) -> Vec<Claim> {
    let place = match resource.source.as_str() {
        "npm" => "npm's public package list",
        "pypi" => "PyPI's public package list",
        "github" => "a curated public list of MCP servers on GitHub",
        "skill" => "the skill's repository on GitHub",
        _ => "public metadata",
    };
    let label = format!("Read from {place}. Not confirmed by the maker and not a check.");
    let version = resource.version.as_deref();
    let mut claims = Vec::new();
    let mut add = |kind: &str, value: Option<String>, label: &str| {
        if let Some(value) = value {
            claims.push(Claim {
                claim_id: claim_id(
                    &resource.resource_id,
                    kind,
                    METADATA_READ,
                    version,
                    Some(&value),
                ),
                resource_id: resource.resource_id.clone(),
                version: version.map(str::to_owned),
                kind: kind.into(),
                value: Some(value),
                method: METADATA_READ.into(),
                evidence_type: "provider_confirmed".into(),
                evidence_label: label.to_owned(),
                counts_as_verification: false,
                source: Some(resource.locator.clone()),
                observed_ms: now_ms,
                status: "public".into(),
                demo: resource.demo,
            });
        }
    };
    add("license", resource.license.clone(), &label);
    add("version", resource.version.clone(), &label);
    let released_label = if resource.released_source == "import" {
        IMPORT_TIME_LABEL.to_owned()
    } else {
        label.clone()
    };
    add(
        "released_at",
        resource.released_ms.map(kd_core::clock::rfc3339_ms),
        &released_label,
    );
    claims
}

fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn rfc3339_ms(text: &str) -> Option<i64> {
    let parsed =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(parsed.unix_timestamp_nanos() / 1_000_000).ok()
}

fn month_start_ms(month: &str) -> Option<i64> {
    rfc3339_ms(&format!("{month}-01T00:00:00Z"))
}

/// Imports JSON Lines from `reader` as `name`. `progress` is told the line count as it goes.
///
/// # Errors
/// `internal` when reading or the store fails; bad rows are reported, not errors.
pub async fn import_lines(
    hub: &Kernel,
    name: &str,
    reader: impl BufRead,
    mut progress: impl FnMut(u64),
) -> Result<ImportReport, ToolError> {
    let mut report = ImportReport::default();
    let mut chunk: Vec<Parsed> = Vec::with_capacity(CHUNK);
    let now = hub.clock.now_ms();
    for line in reader.lines() {
        let line = line.map_err(ToolError::internal_from)?;
        report.lines += 1;
        if line.trim().is_empty() {
            continue;
        }
        // Read once: the projection and the event's source row are the same value.
        match read_row(&line).and_then(|row| parse_value(&row, now).map(|parsed| (row, parsed))) {
            Ok((row, (resource, claims))) => chunk.push(Parsed {
                row,
                observed_ms: now,
                resource,
                claims,
            }),
            Err(reason) => report.bad.push((report.lines, reason)),
        }
        if chunk.len() >= CHUNK {
            write_chunk(hub, name, std::mem::take(&mut chunk), &mut report).await?;
            progress(report.lines);
        }
    }
    write_chunk(hub, name, chunk, &mut report).await?;
    progress(report.lines);
    Ok(report)
}

/// A parsed row: the source row as read (what the event records) and what it projects to.
struct Parsed {
    row: Value,
    /// The time `parse_row` was given: what the event records, so a replay parses the same.
    observed_ms: i64,
    resource: Resource,
    claims: Vec<Claim>,
}

async fn write_chunk(
    hub: &Kernel,
    name: &str,
    chunk: Vec<Parsed>,
    report: &mut ImportReport,
) -> Result<(), ToolError> {
    if chunk.is_empty() {
        return Ok(());
    }
    let file = name.to_owned();
    let (imported, unchanged) = hub
        .store
        .write(move |txn| -> Result<(u64, u64), ToolError> {
            let (mut imported, mut unchanged) = (0, 0);
            for Parsed {
                row,
                observed_ms,
                resource,
                claims,
            } in chunk
            {
                let existing = super::store::record_hash(txn.conn(), &resource.resource_id)?;
                if existing.as_deref() == Some(resource.record_hash.as_str()) {
                    unchanged += 1;
                    continue;
                }
                store_resource(txn.conn(), &resource, &claims, txn.now_ms())?;
                // The source row itself: `parse_row(row, observed_ms)` rebuilds the projection.
                txn.record(
                    "hub",
                    resource.resource_id.clone(),
                    &ResourceImported::Row {
                        file: file.clone(),
                        observed_ms,
                        row,
                    },
                )?;
                imported += 1;
            }
            Ok((imported, unchanged))
        })
        .await??;
    report.imported += imported;
    report.unchanged += unchanged;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_each_source_normalise_with_metadata_claims() {
        let npm = r#"{"id":"kd:res:npm:@scope/pkg-mcp","locator":"npm:@scope/pkg-mcp","title":"@scope/pkg-mcp","type":"mcp_server","version":"1.2.0","downloads_a_month":1536,"description":"An MCP server","selection":"mcp","mcp_match":"word"}"#;
        let (resource, claims) = parse_row(npm, 1_000).unwrap();
        assert_eq!(resource.owner, "scope");
        assert_eq!(
            resource.popularity_label.as_deref(),
            Some("1,536 downloads a month (npm)")
        );
        assert_eq!(resource.released_source, "import");
        assert_eq!(
            claims.len(),
            2,
            "version and released_at; npm rows carry no license"
        );
        assert!(claims.iter().all(|claim| claim.method == METADATA_READ
            && !claim.counts_as_verification
            && claim.evidence_type == "provider_confirmed"));
        let github = r#"{"id":"kd:res:github:modelcontextprotocol/servers-archived/src/postgres","locator":"https://github.com/modelcontextprotocol/servers-archived/tree/main/src/postgres","title":"PostgreSQL","type":"mcp_server","repo":"modelcontextprotocol/servers-archived","subpath":"src/postgres","description":"Read-only database access with schema inspection.","category":"Reference Servers / Archived","source_list":["a"],"categories":[],"popularity":null,"license":null,"version":null,"last_commit":null}"#;
        let (resource, _) = parse_row(github, 1_000).unwrap();
        assert!(resource.archived);
        assert_eq!(resource.owner, "modelcontextprotocol");
    }

    #[test]
    fn bad_rows_say_why() {
        assert!(
            parse_row("not json", 0)
                .unwrap_err()
                .starts_with("not JSON")
        );
        assert_eq!(parse_row("[]", 0).unwrap_err(), "not a JSON object");
        assert_eq!(
            parse_row(r#"{"id":"kd:res:npm:x","locator":"npm:y"}"#, 0).unwrap_err(),
            "npm locator must be npm:<name> matching the id"
        );
        assert!(
            parse_row(r#"{"id":"kd:res:gem:x"}"#, 0)
                .unwrap_err()
                .contains("unknown source")
        );
        assert_eq!(
            parse_row(r#"{"locator":"npm:y"}"#, 0).unwrap_err(),
            "missing id"
        );
    }

    #[test]
    fn the_bundled_files_hold_bundled_rows_lines_and_version_two_packages() {
        let mut lines = 0u64;
        let mut ids = std::collections::HashSet::new();
        for (_, bytes) in BUNDLED {
            let text = std::io::read_to_string(flate2::read::GzDecoder::new(bytes)).unwrap();
            for line in text.lines() {
                lines += 1;
                if let Some(id) = line.get(7..).and_then(|rest| rest.split('"').next()) {
                    ids.insert(id.to_owned());
                }
            }
        }
        assert_eq!(lines, BUNDLED_ROWS);
        for id in [
            "kd:res:pypi:faster-whisper",
            "kd:res:pypi:openai-whisper",
            "kd:res:pypi:whisperx",
            "kd:res:pypi:vosk",
            "kd:res:pypi:sherpa-onnx",
            "kd:res:npm:0nmcp",
            "kd:res:github:ggml-org/whisper.cpp",
        ] {
            assert!(ids.contains(id), "{id}");
        }
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_536), "1,536");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
