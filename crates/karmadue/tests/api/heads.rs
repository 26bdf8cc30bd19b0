//! The signed daily log head (spec "Signed log head"; DECISIONS 8): one kd-log-head-v1 anchor
//! per UTC day, served live with the 30 before it, and written once to the ledger folder.

use ed25519_dalek::{Signature, VerifyingKey};
use kd_karmadue::ledger;
use serde_json::Value;

use crate::app::{START_MS, TestApp};
use crate::preflight::published_key;

const DAY_MS: i64 = 86_400_000;
const LIVE: &str = "/.well-known/kd-log-head.json";
const LIVE_PUBLIC_API: &str = "/functions/v1/public-api/.well-known/kd-log-head.json";

/// The log's last row as (seq, row_hash), read from the store.
fn last_row(app: &TestApp) -> (i64, String) {
    let head = app
        .hub
        .store
        .read_blocking(kd_core::eventlog::ChainHead::load)
        .unwrap();
    (head.seq, head.row_hash)
}

/// Checks one served or written anchor: its text rebuilt by hand from the fields, and its
/// signature against the JWKS key.
fn assert_anchor_verifies(anchor: &Value, key: &VerifyingKey) {
    let text = format!(
        "kd-log-head-v1\n{}\n{}\n{}",
        anchor["date"].as_str().unwrap(),
        anchor["seq"].as_i64().unwrap(),
        anchor["row_hash"].as_str().unwrap()
    );
    assert_eq!(anchor["signed_text"], text.as_str(), "{anchor}");
    assert_eq!(anchor["recipe"], "kd-log-head-v1");
    assert_eq!(anchor["key_id"], "kd-passport-1");
    assert_eq!(anchor["alg"], "EdDSA");
    let signature = kd_protocol::b64::decode_url(anchor["signature"].as_str().unwrap()).unwrap();
    key.verify_strict(text.as_bytes(), &Signature::from_slice(&signature).unwrap())
        .unwrap();
}

fn head_file(app: &TestApp, day: &str) -> std::path::PathBuf {
    app.hub
        .config
        .ledger_path()
        .join("heads")
        .join(format!("{day}.json"))
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scenario: each step acts on the state the step before it left"
)]
fn the_day_s_head_signs_the_latest_event_is_served_twice_and_written_once() {
    let app = TestApp::start();
    // An empty log has no head yet: a clear 404, and no head file.
    let none = app.request("GET", LIVE, None, &[]);
    assert_eq!(none.status, 404, "{}", none.text);
    assert_eq!(none.json()["error"]["code"], "not_found");
    assert!(none.json()["request_id"].is_string());
    assert!(!app.hub.config.ledger_path().exists());

    app.register("Heads Writer");
    // The next day (whatever the start-up run published for the first day stays there).
    app.clock.advance_ms(DAY_MS);
    let (seq, row_hash) = last_row(&app);
    let log_before = app.log_len();
    let report = app.block_on(ledger::publish(&app.hub)).unwrap();
    let head = report.today.clone().unwrap();
    assert_eq!(head.day, "2026-10-12");
    assert_eq!((head.seq, head.row_hash.as_str()), (seq, row_hash.as_str()));
    assert!(
        report.written.contains(&"2026-10-12".to_owned()),
        "{report:?}"
    );
    // A head is not an event: publishing it did not grow the log it names.
    assert_eq!(app.log_len(), log_before);

    let key = published_key(&app);
    let live = app.request("GET", LIVE, None, &[]);
    assert_eq!(live.status, 200);
    assert_eq!(live.header("cache-control"), Some("public, max-age=300"));
    assert!(
        live.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let body = live.json();
    assert_eq!(body["date"], "2026-10-12");
    assert_eq!(body["seq"], seq);
    assert_eq!(body["row_hash"], row_hash.as_str());
    assert_eq!(body["published_at"], "2026-10-12T06:26:40.000Z");
    assert_eq!(
        body["jwks_url"],
        format!("{}/.well-known/jwks.json", app.base)
    );
    assert_anchor_verifies(&body, &key);
    // The public-api copy is the same document.
    assert_eq!(app.request("GET", LIVE_PUBLIC_API, None, &[]).json(), body);

    // The file holds the same anchor (without the live-only fields), ends with a newline,
    // and verifies on its own.
    let text = std::fs::read_to_string(head_file(&app, "2026-10-12")).unwrap();
    assert!(text.ends_with("}\n"));
    let file: Value = serde_json::from_str(&text).unwrap();
    assert_anchor_verifies(&file, &key);
    for field in [
        "date",
        "seq",
        "row_hash",
        "signed_text",
        "signature",
        "published_at",
    ] {
        assert_eq!(file[field], body[field], "{field}");
    }
    assert!(file.get("previous").is_none() && file.get("jwks_url").is_none());
    // The ledger folder carries the verifier and a README.
    let ledger = app.hub.config.ledger_path();
    assert_eq!(
        std::fs::read_to_string(ledger.join("scripts/verify_head.py")).unwrap(),
        ledger::VERIFIER
    );
    assert!(ledger.join("README.md").exists());
    #[cfg(unix)]
    {
        // Owner-only, files and folders (issue 35; docs/decisions.md 491).
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        for folder in [ledger.clone(), ledger.join("heads"), ledger.join("scripts")] {
            assert_eq!(mode(&folder), 0o700, "{}", folder.display());
        }
        for file in [
            ledger.join("scripts/verify_head.py"),
            ledger.join("README.md"),
            head_file(&app, "2026-10-12"),
        ] {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
    }

    // One anchor per day: more events the same day leave the day's head as it was.
    app.register("Second Heads Writer");
    let again = app.block_on(ledger::publish(&app.hub)).unwrap();
    assert_eq!(again.today.clone().unwrap().seq, seq);
    assert!(again.written.is_empty(), "{again:?}");
    assert_eq!(app.request("GET", LIVE, None, &[]).json(), body);

    // The next day's head names the newer events and lists this one under previous.
    app.clock.advance_ms(DAY_MS);
    let next = app
        .block_on(ledger::publish(&app.hub))
        .unwrap()
        .today
        .unwrap();
    assert_eq!(next.day, "2026-10-13");
    assert_eq!(next.seq, app.log_len());
    assert!(next.seq > seq);
    let live = app.request("GET", LIVE, None, &[]).json();
    assert_eq!(live["date"], "2026-10-13");
    let previous = live["previous"].as_array().unwrap();
    assert_eq!(previous[0]["date"], "2026-10-12");
    assert_eq!(previous[0]["signature"], body["signature"]);
    for anchor in previous {
        assert_anchor_verifies(anchor, &key);
    }
}

#[test]
fn previous_lists_the_thirty_anchors_before_the_newest_and_seq_never_goes_down() {
    let app = TestApp::start();
    app.register("Thirty Days Writer");
    for day in 1..=34 {
        if day == 20 {
            app.register("Midway Ledger Author");
        }
        app.clock.set_ms(START_MS + day * DAY_MS);
        assert!(
            app.block_on(ledger::publish(&app.hub))
                .unwrap()
                .today
                .is_some()
        );
    }
    let key = published_key(&app);
    let live = app.request("GET", LIVE, None, &[]).json();
    assert_eq!(live["date"], "2026-11-14");
    let previous = live["previous"].as_array().unwrap();
    assert_eq!(previous.len(), 30);
    // Newest first, one per day, the oldest listed is 30 days before the newest.
    assert_eq!(previous[0]["date"], "2026-11-13");
    assert_eq!(previous[29]["date"], "2026-10-15");
    let mut later_seq = live["seq"].as_i64().unwrap();
    for anchor in previous {
        assert_anchor_verifies(anchor, &key);
        let seq = anchor["seq"].as_i64().unwrap();
        assert!(seq <= later_seq, "{anchor}");
        later_seq = seq;
    }
    // The registration on day 20 moved the anchors after it.
    assert!(live["seq"].as_i64().unwrap() > previous[29]["seq"].as_i64().unwrap());
    // Every day has its file (34 days, plus possibly the start-up run's first day).
    let files = std::fs::read_dir(app.hub.config.ledger_path().join("heads"))
        .unwrap()
        .count();
    assert!((34..=35).contains(&files), "{files}");
}

#[test]
fn a_head_file_that_differs_is_left_alone_and_a_clock_set_back_publishes_nothing() {
    let app = TestApp::start();
    app.register("Careful Ledger Keeper");
    app.clock.set_ms(START_MS + DAY_MS);
    app.block_on(ledger::publish(&app.hub)).unwrap();
    let path = head_file(&app, "2026-10-12");
    std::fs::write(&path, "{\"edited\": true}\n").unwrap();

    app.clock.set_ms(START_MS + 3 * DAY_MS);
    let report = app.block_on(ledger::publish(&app.hub)).unwrap();
    assert_eq!(report.differing, vec!["2026-10-12".to_owned()]);
    assert_eq!(report.written, vec!["2026-10-14".to_owned()]);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"edited\": true}\n",
        "a written head file is never overwritten"
    );

    // A clock set back to a day before the newest head publishes nothing for that day.
    app.clock.set_ms(START_MS + 2 * DAY_MS);
    let back = app.block_on(ledger::publish(&app.hub)).unwrap();
    assert_eq!(back.today, None);
    // ... and says so: the newest head is dated after today.
    assert_eq!(back.ahead.as_deref(), Some("2026-10-14"));
    assert!(!head_file(&app, "2026-10-13").exists());
    assert_eq!(
        app.request("GET", LIVE, None, &[]).json()["date"],
        "2026-10-14"
    );
}

#[test]
fn stored_heads_are_append_only_and_checked_against_the_log() {
    let app = TestApp::start();
    app.register("Checked Ledger Author");
    app.clock.set_ms(START_MS + DAY_MS);
    app.block_on(ledger::publish(&app.hub)).unwrap();
    let key = app.hub.passport_key.clone();
    let checked = app
        .hub
        .store
        .read_blocking(|conn| kd_core::heads::check(conn, Some(&key), "2026-10-12"))
        .unwrap();
    assert!(matches!(checked, Ok(n) if n >= 1), "{checked:?}");
    // A head dated after the checker's today means the clock was wrong when it was published.
    let early = app
        .hub
        .store
        .read_blocking(|conn| kd_core::heads::check(conn, Some(&key), "2026-10-11"))
        .unwrap();
    assert_eq!(
        early,
        Err("head of 2026-10-12: it is dated after today: the hub's clock was wrong when it was published".to_owned())
    );
    // The database refuses to change or remove a head.
    let conn = kd_core::db::Connection::open(&app.hub.config.database()).unwrap();
    for statement in [
        "UPDATE log_heads SET seq = seq + 1",
        "DELETE FROM log_heads",
    ] {
        let refused = conn.execute(statement, []).unwrap_err();
        assert!(refused.to_string().contains("append-only"), "{refused}");
    }
}
