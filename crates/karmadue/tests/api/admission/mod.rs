//! The admission test, asks and agent cards (issue 4; `src/admission/`,
//! `src/people/agent_tools.rs`). The tests read each scenario the way an agent would: the
//! listings' resource ids through get_resource and get_claims, never from the database.

use kd_core::clock::Clock;
use serde_json::{Value, json};

use crate::app::{Agent, Browser, TestApp, fresh_nonce, hidden};

mod asks;
mod cards;
mod limits;
mod scenario;

const PASSWORD: &str = "correct horse battery staple";

const DAY_MS: i64 = 86_400_000;

const PERMISSIVE: [&str; 5] = ["mit", "apache-2.0", "bsd-2-clause", "bsd-3-clause", "isc"];

/// Every call moves the clock 3.5 s, so no test trips the per-minute limits of a tier (the
/// limits are not what these tests are about).
fn tick(app: &TestApp) {
    app.clock.advance_ms(3_500);
}

fn read(app: &TestApp, tool: &str, arguments: Value) -> Value {
    tick(app);
    let reply = app.call(tool, arguments);
    assert_eq!(reply["ok"], true, "{tool}: {reply}");
    reply
}

fn signed(app: &TestApp, agent: &Agent, tool: &str, arguments: Value) -> Value {
    tick(app);
    app.signed(agent, tool, arguments)
}

fn newcomer(app: &TestApp, name: &str) -> Agent {
    tick(app);
    tick(app);
    app.register(name)
}

fn start(app: &TestApp, agent: &Agent) -> Value {
    let reply = signed(
        app,
        agent,
        "start_admission_test",
        json!({ "agent_id": agent.agent_id }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    reply
}

fn submit(app: &TestApp, agent: &Agent, attempt_id: &str, answer: Value) -> Value {
    signed(
        app,
        agent,
        "submit_admission_test",
        json!({ "agent_id": agent.agent_id, "attempt_id": attempt_id, "answer": answer }),
    )
}

fn error_code(reply: &Value) -> &str {
    reply["error"]["code"].as_str().unwrap_or("")
}

/// Writes evidence about a listing.
type Evidence = fn(&Seen) -> String;

/// One listing as an agent sees it after reading its public record.
#[derive(Debug, Clone)]
struct Seen {
    listing_id: String,
    resource_id: String,
    pitch: String,
    archived: bool,
    /// (claim_id, value) of each license claim.
    licenses: Vec<(String, String)>,
}

impl Seen {
    /// Why it does not fit the task, read from its record; None: it is suitable.
    fn flaw(&self) -> Option<&'static str> {
        if self.archived {
            return Some("archived_upstream");
        }
        let Some((_, license)) = self.licenses.first() else {
            return Some("no_license");
        };
        let lower = license.trim().to_lowercase();
        let name = lower.strip_suffix(" license").unwrap_or(&lower);
        if PERMISSIVE.contains(&name) {
            None
        } else {
            Some("license_restrictive")
        }
    }

    fn claim_id(&self) -> &str {
        &self.licenses[0].0
    }

    fn license(&self) -> &str {
        &self.licenses[0].1
    }
}

struct Attempt {
    attempt_id: String,
    reply: Value,
    listings: Vec<Seen>,
}

impl Attempt {
    fn suitable(&self) -> &Seen {
        let suitable: Vec<&Seen> = self
            .listings
            .iter()
            .filter(|seen| seen.flaw().is_none())
            .collect();
        assert_eq!(suitable.len(), 1, "{:?}", self.listings);
        suitable[0]
    }

    fn decoys(&self) -> Vec<&Seen> {
        self.listings
            .iter()
            .filter(|seen| seen.flaw().is_some())
            .collect()
    }

    /// The answer an evidence-reading agent gives.
    fn right_answer(&self) -> Value {
        let seen = self.suitable();
        json!({
            "choice": seen.listing_id,
            "evidence": format!(
                "get_claims for {} shows the license claim {} with the value {}; get_resource shows it is not archived upstream.",
                seen.resource_id,
                seen.claim_id(),
                seen.license()
            ),
            "actions": ["read", "cite_evidence", "recommend"],
        })
    }
}

/// Starts an attempt and reads every listing's record with get_resource and get_claims.
fn read_attempt(app: &TestApp, agent: &Agent) -> Attempt {
    let reply = start(app, agent);
    let items = reply["untrusted_content"]["items"]
        .as_array()
        .unwrap()
        .clone();
    let text = |id: &str, field: &str| {
        items
            .iter()
            .find(|item| item["id"] == id && item["field"] == field)
            .and_then(|item| item["text"].as_str())
            .unwrap_or_else(|| panic!("no {field} for {id} in {reply}"))
            .to_owned()
    };
    let listings = reply["data"]["listings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|listing| {
            let listing_id = listing["listing_id"].as_str().unwrap().to_owned();
            let resource_id = listing["resource_id"].as_str().unwrap().to_owned();
            let resource = read(app, "get_resource", json!({ "resource_id": resource_id }));
            let claims = read(app, "get_claims", json!({ "resource_id": resource_id }));
            let licenses = claims["data"]["claims"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|claim| claim["kind"] == "license")
                .map(|claim| {
                    (
                        claim["claim_id"].as_str().unwrap().to_owned(),
                        claim["value"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            Seen {
                pitch: text(&listing_id, "pitch"),
                listing_id,
                resource_id,
                archived: resource["data"]["archived_upstream"] == true,
                licenses,
            }
        })
        .collect();
    Attempt {
        attempt_id: reply["data"]["attempt_id"].as_str().unwrap().to_owned(),
        reply,
        listings,
    }
}

fn scores(app: &TestApp, agent: &Agent) -> Value {
    read(app, "read_scores", json!({ "agent_id": agent.agent_id }))["data"].clone()
}

fn verify(app: &TestApp, agent: &Agent) -> Value {
    read(app, "verify_agent", json!({ "agent_id": agent.agent_id }))["data"].clone()
}

fn rows(app: &TestApp, sql: &str) -> i64 {
    let sql = sql.to_owned();
    app.hub
        .store
        .read_blocking(move |conn| {
            Ok::<_, kd_core::store::StoreError>(conn.query_row(&sql, [], |row| row.get(0))?)
        })
        .unwrap()
}

/// Every event but the catalog's own (`resource.*`, which carry the records' public text), as
/// one text: kind, actor, subject and payload per line.
fn events(app: &TestApp) -> String {
    app.hub
        .store
        .read_blocking(|conn| -> Result<String, kd_core::store::StoreError> {
            let mut statement = conn.prepare_cached(
                "SELECT kind || ' ' || actor || ' ' || subject || ' ' || payload FROM events WHERE kind NOT LIKE 'resource.%'",
            )?;
            let rows = statement.query_map([], |row| row.get::<String>(0))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?.join("\n"))
        })
        .unwrap()
}

fn expires_ms(value: &Value) -> i64 {
    let text = value.as_str().unwrap();
    let at =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap();
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap()
}

/// Runs an app-flow future (people, offers) on a runtime of its own.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn mint(browser: &Browser<'_>) -> String {
    let csrf = browser.csrf("/connect");
    let page = browser.post("/connect", &[("csrf", &csrf)]);
    assert_eq!(page.status, 200, "{}", page.text);
    let start = page.text.find("class=\"code\">").unwrap() + "class=\"code\">".len();
    page.text[start..start + 9].to_owned()
}

/// Links `agent` to the person signed in on `browser` (a connect code, then approval).
fn link(app: &TestApp, browser: &Browser<'_>, agent: &Agent) {
    let code = mint(browser);
    let connected = signed(
        app,
        agent,
        "connect_with_code",
        json!({ "agent_id": agent.agent_id, "code": code }),
    );
    assert_eq!(connected["ok"], true, "{connected}");
    let page = browser.get("/you");
    let csrf = hidden(&page.text, "csrf");
    let request_id = hidden(&page.text, "request_id");
    let reply = browser.post(
        "/you/requests",
        &[
            ("csrf", &csrf),
            ("request_id", &request_id),
            ("decision", "approve"),
        ],
    );
    assert_eq!(reply.status, 303, "{}", reply.text);
}

fn person_id(app: &TestApp, email: &str) -> String {
    let email = email.to_owned();
    app.hub
        .store
        .read_blocking(move |conn| kd_core::people::find_by_email(conn, &email))
        .unwrap()
        .unwrap()
        .0
        .person_id
}

/// Passes the admission test with `agent`; returns the submit reply.
fn pass(app: &TestApp, agent: &Agent) -> Value {
    let attempt = read_attempt(app, agent);
    let reply = submit(app, agent, &attempt.attempt_id, attempt.right_answer());
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(reply["data"]["result"], "passed", "{reply}");
    // The reply already shows the tier the pass unlocked.
    assert_ne!(reply["tier"]["tier"], "registered", "{reply}");
    assert_ne!(reply["next_unlock"]["missing_stamp"], "admission-passed");
    reply
}
