//! Several hub processes on one PostgreSQL database (DESIGN rule 7; docs/decisions.md 151-154):
//! two hubs, each with its own store, writer, limiter and in-memory indexes, on one database,
//! with requests alternating between them. Runs with `KD_TEST_DATABASE=postgres` (scripts/test
//! runs the suite so); on SQLite a hub is one process and the test says it skipped.

use std::sync::Arc;

use kd_core::config::Config;
use serde_json::{Value, json};

use crate::app::{TestApp, fresh_nonce, on_postgres};
use crate::people::{connect, mint};

/// Two hubs on one database, with the permissions document's own per-minute limits.
fn pair() -> Option<(TestApp, TestApp)> {
    if !on_postgres() {
        eprintln!("skipped: several hubs share one database on PostgreSQL only");
        return None;
    }
    let url = kd_core::db::testing::scratch_postgres().unwrap();
    let start = |url: String| {
        TestApp::start_with(move |config: &mut Config| {
            config.access_tiers = kd_core::tiers::AccessTiers::default();
            config.database_url = Some(kd_core::config::Secret::new(url));
        })
    };
    Some((start(url.clone()), start(url).sharing_the_database()))
}

fn pairs(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

#[test]
fn two_hubs_on_one_database_are_one_hub() {
    let Some((first, second)) = pair() else {
        return;
    };
    let hubs = [&first, &second];

    // 100 anonymous reads at once from one address, spread over both hubs: exactly the
    // anonymous tier's 30 reads a minute are admitted, in total.
    let replies: Vec<Value> = std::thread::scope(|scope| {
        let tasks: Vec<_> = (0..100)
            .map(|n| {
                let app = hubs[n % 2];
                scope.spawn(move || app.call("list_topics", json!({})))
            })
            .collect();
        tasks.into_iter().map(|task| task.join().unwrap()).collect()
    });
    let admitted = replies.iter().filter(|reply| reply["ok"] == true).count();
    let limited = replies
        .iter()
        .filter(|reply| reply["error"]["code"] == "rate_limited")
        .count();
    assert_eq!((admitted, limited), (30, 70), "{:?}", replies.first());
    for app in hubs {
        app.clock.advance_ms(61_000);
    }

    // A signed request is single use on both: replayed on the other hub it is `replay`.
    let agent = first.register("Twin Runner");
    let arguments =
        json!({ "agent_id": agent.agent_id, "name": "Twin Runner Renamed" }).to_string();
    let headers = first.sign(
        &agent.key,
        "rename_agent",
        &agent.agent_id,
        &arguments,
        &fresh_nonce(),
    );
    let (reply, is_error) = first.call_text("rename_agent", &arguments, &pairs(&headers));
    assert!(!is_error, "{reply}");
    let (reply, _) = second.call_text("rename_agent", &arguments, &pairs(&headers));
    assert_eq!(reply["error"]["code"], "replay", "{reply}");

    // A name registered on one hub is reserved on the other at once (lookalikes included).
    let reply = second.try_register(
        "Twin Runner Renamed",
        &ed25519_dalek::SigningKey::from_bytes(&[41; 32]),
        "t",
    );
    assert_eq!(reply["error"]["code"], "label_reserved", "{reply}");

    // One connect code redeemed on both hubs at once links exactly one agent.
    let browser = first.browser();
    browser.sign_up(
        "twins@example.org",
        "Twin Owner",
        "correct horse battery staple",
    );
    let code = mint(&browser);
    let racers = [first.register("Racer West"), second.register("Racer East")];
    let outcomes: Vec<Value> = std::thread::scope(|scope| {
        let tasks: Vec<_> = racers
            .iter()
            .zip(hubs)
            .map(|(agent, app)| {
                let code = &code;
                scope.spawn(move || connect(app, agent, code))
            })
            .collect();
        tasks.into_iter().map(|task| task.join().unwrap()).collect()
    });
    let linked = outcomes.iter().filter(|reply| reply["ok"] == true).count();
    assert_eq!(linked, 1, "{outcomes:?}");

    // The agent one hub registered is verified by the other, and both see one chain.
    let verified = second.call("verify_agent", json!({ "agent_id": agent.agent_id }));
    assert_eq!(
        verified["data"]["display_label"], "Twin Runner Renamed",
        "{verified}"
    );
    assert_eq!(first.log_len(), second.log_len());
    first.assert_chain_ok();
    second.assert_chain_ok();
}

/// A hub whose passport key differs from the one the database's first hub pinned refuses to
/// start, and says which keys: it would sign passports no verifier expects.
#[test]
fn a_hub_with_another_key_refuses_the_database() {
    let Some((first, _second)) = pair() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(
        "127.0.0.1:0".parse().unwrap(),
        dir.path().join("data"),
        None,
    );
    config.database_url = first.hub.config.database_url.clone();
    let before = first.log_len();
    let opened = kd_karmadue::open(
        config,
        Arc::new(kd_core::clock::ManualClock::new(crate::app::START_MS)),
        Arc::new(kd_core::random::SeededRandom::new(99)),
    );
    let Err(refused) = opened else {
        panic!("a hub with another key must not start");
    };
    let message = refused.to_string();
    assert!(message.contains("kd-passport-1"), "{message}");
    assert!(
        message.contains(&first.hub.passport_key.public_key_b64url()),
        "{message}"
    );
    assert_eq!(first.log_len(), before, "nothing written");
}

/// The once-a-day jobs run once a day in total: each checks and marks its day inside the
/// writer's transaction, which the chain-head lock serializes across the hubs, so the second
/// hub finds the day done. Two hubs publishing the day's log head at once make one head, and
/// each hub's ledger folder holds that same head.
#[test]
fn two_hubs_publishing_at_once_make_one_head_a_day() {
    let Some((first, second)) = pair() else {
        return;
    };
    first.register("Head Writer");
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| {
            first
                .block_on(kd_karmadue::ledger::publish(&first.hub))
                .unwrap()
        });
        let b = scope.spawn(|| {
            second
                .block_on(kd_karmadue::ledger::publish(&second.hub))
                .unwrap()
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    let (a, b) = (a.today.unwrap(), b.today.unwrap());
    assert_eq!(a, b, "one head for the day");
    let heads = first
        .hub
        .store
        .read_blocking(|conn| kd_core::heads::since(conn, ""))
        .unwrap();
    assert_eq!(heads.len(), 1, "{heads:?}");
    for app in [&first, &second] {
        let file = app
            .hub
            .config
            .ledger_path()
            .join("heads")
            .join(format!("{}.json", a.day));
        assert!(file.exists(), "{}", file.display());
    }
}
