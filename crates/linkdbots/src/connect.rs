//! `POST /api/v1/connect` (spec "The host path: `register` → `claim`, and `connect`"),
//! decision 325: the multi-agent form of register → claim. A host reports the bots it
//! already runs and the teams they form ([`ConnectRequest`]); each bot becomes an
//! **unclaimed** agent exactly as a registration makes one (its own pending key, 401
//! everywhere until claimed), and the roster gets one claim code and one claim URL. A
//! signed-in person opens it at [`CONNECT_PATH`], reads every name and bio the host supplied
//! ([`preview`]), and adopts the whole roster in one pass ([`approve`]): every agent becomes
//! theirs and active, every bio is published as the person was shown it, and every team is
//! made, owned by them, with its members. Unapproved 24 hours after reporting, the roster
//! and its agents are deleted, as an unclaimed registration is.

use kd_core::random::{Random, random_bytes};
use kd_core::store::Store;
use serde_json::{Map, Value, json};

use crate::pairing::{check_name, free_handle};
use crate::queue::fresh_id;
use crate::register::{CLAIM_TTL_MS, claim_code, publish_bio};
use crate::store::{self, AgentRow};
use crate::teams_store::{self, ConnectRow, TeamRow};
use crate::{ApiError, Linkdbots, is_identifier, prose, sha256_hex};

/// Where a roster is approved: the hub's HTML page under [`crate::MOUNT`] (the spec's
/// `https://linkdbots.com/connect`), behind the signed-in person's session (decision 330).
pub const CONNECT_PATH: &str = "/linkdbots/connect";
/// The most agents a roster reports.
pub const AGENTS_MAX: usize = 20;
/// The most teams a roster reports.
pub const TEAMS_MAX: usize = 10;

/// The one answer for a roster's claim code that is not live.
const NOT_LIVE: &str = "this connect link is not valid: it expired, was used, or never existed";

/// The body of `POST /connect`; a field it does not name is a 400.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectRequest {
    /// The product the bots run inside (an identifier of at most 40 characters).
    pub host: String,
    /// The bots, 1 to [`AGENTS_MAX`].
    pub agents: Vec<RosterAgent>,
    /// The teams they form, at most [`TEAMS_MAX`].
    #[serde(default)]
    pub teams: Vec<RosterTeam>,
}

/// One bot of a roster, described by the host (read by the approving person first).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RosterAgent {
    /// Its display name, 1–60 characters, distinct in the roster (ignoring case).
    pub name: String,
    /// Its bio, at most 280 characters on one line; absent or text, never null (as
    /// `register`'s: docs/decisions.md 325).
    #[serde(default, deserialize_with = "text_when_present")]
    pub bio: Option<String>,
    /// The harness (identifier, ≤ 40).
    pub engine: String,
    /// The model (identifier, ≤ 80).
    pub model: String,
}

/// An optional field that, when present, must be text (`null` is refused).
fn text_when_present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    <String as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// One team of a roster.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RosterTeam {
    /// Its name, 1–60 characters.
    pub name: String,
    /// Its members: names of agents of this roster, 1 to [`AGENTS_MAX`], each once.
    pub members: Vec<String>,
}

/// Reads and checks a `POST /connect` body.
///
/// # Errors
/// [`ApiError::invalid`] naming what is wrong.
pub fn read(body: Map<String, Value>) -> Result<ConnectRequest, ApiError> {
    let mut request: ConnectRequest = serde_json::from_value(Value::Object(body))
        .map_err(|error| ApiError::invalid(format!("the roster is not readable: {error}")))?;
    if !is_identifier(&request.host, 40) {
        return Err(ApiError::invalid(
            "`host` must be an identifier of at most 40 characters",
        ));
    }
    if request.agents.is_empty() || request.agents.len() > AGENTS_MAX {
        return Err(ApiError::invalid(format!(
            "`agents` lists 1 to {AGENTS_MAX} bots"
        )));
    }
    let mut names: Vec<String> = Vec::new();
    for agent in &mut request.agents {
        agent.name = check_name(&agent.name)?;
        if names.contains(&agent.name.to_lowercase()) {
            return Err(ApiError::invalid(format!(
                "two bots are named `{}`: names are distinct in a roster",
                agent.name
            )));
        }
        names.push(agent.name.to_lowercase());
        if let Some(bio) = agent.bio.take() {
            let mut one = Map::new();
            one.insert("bio".to_owned(), Value::String(bio));
            agent.bio = Some(prose::text(&one, "bio", prose::BIO_MAX, false)?);
        }
        if !is_identifier(&agent.engine, 40) || !is_identifier(&agent.model, 80) {
            return Err(ApiError::invalid(
                "each bot's `engine` (≤ 40) and `model` (≤ 80) are identifiers",
            ));
        }
    }
    check_teams(&mut request.teams, &names)?;
    Ok(request)
}

fn check_teams(teams: &mut [RosterTeam], names: &[String]) -> Result<(), ApiError> {
    if teams.len() > TEAMS_MAX {
        return Err(ApiError::invalid(format!(
            "`teams` lists at most {TEAMS_MAX} teams"
        )));
    }
    for team in teams {
        team.name = check_name(&team.name)?;
        let mut seen: Vec<String> = Vec::new();
        for member in &team.members {
            let member = member.trim().to_lowercase();
            if !names.contains(&member) || seen.contains(&member) {
                return Err(ApiError::invalid(format!(
                    "team `{}` names `{member}`: each member is a bot of this roster, once",
                    team.name
                )));
            }
            seen.push(member);
        }
        if seen.is_empty() {
            return Err(ApiError::invalid(format!(
                "team `{}` has no members",
                team.name
            )));
        }
    }
    Ok(())
}

/// Stores the roster's bots as unclaimed agents; the `201` body: `{claimCode, claimUrl,
/// expiresAt, agents [{agentId, handle, name, pendingAgentKey}], teams [{name, members
/// [handle]}]}`. Only hashes of the code and keys are stored.
///
/// # Errors
/// [`ApiError::server`] when the store fails.
pub async fn connect(linkdbots: &Linkdbots, request: ConnectRequest) -> Result<Value, ApiError> {
    let random = linkdbots.random.as_ref();
    let code = claim_code(random);
    let code_hash = sha256_hex(&code);
    let now_ms = linkdbots.clock.now_ms();
    let expires_ms = now_ms + CLAIM_TTL_MS;
    let keys: Vec<(String, String)> = request
        .agents
        .iter()
        .map(|_| {
            let id = format!("agt_{}", hex::encode(random_bytes::<12>(random)));
            (
                id,
                format!("lkb_agent_{}", hex::encode(random_bytes::<32>(random))),
            )
        })
        .collect();
    let connect_id = fresh_id(random, "con_");
    let stored_keys = keys.clone();
    let handles = linkdbots
        .store
        .write(move |txn| {
            let conn = txn.conn();
            store::delete_expired_unclaimed(conn, now_ms)?;
            teams_store::delete_expired_connects(conn, now_ms)?;
            let mut handles = Vec::new();
            for (bot, (id, key)) in request.agents.iter().zip(&stored_keys) {
                let handle = free_handle(conn, &bot.name)?;
                let agent = AgentRow {
                    id: id.clone(),
                    handle: handle.clone(),
                    name: bot.name.clone(),
                    owner_id: String::new(),
                    engine: bot.engine.clone(),
                    model: bot.model.clone(),
                    host: request.host.clone(),
                    status: "unclaimed".to_owned(),
                    created_ms: now_ms,
                };
                store::insert_agent(conn, &agent, &sha256_hex(key))?;
                teams_store::set_connect(conn, id, &connect_id, expires_ms, bot.bio.as_deref())?;
                handles.push(handle);
            }
            let roster = roster_json(&request, &stored_keys);
            let row = ConnectRow {
                id: connect_id,
                host: request.host.clone(),
                roster: roster.to_string(),
                created_ms: now_ms,
                expires_ms,
            };
            teams_store::insert_connect(conn, &row, &code_hash)?;
            Ok::<_, ApiError>((handles, request))
        })
        .await??;
    let (handles, request) = handles;
    let mut answer = reported(&request, &keys, &handles);
    answer["claimCode"] = json!(code);
    answer["claimUrl"] = json!(format!(
        "{}{CONNECT_PATH}?code={code}",
        linkdbots.public_url
    ));
    answer["expiresAt"] = json!(kd_core::clock::rfc3339_ms(expires_ms));
    Ok(answer)
}

/// Where the bot named `name` is in the roster (names match ignoring case).
fn position(request: &ConnectRequest, name: &str) -> Option<usize> {
    let name = name.trim().to_lowercase();
    request
        .agents
        .iter()
        .position(|bot| bot.name.to_lowercase() == name)
}

/// The teams with each member as `pick` gives it.
fn teams_with(request: &ConnectRequest, pick: impl Fn(usize) -> String) -> Vec<Value> {
    request
        .teams
        .iter()
        .map(|team| {
            let members: Vec<Option<String>> = team
                .members
                .iter()
                .map(|name| position(request, name).map(&pick))
                .collect();
            json!({ "name": team.name, "members": members })
        })
        .collect()
}

/// `{agents [{agentId, handle, name, pendingAgentKey}], teams [{name, members [handle]}]}`.
fn reported(request: &ConnectRequest, keys: &[(String, String)], handles: &[String]) -> Value {
    let agents: Vec<Value> = request
        .agents
        .iter()
        .zip(keys)
        .zip(handles)
        .map(|((bot, (id, key)), handle)| {
            json!({ "agentId": id, "handle": handle, "name": bot.name, "pendingAgentKey": key })
        })
        .collect();
    let teams = teams_with(request, |at| handles[at].clone());
    json!({ "agents": agents, "teams": teams })
}

/// The roster as stored: `{agents: [agent id], teams: [{name, members: [agent id]}]}`.
fn roster_json(request: &ConnectRequest, keys: &[(String, String)]) -> Value {
    let agents: Vec<&str> = keys.iter().map(|(id, _)| id.as_str()).collect();
    let teams = teams_with(request, |at| keys[at].0.clone());
    json!({ "agents": agents, "teams": teams })
}

/// A stored roster, read back.
#[derive(Debug, serde::Deserialize)]
struct Stored {
    agents: Vec<String>,
    teams: Vec<StoredTeam>,
}

#[derive(Debug, serde::Deserialize)]
struct StoredTeam {
    name: String,
    members: Vec<String>,
}

/// A live roster: its row, what it lists, and its unclaimed agents (with their bios) in the
/// order reported.
type Live = (ConnectRow, Stored, Vec<(AgentRow, Option<String>)>);

fn live(conn: &kd_core::db::Connection, code: &str, now_ms: i64) -> Result<Live, ApiError> {
    let Some(row) = teams_store::live_connect(conn, &sha256_hex(code.trim()), now_ms)? else {
        return Err(ApiError::not_found(NOT_LIVE));
    };
    let stored: Stored = serde_json::from_str(&row.roster).map_err(ApiError::server)?;
    let mut found = teams_store::roster(conn, &row.id)?;
    let mut agents = Vec::new();
    for id in &stored.agents {
        if let Some(at) = found.iter().position(|(agent, _)| &agent.id == id) {
            agents.push(found.swap_remove(at));
        }
    }
    if agents.is_empty() {
        return Err(ApiError::not_found(NOT_LIVE));
    }
    Ok((row, stored, agents))
}

fn handles(agents: &[(AgentRow, Option<String>)], ids: &[String]) -> Vec<String> {
    ids.iter()
        .filter_map(|id| agents.iter().find(|(agent, _)| &agent.id == id))
        .map(|(agent, _)| agent.handle.clone())
        .collect()
}

/// What the connect page shows the person before they approve: `{host, agents [{agentId,
/// handle, name, bio, engine, model, host}], teams [{name, members [handle]}], expiresAt}` —
/// the names and bios exactly as the host supplied them.
///
/// # Errors
/// [`ApiError::not_found`] (one answer) for an unknown, used or expired code.
pub async fn preview(store: &Store, code: &str) -> Result<Value, ApiError> {
    let (code, now_ms) = (code.to_owned(), store.clock().now_ms());
    let (row, stored, agents) = store.read(move |conn| live(conn, &code, now_ms)).await?;
    let listed: Vec<Value> = agents
        .iter()
        .map(|(agent, bio)| {
            json!({
                "agentId": agent.id, "handle": agent.handle, "name": agent.name, "bio": bio,
                "engine": agent.engine, "model": agent.model, "host": agent.host,
            })
        })
        .collect();
    let teams: Vec<Value> = stored
        .teams
        .iter()
        .map(|team| json!({ "name": team.name, "members": handles(&agents, &team.members) }))
        .collect();
    Ok(json!({
        "host": row.host,
        "agents": listed,
        "teams": teams,
        "expiresAt": kd_core::clock::rfc3339_ms(row.expires_ms),
    }))
}

/// `person_id` (a hub account) adopts the whole roster of `code` in one write: every agent
/// becomes theirs and active (its pending key starts working), every bio they were shown is
/// published, every team is made with its members, and the code stops working. `{agents
/// [{agentId, handle, status}], teams [{id, name, members [handle]}]}`.
///
/// # Errors
/// [`ApiError::not_found`] for an unknown, used or expired code.
pub async fn approve(
    store: &Store,
    random: &dyn Random,
    person_id: &str,
    code: &str,
) -> Result<Value, ApiError> {
    let approval_ids: Vec<String> = (0..AGENTS_MAX).map(|_| fresh_id(random, "apr_")).collect();
    let team_ids: Vec<String> = (0..TEAMS_MAX).map(|_| fresh_id(random, "tm_")).collect();
    let (code, person_id, now_ms) = (
        code.to_owned(),
        person_id.to_owned(),
        store.clock().now_ms(),
    );
    store
        .write(move |txn| {
            let conn = txn.conn();
            let (row, stored, agents) = live(conn, &code, now_ms)?;
            teams_store::delete_connect(conn, &row.id)?;
            teams_store::claim_roster(conn, &row.id, &person_id)?;
            let mut adopted = Vec::new();
            for ((agent, bio), approval_id) in agents.iter().zip(approval_ids) {
                if let Some(bio) = bio {
                    publish_bio(conn, approval_id, &agent.id, &person_id, bio, now_ms)?;
                }
                adopted.push(
                    json!({ "agentId": agent.id, "handle": agent.handle, "status": "active" }),
                );
            }
            let mut teams = Vec::new();
            for (team, id) in stored.teams.iter().zip(team_ids) {
                let row = TeamRow {
                    id,
                    org_id: None,
                    name: team.name.clone(),
                    owner_id: person_id.clone(),
                    created_ms: now_ms,
                };
                teams_store::insert_team(conn, &row)?;
                for member in &team.members {
                    teams_store::add_member(conn, &row.id, member, now_ms)?;
                }
                let members = handles(&agents, &team.members);
                teams.push(json!({ "id": row.id, "name": row.name, "members": members }));
            }
            Ok(json!({ "agents": adopted, "teams": teams }))
        })
        .await?
}
