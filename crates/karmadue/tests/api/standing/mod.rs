//! Tiers, per-minute limits, stamps and the daily action quota (issue 4; permissions document
//! "What your passport unlocks"; spec "Connector limits").

use kd_core::tiers::AccessTiers;
use serde_json::{Value, json};

use crate::app::{Agent, TestApp, fresh_nonce};
use crate::people::{connect, decide, mint};

pub(crate) const PASSWORD: &str = "correct horse battery staple";

/// A person and an agent linked by a connect code, approved one second after the agent
/// connected (so the connect itself is before the grant).
fn linked<'a>(app: &'a TestApp, email: &str, name: &str) -> (crate::app::Browser<'a>, Agent) {
    let browser = app.browser();
    browser.sign_up(email, "Quinn Quota", PASSWORD);
    let agent = app.register(name);
    let code = mint(&browser);
    assert_eq!(connect(app, &agent, &code)["ok"], true);
    app.clock.advance_ms(1_000);
    decide(&browser, "approve");
    (browser, agent)
}

/// A hub with the permissions document's own limits.
fn strict() -> TestApp {
    TestApp::start_with(|config| config.access_tiers = AccessTiers::default())
}

/// A signed read: the kd-mcp-v1 headers plus x-karmadue-agent.
fn signed_read(app: &TestApp, agent: &Agent, tool: &str, arguments: &Value) -> Value {
    let text = arguments.to_string();
    let mut headers = app.sign(&agent.key, tool, &agent.agent_id, &text, &fresh_nonce());
    headers.push(("x-karmadue-agent".into(), agent.agent_id.clone()));
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    app.call_text(tool, &text, &borrowed).0
}

fn rename(app: &TestApp, agent: &Agent, name: &str) -> Value {
    app.signed(
        agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": name }),
    )
}

/// Issues an admission-passed stamp for `days` days through the stamps API (the admission test
/// has its own tests; this one is about the gate).
fn stamp_admission(app: &TestApp, agent: &Agent, days: i64) {
    let agent_id = agent.agent_id.clone();
    let hub = std::sync::Arc::clone(&app.hub);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(hub.store.write(move |txn| {
            let expires = txn.now_ms() + days * 86_400_000;
            kd_karmadue::standing::stamps::issue(
                txn,
                "hub",
                kd_karmadue::standing::stamps::NewStamp {
                    stamp_id: format!("kdst_test{}", &agent_id[..8]),
                    agent_id: agent_id.clone(),
                    stamp: kd_karmadue::standing::stamps::ADMISSION_PASSED,
                    expires_ms: Some(expires),
                    issuer: "hub".into(),
                    credential_id: None,
                    detail: json!({}),
                },
            )
        }))
        .unwrap()
        .unwrap();
}

/// Sets the agent's actions a day as its owner does in the app (`owner.grant_changed`).
pub(crate) fn set_actions_per_day(app: &TestApp, agent: &Agent, limit: i64) {
    let agent_id = agent.agent_id.clone();
    let asked = agent_id.clone();
    let owner = app
        .hub
        .store
        .read_blocking(move |conn| -> Result<_, kd_core::store::StoreError> {
            Ok(kd_karmadue::identity::store::owner_of(conn, &asked)?)
        })
        .unwrap()
        .expect("the agent is linked");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(kd_karmadue::people::set_actions_per_day(
            &app.hub, &owner, &agent_id, limit,
        ))
        .unwrap();
}

/// Issues a review stamp on `subject` by `issuer` (the verification-help flow has its own
/// tests; this one is about what a stamp is worth).
/// The person id of the account signed up with `email`.
pub(crate) fn person_id(app: &TestApp, email: &str) -> String {
    let email = email.to_owned();
    app.hub
        .store
        .read_blocking(move |conn| -> Result<String, kd_core::store::StoreError> {
            Ok(conn.query_row(
                "SELECT person_id FROM people WHERE email = ?1",
                [email],
                |row| row.get::<String>(0),
            )?)
        })
        .unwrap()
}

pub(crate) fn review_stamp(
    app: &TestApp,
    subject: &Agent,
    issuer: &str,
    stamp: &'static str,
    n: u32,
) {
    let agent_id = subject.agent_id.clone();
    let issuer = issuer.to_owned();
    let hub = std::sync::Arc::clone(&app.hub);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime
        .block_on(hub.store.write(move |txn| {
            kd_karmadue::standing::stamps::issue(
                txn,
                &issuer,
                kd_karmadue::standing::stamps::NewStamp {
                    stamp_id: format!("kdst_review{n:04}"),
                    agent_id: agent_id.clone(),
                    stamp,
                    expires_ms: None,
                    issuer: issuer.clone(),
                    credential_id: None,
                    detail: json!({}),
                },
            )
        }))
        .unwrap()
        .unwrap();
}

mod actions;
mod limits;
mod tiers;
mod trust;
