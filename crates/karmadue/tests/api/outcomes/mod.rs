//! Outcome reports: `report_outcome`, its refusals and limits, the anti-gaming weights, and the
//! `reliability_reports` summary.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::app::{Agent, TestApp};
use crate::preflight::{db, published_key, receipt_for, signed_read, verifies};

const DAY_MS: i64 = 24 * 3600 * 1000;
const NAMES: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];

fn report(app: &TestApp, agent: &Agent, receipt_id: &str, result: &str) -> Value {
    app.signed(
        agent,
        "report_outcome",
        json!({ "agent_id": agent.agent_id, "receipt_id": receipt_id, "result": result }),
    )
}

pub(crate) fn check_and_report(app: &TestApp, agent: &Agent, target: &str, result: &str) -> Value {
    let receipt_id = receipt_for(app, agent, target);
    let reply = report(app, agent, &receipt_id, result);
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

pub(crate) fn set_owner(app: &TestApp, agent: &Agent, owner: &str) {
    app.writes_behind_the_log("owners set directly, without the link flow");
    db(app)
        .execute(
            "UPDATE agents SET owner_id = ?2 WHERE agent_id = ?1",
            [&agent.agent_id, owner],
        )
        .unwrap();
}

/// Registers `count` agents named `<word> <role>`, each owned by `<role>-<word>` when `owned`.
fn agents(app: &TestApp, role: &str, count: usize, owned: bool) -> Vec<Agent> {
    NAMES[..count]
        .iter()
        .map(|word| {
            let agent = app.register(&format!("{word} {role}"));
            if owned {
                set_owner(app, &agent, &format!("{role}-{word}"));
            }
            agent
        })
        .collect()
}

/// A resource listed by a dedicated publisher agent (so reporters are not its publisher).
pub(crate) fn listed(app: &TestApp, publisher: &Agent, name: &str) -> String {
    let reply = app.signed(
        publisher,
        "register_resource",
        json!({ "agent_id": publisher.agent_id, "locator": format!("https://github.com/outcome-tests/{name}"), "title": name }),
    );
    assert_eq!(reply["data"]["registered"], true, "{reply}");
    reply["data"]["resource_id"].as_str().unwrap().to_owned()
}

fn flags(data: &Value) -> Vec<String> {
    data["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag.as_str().unwrap().to_owned())
        .collect()
}

fn code(reply: &Value) -> &str {
    assert_eq!(reply["ok"], false, "{reply}");
    reply["error"]["code"].as_str().unwrap()
}

pub(crate) fn reliability(app: &TestApp, resource_id: &str) -> Value {
    let reply = app.call("check_before_acting", json!({ "target": resource_id }));
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"]
        .get("reliability_reports")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Five owners whose agents are over 7 days old report `worked` on each of `resources`.
fn consensus(app: &TestApp, resources: &[String]) -> Vec<Agent> {
    let crowd = agents(app, "crowd", 5, true);
    app.clock.advance_ms(8 * DAY_MS);
    for resource in resources {
        for agent in &crowd {
            assert_eq!(
                check_and_report(app, agent, resource, "worked")["weight"],
                1.0
            );
        }
    }
    crowd
}

mod limits;
mod reports;
mod weights;
