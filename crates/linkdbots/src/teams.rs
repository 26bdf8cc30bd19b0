//! Orgs and teams (spec "What is published": "an agent's … owner and teams"; "Reading": `GET
//! /teams/{id}`, `GET /orgs/{handle}`), decisions 324 and 334. A signed-in person makes an org
//! (a public handle and a name), makes teams (in one of their orgs, or in none), puts agents
//! they own in them and takes them out ([`remove_member`]); the hub serves these behind its
//! session at `/linkdbots/dashboard/teams` (and as JSON at `/you/linkdbots/teams`).
//! Anyone reads a team by its `tm_…` id and an org by its handle. What is published of the
//! person is the display name they show on the hub, as on a profile (decision 300).

use kd_core::db::Connection;
use kd_core::random::Random;
use kd_core::store::Store;
use serde_json::{Value, json};

use crate::ApiError;
use crate::owner::owned;
use crate::pairing::check_name;
use crate::queue::fresh_id;
use crate::store::AgentRow;
use crate::teams_store::{self, OrgRow, TeamRow};

/// The most orgs a person makes.
pub const ORGS_MAX: usize = 10;
/// The most teams a person makes.
pub const TEAMS_MAX: usize = 50;
/// The most agents in a team.
pub const MEMBERS_MAX: usize = 50;

/// An org handle as it will be published, or why it cannot be one: 2–30 characters of
/// lowercase ASCII letters, digits and `-`, starting and ending with a letter or digit.
///
/// # Errors
/// [`ApiError::invalid`].
pub fn check_handle(handle: &str) -> Result<String, ApiError> {
    let ok = (2..=30).contains(&handle.len())
        && handle
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !handle.starts_with('-')
        && !handle.ends_with('-');
    if ok {
        Ok(handle.to_owned())
    } else {
        Err(ApiError::invalid(
            "an org handle is 2 to 30 lowercase letters, digits and `-`, not starting or \
             ending with `-`",
        ))
    }
}

fn at(ms: i64) -> String {
    kd_core::clock::rfc3339_ms(ms)
}

fn owner_name(conn: &Connection, owner_id: &str) -> Result<Value, ApiError> {
    let owner = kd_core::people::find_person(conn, owner_id)?;
    Ok(json!({ "name": owner.map(|person| person.display_name) }))
}

fn member(agent: &AgentRow) -> Value {
    json!({ "id": agent.id, "handle": agent.handle, "name": agent.name, "status": agent.status })
}

fn org_brief(org: Option<&OrgRow>) -> Value {
    org.map_or(
        Value::Null,
        |org| json!({ "handle": org.handle, "name": org.name }),
    )
}

/// A team's public form: `{id, name, org {handle, name} | null, members [{id, handle, name,
/// status}], createdAt}`.
fn team_json(conn: &Connection, team: &TeamRow) -> Result<Value, ApiError> {
    let org = match &team.org_id {
        Some(org_id) => teams_store::org_by_id(conn, org_id)?,
        None => None,
    };
    let members: Vec<Value> = teams_store::members(conn, &team.id)?
        .iter()
        .map(member)
        .collect();
    Ok(json!({
        "id": team.id,
        "name": team.name,
        "org": org_brief(org.as_ref()),
        "members": members,
        "createdAt": at(team.created_ms),
    }))
}

/// `GET /teams/{id}`: a team's public form and `owner {name}`.
///
/// # Errors
/// [`ApiError::not_found`] for an unknown team.
pub fn team(conn: &Connection, team_id: &str) -> Result<Value, ApiError> {
    let Some(team) = teams_store::team(conn, team_id)? else {
        return Err(ApiError::not_found(format!("no team `{team_id}`")));
    };
    let mut answer = team_json(conn, &team)?;
    answer["owner"] = owner_name(conn, &team.owner_id)?;
    Ok(answer)
}

/// `GET /orgs/{handle}`: `{handle, name, owner {name}, teams [team], createdAt}`.
///
/// # Errors
/// [`ApiError::not_found`] for an unknown handle.
pub fn org(conn: &Connection, handle: &str) -> Result<Value, ApiError> {
    let Some(org) = teams_store::org_by_handle(conn, handle)? else {
        return Err(ApiError::not_found(format!("no org `{handle}`")));
    };
    let mut teams = Vec::new();
    for team in teams_store::teams_in(conn, &org.id)? {
        teams.push(team_json(conn, &team)?);
    }
    Ok(json!({
        "handle": org.handle,
        "name": org.name,
        "owner": owner_name(conn, &org.owner_id)?,
        "teams": teams,
        "createdAt": at(org.created_ms),
    }))
}

/// The teams agent `agent_id` is in, for its profile: `[{id, name, org}]`.
///
/// # Errors
/// The store's error.
pub fn of_agent(conn: &Connection, agent_id: &str) -> Result<Value, ApiError> {
    let mut teams = Vec::new();
    for team in teams_store::teams_with(conn, agent_id)? {
        let org = match &team.org_id {
            Some(org_id) => teams_store::org_by_id(conn, org_id)?,
            None => None,
        };
        teams.push(json!({ "id": team.id, "name": team.name, "org": org_brief(org.as_ref()) }));
    }
    Ok(Value::Array(teams))
}

/// What `person_id` made: `{orgs [{handle, name, createdAt}], teams [team]}`.
///
/// # Errors
/// The store's error.
pub async fn mine(store: &Store, person_id: &str) -> Result<Value, ApiError> {
    let person_id = person_id.to_owned();
    store
        .read(move |conn| {
            let orgs: Vec<Value> = teams_store::orgs_of(conn, &person_id)?
                .iter()
                .map(|org| json!({ "handle": org.handle, "name": org.name, "createdAt": at(org.created_ms) }))
                .collect();
            let mut teams = Vec::new();
            for team in teams_store::teams_of(conn, &person_id)? {
                teams.push(team_json(conn, &team)?);
            }
            Ok(json!({ "orgs": orgs, "teams": teams }))
        })
        .await
}

/// `person_id` makes an org with `handle` and display `name`: `{handle, name, createdAt}`.
///
/// # Errors
/// [`ApiError::invalid`] for a bad handle or name; [`ApiError::budget`] (429) past
/// [`ORGS_MAX`]; [`ApiError::conflict`] (409) for a handle taken.
pub async fn create_org(
    store: &Store,
    random: &dyn Random,
    person_id: &str,
    handle: &str,
    name: &str,
) -> Result<Value, ApiError> {
    let org = OrgRow {
        id: fresh_id(random, "org_"),
        handle: check_handle(handle.trim())?,
        name: check_name(name)?,
        owner_id: person_id.to_owned(),
        created_ms: store.clock().now_ms(),
    };
    store
        .write(move |txn| {
            let conn = txn.conn();
            if teams_store::orgs_of(conn, &org.owner_id)?.len() >= ORGS_MAX {
                return Err(ApiError::budget(format!(
                    "a person makes at most {ORGS_MAX} orgs"
                )));
            }
            if !teams_store::insert_org(conn, &org)? {
                return Err(ApiError::conflict(format!(
                    "the org handle `{}` is taken",
                    org.handle
                )));
            }
            Ok(json!({ "handle": org.handle, "name": org.name, "createdAt": at(org.created_ms) }))
        })
        .await?
}

/// `person_id` makes a team named `name`, in their org `org_handle` or in none: the team's
/// public form.
///
/// # Errors
/// [`ApiError::invalid`] for a bad name; [`ApiError::not_found`] for an org not theirs;
/// [`ApiError::budget`] (429) past [`TEAMS_MAX`].
pub async fn create_team(
    store: &Store,
    random: &dyn Random,
    person_id: &str,
    name: &str,
    org_handle: Option<&str>,
) -> Result<Value, ApiError> {
    let name = check_name(name)?;
    let id = fresh_id(random, "tm_");
    let (person_id, org_handle) = (person_id.to_owned(), org_handle.map(str::to_owned));
    let now_ms = store.clock().now_ms();
    store
        .write(move |txn| {
            let conn = txn.conn();
            let org_id = match org_handle {
                None => None,
                Some(handle) => match teams_store::org_by_handle(conn, &handle)? {
                    Some(org) if org.owner_id == person_id => Some(org.id),
                    _ => return Err(ApiError::not_found(format!("no org of yours `{handle}`"))),
                },
            };
            if teams_store::teams_of(conn, &person_id)?.len() >= TEAMS_MAX {
                return Err(ApiError::budget(format!(
                    "a person makes at most {TEAMS_MAX} teams"
                )));
            }
            let team = TeamRow {
                id,
                org_id,
                name,
                owner_id: person_id,
                created_ms: now_ms,
            };
            teams_store::insert_team(conn, &team)?;
            team_json(conn, &team)
        })
        .await?
}

/// `person_id` puts their agent `agent_id` in their team `team_id`: the team's public form.
///
/// # Errors
/// [`ApiError::not_found`] for a team or an agent not theirs; [`ApiError::conflict`] for a
/// revoked agent or one already in the team; [`ApiError::budget`] (429) past
/// [`MEMBERS_MAX`].
pub async fn add_member(
    store: &Store,
    person_id: &str,
    team_id: &str,
    agent_id: &str,
) -> Result<Value, ApiError> {
    let (person_id, team_id, agent_id) = (
        person_id.to_owned(),
        team_id.to_owned(),
        agent_id.to_owned(),
    );
    let now_ms = store.clock().now_ms();
    store
        .write(move |txn| {
            let conn = txn.conn();
            let team = match teams_store::team(conn, &team_id)? {
                Some(team) if team.owner_id == person_id => team,
                _ => return Err(ApiError::not_found(format!("no team of yours `{team_id}`"))),
            };
            let agent = owned(conn, &person_id, &agent_id)?;
            if agent.status == "revoked" {
                return Err(ApiError::conflict(format!(
                    "`{}` was revoked",
                    agent.handle
                )));
            }
            if teams_store::members(conn, &team.id)?.len() >= MEMBERS_MAX {
                return Err(ApiError::budget(format!(
                    "a team has at most {MEMBERS_MAX} agents"
                )));
            }
            if !teams_store::add_member(conn, &team.id, &agent.id, now_ms)? {
                return Err(ApiError::conflict(format!(
                    "`{}` is in this team already",
                    agent.handle
                )));
            }
            team_json(conn, &team)
        })
        .await?
}

/// `person_id` takes agent `agent_id` out of their team `team_id`: the team's public form.
/// The agent stays theirs; a revoked agent may be taken out too.
///
/// # Errors
/// [`ApiError::not_found`] for a team not theirs, or an agent that is not in that team.
pub async fn remove_member(
    store: &Store,
    person_id: &str,
    team_id: &str,
    agent_id: &str,
) -> Result<Value, ApiError> {
    let (person_id, team_id, agent_id) = (
        person_id.to_owned(),
        team_id.to_owned(),
        agent_id.to_owned(),
    );
    store
        .write(move |txn| {
            let conn = txn.conn();
            let team = match teams_store::team(conn, &team_id)? {
                Some(team) if team.owner_id == person_id => team,
                _ => return Err(ApiError::not_found(format!("no team of yours `{team_id}`"))),
            };
            if !teams_store::remove_member(conn, &team.id, &agent_id)? {
                return Err(ApiError::not_found(format!(
                    "no agent `{agent_id}` in this team"
                )));
            }
            team_json(conn, &team)
        })
        .await?
}
