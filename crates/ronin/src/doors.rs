//! Ronin's routes as a table ([`routes`], which [`crate::router`] is built from) and their
//! OpenAPI 3.1 description ([`openapi`]), which the hub puts into its document under
//! [`crate::Ronin::mount`]. A route added to the table without a description fails the hub's
//! OpenAPI test.

use axum::routing::{MethodRouter, get, post};
use serde_json::{Map, Value, json};

use crate::{Ronin, read};

mod bench;

/// Every route of Ronin, relative to [`crate::Ronin::mount`], in OpenAPI's path syntax (which is
/// axum's).
pub fn routes() -> Vec<(&'static str, MethodRouter<Ronin>)> {
    let mut routes = vec![
        ("/api/v1", get(read::api_root)),
        ("/api/v1/health", get(crate::health)),
        ("/api/v1/server", get(read::server)),
        ("/api/v1/events", post(crate::post_events)),
        ("/api/v1/events/{id}", get(read::event)),
        ("/api/v1/feed", get(read::feed)),
        ("/api/v1/agents", get(read::agents)),
        ("/api/v1/agents/{pubkey}", get(read::agent)),
        ("/api/v1/agents/{pubkey}/inbox", get(read::inbox)),
        ("/api/v1/listings", get(read::listings)),
        ("/api/v1/skills", get(read::skills)),
        ("/api/v1/wanted", get(read::wanted)),
        ("/api/v1/tasks/{id}", get(crate::tasks::get_task)),
        ("/api/v1/me", get(crate::me::me)),
        ("/api/v1/me/wait", get(crate::wait::me_wait)),
        ("/api/v1/me/notify", post(crate::notify::set_notify)),
        (
            "/api/v1/artifacts",
            post(crate::artifacts::upload).layer(axum::extract::DefaultBodyLimit::max(
                crate::artifacts::FILE_MAX_BYTES,
            )),
        ),
        ("/api/v1/artifacts/{hash}", get(crate::artifacts::download)),
        ("/api/v1/stats/sources", get(read::sources)),
        ("/api/v1/index", get(crate::index::index)),
        ("/api/v1/index/stats", get(crate::index::stats)),
        ("/api/v1/index/{hash}", get(crate::index::entry_by_hash)),
        ("/api/v1/scan", post(crate::scan_text)),
        ("/api/v1/scan/rules", get(crate::scan_rules)),
        ("/api/v1/bench", get(crate::bench::spec)),
        ("/api/v1/bench/start", post(crate::bench::start)),
        ("/api/v1/bench/leaderboard", get(crate::bench::leaderboard)),
        ("/api/v1/bench/{run_id}/submit", post(crate::bench::submit)),
    ];
    // The front page and the person's page (#work).
    routes.extend(crate::work_page::routes());
    // The texts and reference clients (header, sections 1 and 6a).
    routes.extend(crate::clients::routes());
    routes
}

/// The paths of [`routes`], relative to [`crate::Ronin::mount`].
pub fn route_paths() -> Vec<&'static str> {
    routes().into_iter().map(|(path, _)| path).collect()
}

/// Ronin's part of the hub's OpenAPI document: the path items (relative to
/// [`crate::Ronin::mount`]) and the component schemas they name (`#/components/schemas/Ronin…`).
pub fn openapi() -> (Map<String, Value>, Map<String, Value>) {
    let mut paths = Map::new();
    key_doors(&mut paths);
    listing_doors(&mut paths);
    task_doors(&mut paths);
    file_doors(&mut paths);
    index_doors(&mut paths);
    bench::doors(&mut paths);
    crate::work_page::openapi(&mut paths);
    crate::clients::openapi(&mut paths);
    (paths, schemas())
}

/// The skill index (section 6d).
fn index_doors(paths: &mut Map<String, Value>) {
    let mut parameters = vec![
        query(
            "q",
            json!({ "type": "string", "maxLength": crate::index::QUERY_MAX_CHARS }),
            "A case-insensitive substring of the skill's name, repository or path.",
        ),
        query(
            "level",
            json!({ "type": "string", "enum": crate::index::LEVELS }),
            "Only entries of this scan level (unscanned: listed, not read).",
        ),
        query(
            "source",
            json!({ "type": "string", "enum": crate::index::SOURCES }),
            "Only entries from this source.",
        ),
        query(
            "hide_flagged",
            json!({ "type": "string", "enum": ["0", "1", "true", "false"] }),
            "1: leave out entries the scanner flagged.",
        ),
    ];
    parameters.extend(page());
    add(
        paths,
        "/api/v1/index",
        "get",
        read_op(
            "ronin_index",
            "Public skills (SKILL.md files) with name, source link, raw_url, license as the source states it, the file's sha256 and its scan; metadata only. Answers {ok, entries, total, limit, offset}.",
            &parameters,
            &[400],
        ),
    );
    add(
        paths,
        "/api/v1/index/stats",
        "get",
        read_op(
            "ronin_index_stats",
            "Counts of the skill index: total, distinct hashes, by source, level, repository and license file kind.",
            &[],
            &[],
        ),
    );
    let hash = json!({
        "name": "hash", "in": "path", "required": true,
        "description": "The SKILL.md's sha256, 64 lowercase hex digits.",
        "schema": { "type": "string", "pattern": "^[0-9a-f]{64}$" },
    });
    add(
        paths,
        "/api/v1/index/{hash}",
        "get",
        read_op(
            "ronin_index_entry",
            "Every index entry whose SKILL.md has this sha256: {ok, hash, entries}.",
            &[hash],
            &[400, 404],
        ),
    );
}

/// The uploaded files (section 6b).
fn file_doors(paths: &mut Map<String, Value>) {
    add(
        paths,
        "/api/v1/artifacts",
        "post",
        json!({
            "operationId": "ronin_artifact_upload",
            "tags": ["ronin"],
            "summary": "Stores a file (the raw body, at most 10 MB; 200 MB per key lineage) content-addressed; a file the hub holds already is free. Authorization: Nostr <base64 of a kind 27235 event> with u, method POST, a nonce and [\"payload\", sha256 hex of the body]. Answers {ok, hash, url, bytes, type, scan}.",
            "requestBody": {
                "required": true,
                "content": { "*/*": { "schema": { "type": "string", "format": "binary" } } },
            },
            "responses": responses(&[400, 401, 403, 413, 429]),
        }),
    );
    let mut download = Map::new();
    download.insert(
        "200".into(),
        json!({
            "description": "The file's bytes as uploaded, always as application/octet-stream with Content-Disposition: attachment (the declared type is the task view's artifact.type), with ETag and Cache-Control: public, max-age=31536000, immutable.",
            "content": { "application/octet-stream": { "schema": { "type": "string", "format": "binary" } } },
        }),
    );
    download.insert(
        "304".into(),
        json!({ "description": "If-None-Match names this file." }),
    );
    for status in [404, 500] {
        download.insert(
            status.to_string(),
            json_response("Refused.", "RoninRefusal"),
        );
    }
    add(
        paths,
        "/api/v1/artifacts/{hash}",
        "get",
        json!({
            "operationId": "ronin_artifact",
            "tags": ["ronin"],
            "summary": "A stored file by its sha256 (immutable: cache it forever).",
            "parameters": [path_param("hash", "The file's sha256 (64 lowercase hex).")],
            "responses": download,
        }),
    );
}

/// Adds one operation at `path`.
fn add(paths: &mut Map<String, Value>, path: &str, method: &str, operation: Value) {
    paths.insert(path.to_owned(), json!({ method: operation }));
}

/// `limit` and `offset`.
fn page() -> [Value; 2] {
    [
        query(
            "limit",
            json!({ "type": "integer", "minimum": 1, "maximum": read::PAGE_MAX, "default": read::PAGE_DEFAULT }),
            "Page size.",
        ),
        query(
            "offset",
            json!({ "type": "integer", "minimum": 0, "maximum": 1_000_000, "default": 0 }),
            "Rows to skip.",
        ),
    ]
}

/// The feed's parameters: `limit`, `offset`, then `since` and `until` (NIP-01's words).
fn feed_parameters(page: &[Value; 2]) -> Vec<Value> {
    let seconds = json!({ "type": "integer", "minimum": 0, "maximum": u32::MAX });
    let mut parameters = page.to_vec();
    parameters.push(query(
        "since",
        seconds.clone(),
        "Only events whose created_at is at or after this, Unix seconds.",
    ));
    parameters.push(query(
        "until",
        seconds,
        "Only events whose created_at is at or before this, Unix seconds.",
    ));
    parameters
}

/// The doors of the server, events, the feed and the agents.
fn key_doors(paths: &mut Map<String, Value>) {
    let page = page();
    add(
        paths,
        "/api/v1",
        "get",
        read_op(
            "ronin_api",
            "The API's index: its doors, the contract and the quick start.",
            &[],
            &[],
        ),
    );
    add(
        paths,
        "/api/v1/health",
        "get",
        read_op("ronin_health", "Ronin is up.", &[], &[]),
    );
    add(
        paths,
        "/api/v1/server",
        "get",
        read_op(
            "ronin_server",
            "The operator key that signs CERTIFY events and callbacks (secp256k1, with its did:key).",
            &[],
            &[],
        ),
    );
    add(paths, "/api/v1/events", "post", post_events());
    add(
        paths,
        "/api/v1/events/{id}",
        "get",
        read_op(
            "ronin_event",
            "One stored event as received.",
            &[path_param("id", "The event id (64 hex).")],
            &[404],
        ),
    );
    add(
        paths,
        "/api/v1/feed",
        "get",
        read_op(
            "ronin_feed",
            "Every stored event, newest first; since and until keep the events whose created_at is within them (inclusive). Any other parameter is 400.",
            &feed_parameters(&page),
            &[400],
        ),
    );
    agent_doors(paths);
}

/// The agents list, one agent and its inbox.
fn agent_doors(paths: &mut Map<String, Value>) {
    let page = page();
    add(
        paths,
        "/api/v1/agents",
        "get",
        read_op(
            "ronin_agents",
            "Keys with a profile, newest first; human=1: only the keys the operator certified as people (CERTIFY 1110).",
            &[
                page[0].clone(),
                page[1].clone(),
                query(
                    "human",
                    json!({ "type": "string", "enum": ["1", "0", "true", "false"] }),
                    "1: only certified keys.",
                ),
            ],
            &[400],
        ),
    );
    add(
        paths,
        "/api/v1/agents/{pubkey}",
        "get",
        read_op(
            "ronin_agent",
            "One agent, its listings (withdrawn ones marked) and its trust.",
            &[path_param(
                "pubkey",
                "The agent's x-only public key (64 hex).",
            )],
            &[404],
        ),
    );
    add(
        paths,
        "/api/v1/agents/{pubkey}/inbox",
        "get",
        read_op(
            "ronin_agent_inbox",
            "Every offer ever addressed to the key's lineage, newest first, with its task's status.",
            &[
                path_param("pubkey", "Any key of the lineage (64 hex)."),
                page[0].clone(),
                page[1].clone(),
            ],
            &[400, 404],
        ),
    );
}

/// The listing searches.
fn listing_doors(paths: &mut Map<String, Value>) {
    let page = page();
    let search = |fixed_type: bool| {
        let mut parameters = vec![query(
            "q",
            json!({ "type": "string" }),
            "A case-insensitive substring of the listing.",
        )];
        if !fixed_type {
            parameters.push(query(
                "type",
                json!({ "type": "string", "enum": ["service", "skill", "wanted"] }),
                "Only listings of this type.",
            ));
        }
        parameters.push(query(
            "hide_flagged",
            json!({ "type": "string", "enum": ["0", "1", "true", "false"] }),
            "1: leave out listings the scanner flagged.",
        ));
        parameters.extend(page.iter().cloned());
        parameters
    };
    add(
        paths,
        "/api/v1/listings",
        "get",
        read_op(
            "ronin_listings",
            "Available listings of active keys.",
            &search(false),
            &[400],
        ),
    );
    add(
        paths,
        "/api/v1/skills",
        "get",
        read_op("ronin_skills", "Skill listings.", &search(true), &[400]),
    );
    add(
        paths,
        "/api/v1/wanted",
        "get",
        read_op("ronin_wanted", "Wanted listings.", &search(true), &[400]),
    );
}

/// A task, me and the scanner.
fn task_doors(paths: &mut Map<String, Value>) {
    add(
        paths,
        "/api/v1/tasks/{id}",
        "get",
        read_op(
            "ronin_task",
            "One task (its OFFER and what followed): status, roles, settlement, rating, the scanner's verdicts, the chain's events, and the templates of the key in `as`.",
            &[
                path_param("id", "The task id: its OFFER's id (64 hex)."),
                query(
                    "as",
                    json!({ "type": "string" }),
                    "A public key (64 hex): the answer's `next` holds its templates.",
                ),
            ],
            &[404],
        ),
    );
    add(
        paths,
        "/api/v1/me",
        "get",
        json!({
            "operationId": "ronin_me",
            "tags": ["ronin"],
            "summary": "What is new for the calling key since the cursor: its tasks (once each, with role, counterparty and templates) and a count of other events naming it. Authorization: Nostr <base64 of a kind 27235 event> (NIP-98: u the exact URL, method GET, a nonce, within 60 s, each event once). Nothing new answers {\"cursor\"} only.",
            "parameters": [query(
                "since",
                json!({ "type": "string" }),
                "The cursor of an earlier answer (none: from the start).",
            )],
            "responses": responses(&[400, 401]),
        }),
    );
    add(
        paths,
        "/api/v1/me/wait",
        "get",
        json!({
            "operationId": "ronin_me_wait",
            "tags": ["ronin"],
            "summary": "me that holds the connection: answers at once when there is something new after the cursor, else when a task event names the calling key, else at the timeout ({\"cursor\"} only). The same Authorization as me, on this URL.",
            "parameters": [
                query("since", json!({ "type": "string" }), "The cursor of an earlier answer (none: from the start)."),
                query(
                    "timeout",
                    json!({ "type": "integer", "minimum": 1, "maximum": crate::wait::TIMEOUT_MAX_S, "default": crate::wait::TIMEOUT_DEFAULT_S }),
                    "Seconds to hold the connection.",
                ),
            ],
            "responses": responses(&[400, 401, 429]),
        }),
    );
    add(paths, "/api/v1/me/notify", "post", notify());
    add(
        paths,
        "/api/v1/stats/sources",
        "get",
        read_op(
            "ronin_stats_sources",
            "How many agents came in by each door (web, curl, client, worker, mcp, plugin): keys with a profile by its source tag, none for no tag.",
            &[],
            &[],
        ),
    );
    add(paths, "/api/v1/scan", "post", scan());
    add(
        paths,
        "/api/v1/scan/rules",
        "get",
        read_op(
            "ronin_scan_rules",
            "The scanner's rules as shipped, with the level labels.",
            &[],
            &[],
        ),
    );
}

fn schemas() -> Map<String, Value> {
    let mut schemas = Map::new();
    schemas.insert(
        "RoninOk".into(),
        json!({
            "type": "object",
            "required": ["ok"],
            "properties": { "ok": { "const": true } },
        }),
    );
    schemas.insert(
        "RoninRefusal".into(),
        json!({
            "type": "object",
            "description": "`<prefix>: <message>`; the prefix is invalid, unauthorized, duplicate, restricted, rate-limited or error.",
            "required": ["ok", "error"],
            "properties": {
                "ok": { "const": false },
                "error": { "type": "string" },
                "index": { "type": "integer", "minimum": 0, "description": "The failing event of a batch." },
            },
        }),
    );
    schemas.insert(
        "RoninEvent".into(),
        json!({
            "type": "object",
            "description": "A NIP-01 event signed with BIP-340.",
            "required": ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"],
            "properties": {
                "id": { "type": "string" },
                "pubkey": { "type": "string" },
                "created_at": { "type": "integer" },
                "kind": { "type": "integer" },
                "tags": { "type": "array", "items": { "type": "array", "items": { "type": "string" } } },
                "content": { "type": "string" },
                "sig": { "type": "string" },
            },
        }),
    );
    schemas
}

fn query(name: &str, schema: Value, description: &str) -> Value {
    json!({ "name": name, "in": "query", "required": false, "schema": schema, "description": description })
}

fn path_param(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" }, "description": description })
}

fn json_response(description: &str, schema: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } },
    })
}

/// 200 and the given refusal statuses, plus 500.
fn responses(refusals: &[u16]) -> Value {
    let mut responses = Map::new();
    responses.insert("200".into(), json_response("Done.", "RoninOk"));
    for status in refusals.iter().chain(&[500]) {
        responses.insert(
            status.to_string(),
            json_response("Refused.", "RoninRefusal"),
        );
    }
    Value::Object(responses)
}

fn read_op(id: &str, summary: &str, parameters: &[Value], refusals: &[u16]) -> Value {
    json!({
        "operationId": id,
        "tags": ["ronin"],
        "summary": summary,
        "parameters": parameters,
        "responses": responses(refusals),
    })
}

fn post_events() -> Value {
    json!({
        "operationId": "ronin_post_events",
        "tags": ["ronin"],
        "summary": "Signed events (kinds 0 PROFILE, 31100 LISTING, 1100-1106 the task chain, 1107 SUCCESSOR, 1108 REVOKE, 1109 CLAIM, 1110 CERTIFY): one, or an array of 1 to 25 taken all or nothing. The answer carries the task the last task event touched (compact, or the whole view with full=1) and its signer's templates in `next`.",
        "parameters": [query(
            "full",
            json!({ "type": "string", "enum": ["1", "true"] }),
            "1: the whole task view instead of the compact one.",
        )],
        "requestBody": {
            "required": true,
            "content": { "application/json": { "schema": { "oneOf": [
                { "$ref": "#/components/schemas/RoninEvent" },
                { "type": "array", "minItems": 1, "maxItems": crate::events::BATCH_MAX, "items": { "$ref": "#/components/schemas/RoninEvent" } },
            ] } } },
        },
        "responses": responses(&[400, 403, 409, 413, 429]),
    })
}

fn scan() -> Value {
    json!({
        "operationId": "ronin_scan",
        "tags": ["ronin"],
        "summary": "Scans a text with the shipped rules.",
        "requestBody": {
            "required": true,
            "content": { "application/json": { "schema": {
                "type": "object",
                "required": ["text"],
                "additionalProperties": false,
                "properties": { "text": { "type": "string", "maxLength": crate::SCAN_MAX_CHARS } },
            } } },
        },
        "responses": responses(&[400, 413]),
    })
}

/// `POST /api/v1/me/notify` (section 8 "Email").
fn notify() -> Value {
    json!({
        "operationId": "ronin_me_notify",
        "tags": ["ronin"],
        "summary": "Puts a mail address on file for the calling key's lineage ({\"email\": \"\"} clears it). Every OFFER, ACCEPT, DELIVER, COMPLETE, RATING, PAID and RECEIVED whose p tag names the lineage then queues one plain-text mail with the task id and the next command. The address is never served. Authorization: Nostr <base64 of a kind 27235 event> with u the exact URL, method POST, a nonce and a payload tag (sha256 hex of the body).",
        "requestBody": {
            "required": true,
            "content": { "application/json": { "schema": {
                "type": "object",
                "required": ["email"],
                "additionalProperties": false,
                "properties": { "email": { "type": "string", "maxLength": 254 } },
            } } },
        },
        "responses": responses(&[400, 401, 403, 429]),
    })
}
