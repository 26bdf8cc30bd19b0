//! Working state that is not the log (issue 11, part 2): registration challenges (one answer
//! for unknown, used and expired; the stated second is the limit; billed as a write; pruned)
//! and spent nonces (pruned a few at a time once no replay can use them).

use ed25519_dalek::{Signer, SigningKey};
use kd_core::clock::Clock;
use kd_core::tiers::AccessTiers;
use kd_protocol::b64;
use serde_json::{Value, json};

use crate::app::TestApp;

fn register_with(app: &TestApp, name: &str, seed: u8, challenge: &(String, String)) -> Value {
    let key = SigningKey::from_bytes(&[seed; 32]);
    app.call(
        "register_agent",
        json!({ "name": name, "platform": "t", "public_key": b64::encode_url(key.verifying_key().as_bytes()),
                "challenge_id": challenge.0, "signature": b64::encode_url(&key.sign(challenge.1.as_bytes()).to_bytes()) }),
    )
}

fn count(app: &TestApp, sql: &'static str) -> i64 {
    app.hub
        .store
        .read_blocking(move |conn| -> Result<i64, kd_core::store::StoreError> {
            Ok(conn.query_row(sql, [], |row| row.get(0))?)
        })
        .unwrap()
}

/// Unknown, used and expired challenges get the same refusal, and a challenge works until
/// the whole second its payload states, not a fraction of a second past it.
#[test]
fn unknown_used_and_expired_challenges_get_one_answer_and_the_stated_second_is_the_limit() {
    let app = TestApp::start();
    app.clock.advance_ms(500); // issued mid-second: the old limit was 500 ms past the payload's
    let reply = app.call("register_challenge", json!({}));
    let (first, second) = (app.challenge(), app.challenge());
    let stated: i64 = first.1.lines().last().unwrap().parse().unwrap();
    assert_eq!(reply["data"]["expires_at_unix"], stated, "{reply}");
    assert_eq!(
        reply["data"]["expires_at"],
        kd_core::clock::rfc3339_ms(stated * 1000)
    );
    app.clock.set_ms(stated * 1000 - 1);
    assert_eq!(register_with(&app, "Just In Time", 21, &first)["ok"], true);
    let before = app.log_len();
    app.clock.set_ms(stated * 1000);
    let expired = register_with(&app, "Too Late", 22, &second);
    let used = register_with(&app, "Used Again", 23, &first);
    let unknown = register_with(
        &app,
        "Never Issued",
        24,
        &("kdc_000000000000000000000000".into(), second.1.clone()),
    );
    assert_eq!(expired["error"]["code"], "validation", "{expired}");
    assert_eq!(expired["error"]["field"], "challenge_id", "{expired}");
    assert!(
        expired["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown, used or expired"),
        "{expired}"
    );
    assert_eq!(used["error"], expired["error"], "used and expired differ");
    assert_eq!(
        unknown["error"], expired["error"],
        "unknown and expired differ"
    );
    assert_eq!(app.log_len(), before, "a refusal wrote to the log");
}

/// register_challenge stores a row, so it counts against the per-minute writes (anonymous:
/// 10 a minute per address), not the reads.
#[test]
fn register_challenge_is_billed_as_a_write() {
    let app = TestApp::start_with(|config| config.access_tiers = AccessTiers::default());
    for _ in 0..10 {
        assert_eq!(app.call("register_challenge", json!({}))["ok"], true);
    }
    let refused = app.call("register_challenge", json!({}));
    assert_eq!(refused["error"]["code"], "rate_limited", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("10 writes a minute"),
        "{refused}"
    );
    assert_eq!(count(&app, "SELECT COUNT(*) FROM challenges"), 10);
    // Reads were not charged for them.
    assert_eq!(app.call("list_topics", json!({}))["ok"], true);
}

/// Expired challenges are deleted a few at a time (at most 8) by each new challenge's write,
/// until only live ones are left; a live one still works.
#[test]
fn expired_challenges_are_pruned_a_few_at_a_time() {
    let app = TestApp::start();
    for _ in 0..20 {
        app.challenge();
    }
    app.clock.advance_ms(601_000);
    let live = app.challenge();
    assert_eq!(count(&app, "SELECT COUNT(*) FROM challenges"), 20 - 8 + 1);
    app.challenge();
    assert_eq!(count(&app, "SELECT COUNT(*) FROM challenges"), 20 - 16 + 2);
    app.challenge();
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM challenges"),
        3,
        "only live ones are left"
    );
    assert_eq!(register_with(&app, "Still Live", 31, &live)["ok"], true);
}

fn signed_with(
    app: &TestApp,
    tool: &str,
    arguments: &Value,
    headers: &[(String, String)],
) -> Value {
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    app.call_text(tool, &arguments.to_string(), &borrowed).0
}

/// Spent nonces are kept while a replay could still use them (15 minutes) and then deleted,
/// at most 8 per signed write (accepted or refused); a replay inside the window is still
/// `replay`, and after the row is gone the old request is stale.
#[test]
fn spent_nonces_are_pruned_once_no_replay_can_use_them() {
    let app = TestApp::start();
    let agent = app.register("Nonce Keeper");
    let other = app.register("Nonce Other");
    let arguments = json!({ "agent_id": agent.agent_id, "name": "Nonce Keeper Two" });
    let headers = app.sign(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments.to_string(),
        "kept-nonce-000000001",
    );
    assert_eq!(
        signed_with(&app, "rename_agent", &arguments, &headers)["ok"],
        true
    );
    app.clock.advance_ms(200_000);
    let replay = signed_with(&app, "rename_agent", &arguments, &headers);
    assert_eq!(replay["error"]["code"], "replay", "{replay}");
    // 20 nonces spent long ago (16 minutes) by the other agent, and one 10 minutes ago.
    let now = app.clock.now_ms();
    let other_id = other.agent_id.clone();
    app.block_on(
        app.hub
            .store
            .write(move |txn| -> Result<(), kd_core::store::StoreError> {
                for n in 0..20 {
                    txn.conn().execute(
                        "INSERT INTO nonces (agent_id, nonce, seen_ms) VALUES (?1, ?2, ?3)",
                        kd_core::params![other_id, format!("old-nonce-{n:08}"), now - 16 * 60_000],
                    )?;
                }
                txn.conn().execute(
            "INSERT INTO nonces (agent_id, nonce, seen_ms) VALUES (?1, 'recent-nonce-0000', ?2)",
            kd_core::params![other_id, now - 10 * 60_000],
        )?;
                Ok(())
            }),
    )
    .unwrap()
    .unwrap();
    let old = "SELECT COUNT(*) FROM nonces WHERE nonce LIKE 'old-nonce-%'";
    let rename = |name: &str| {
        app.signed(
            &agent,
            "rename_agent",
            json!({ "agent_id": agent.agent_id, "name": name }),
        )
    };
    assert_eq!(rename("Nonce Keeper Three")["ok"], true);
    assert_eq!(count(&app, old), 12);
    // A refused signed write (the name is taken) spends its nonce and prunes too.
    let before = app.log_len();
    assert_eq!(rename("Nonce Other")["error"]["code"], "label_reserved");
    assert_eq!(app.log_len(), before);
    assert_eq!(count(&app, old), 4);
    assert_eq!(rename("Nonce Keeper Four")["ok"], true);
    assert_eq!(count(&app, old), 0);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM nonces WHERE nonce = 'recent-nonce-0000'"
        ),
        1
    );
    // 16 minutes after the first request its nonce goes too; the request is stale anyway.
    app.clock.advance_ms(16 * 60_000);
    assert_eq!(rename("Nonce Keeper Five")["ok"], true);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM nonces WHERE nonce = 'kept-nonce-000000001'"
        ),
        0
    );
    let late = signed_with(&app, "rename_agent", &arguments, &headers);
    assert_eq!(late["error"]["code"], "stale_signature", "{late}");
}
