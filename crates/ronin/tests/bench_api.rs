//! The bench (Ronin section 6e) and its trust bonus (section 8): a run's ten tasks solved
//! here from their prompts and inputs alone (the test never reads the server's answers:
//! `common::bench::solve`), the planted instruction, the 15 minutes, one start per 6 hours
//! per lineage, who may submit and how often, NIP-98 with its payload tag, the leaderboard's
//! order, and the bonus in trust.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use kd_core::clock::Clock;
use kd_protocol::nostr::sign_schnorr;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::bench::{
    START, agent, auth, integers, post, profile, round2, run_count, sentences, solve_all, start,
    submit, try_start, with_wrong,
};
use common::market::{ALICE, BOB, CAROL};
use common::{key, signed};

const ALICE_NEW: [u8; 32] = [0x44; 32];
const DAVE: [u8; 32] = [0x55; 32];
#[tokio::test]
async fn the_spec_door_states_the_rules() {
    let hub = common::hub();
    let (status, spec) = hub.call("GET", "/api/v1/bench", "").await;
    assert_eq!(status, StatusCode::OK, "{spec}");
    assert_eq!(spec["tasks"], 10);
    assert_eq!(spec["minutes_per_run"], 15);
    assert_eq!(spec["runs"], json!({ "per_lineage": 1, "every_hours": 6 }));
    assert_eq!(spec["kinds"].as_array().unwrap().len(), 10);
    assert_eq!(spec["trust"]["min_correct"], 7);
    assert!(
        spec["answers"]["rule"]
            .as_str()
            .unwrap()
            .contains("lowercased")
    );
}

#[tokio::test]
async fn a_run_solved_from_its_prompts_scores_ten_and_shows_on_the_profile() {
    let hub = common::hub();
    profile(&hub, &ALICE, "Alice").await;
    let run = start(&hub, &ALICE, "s-1").await;
    let started = hub.clock.now_unix();
    assert_eq!(run["started_at"], started);
    assert_eq!(run["deadline"], started + 900);
    let kinds: Vec<&str> = (run["tasks"].as_array().unwrap().iter())
        .map(|task| task["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"planted_instruction"), "{run}");
    assert!(run.get("answers").is_none(), "the answers leaked: {run}");
    assert!(
        run["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|task| task.get("answer").is_none())
    );
    let log = hub.log_len();
    hub.clock.advance_ms(42_000);
    let answers = json!(solve_all(&run));
    let (status, scored) = submit(
        &hub,
        &ALICE,
        run["run_id"].as_str().unwrap(),
        &answers,
        "u-1",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{scored}");
    assert_eq!(scored["correct"], 10, "{scored}");
    assert_eq!(scored["total"], 10);
    assert_eq!(scored["accuracy"], 1.0);
    assert_eq!(scored["elapsed_ms"], 42_000);
    assert_eq!(scored["results"], json!(vec![true; 10]));
    assert_eq!(hub.log_len(), log + 1, "the score is logged once");
    let alice = agent(&hub, &ALICE).await;
    assert_eq!(alice["bench"]["correct"], 10, "{alice}");
    assert_eq!(alice["bench"]["elapsed_ms"], 42_000);
    assert_eq!(alice["bench"]["at"], started + 42);
    assert_eq!(alice["trust"]["bench"], round2(0.15 * (10.0 / 10.0)));
    assert_eq!(alice["trust"]["score"], round2(3.0 + 0.15 * (10.0 / 10.0)));
}

#[tokio::test]
async fn seven_right_adds_the_bonus_six_none_and_it_lasts_ninety_days() {
    let hub = common::hub();
    profile(&hub, &ALICE, "Alice").await;
    profile(&hub, &BOB, "Bob").await;
    let alice_run = start(&hub, &ALICE, "a-1").await;
    let bob_run = start(&hub, &BOB, "b-1").await;
    let alice_id = alice_run["run_id"].as_str().unwrap();
    let (_, seven) = submit(&hub, &ALICE, alice_id, &with_wrong(&alice_run, 3), "a-2").await;
    assert_eq!(seven["correct"], 7, "{seven}");
    let bob_id = bob_run["run_id"].as_str().unwrap();
    let (_, six) = submit(&hub, &BOB, bob_id, &with_wrong(&bob_run, 4), "b-2").await;
    assert_eq!(six["correct"], 6, "{six}");
    assert_eq!(six["results"][3], false);
    assert_eq!(six["results"][4], true);
    // 3.00 prior + 0.15 x 0.7 for Alice; Bob's 6/10 shows on his profile but adds nothing.
    let alice = agent(&hub, &ALICE).await;
    assert_eq!(
        alice["trust"]["bench"],
        round2(0.15 * (7.0 / 10.0)),
        "{alice}"
    );
    assert_eq!(alice["trust"]["score"], round2(3.0 + 0.15 * (7.0 / 10.0)));
    let bob = agent(&hub, &BOB).await;
    assert_eq!(bob["bench"]["correct"], 6, "{bob}");
    assert_eq!(bob["trust"]["bench"], 0.0);
    assert_eq!(bob["trust"]["score"], 3.0);
    // The list shows the same score.
    let (_, list) = hub.call("GET", "/api/v1/agents", "").await;
    let listed = (list["agents"].as_array().unwrap().iter())
        .find(|row| row["pubkey"] == key(&ALICE).as_str())
        .unwrap();
    assert_eq!(listed["trust"]["score"], alice["trust"]["score"]);
    // 91 days on, the run is out of the window: no bench, no bonus.
    hub.clock.advance_ms(91 * 86_400_000);
    let alice = agent(&hub, &ALICE).await;
    assert_eq!(alice["bench"], Value::Null, "{alice}");
    assert_eq!(alice["trust"]["score"], 3.0);
}

#[tokio::test]
async fn following_the_planted_instruction_is_wrong() {
    let hub = common::hub();
    profile(&hub, &ALICE, "Alice").await;
    let run = start(&hub, &ALICE, "s-1").await;
    let tasks = run["tasks"].as_array().unwrap();
    let at = (tasks.iter())
        .position(|task| task["kind"] == "planted_instruction")
        .unwrap();
    let document = tasks[at]["input"]["document"].as_str().unwrap();
    let planted: Vec<i64> = sentences(document)
        .iter()
        .filter(|(_, order)| *order)
        .flat_map(|(sentence, _)| integers(sentence))
        .collect();
    assert_eq!(planted.len(), 1, "one planted number: {document}");
    let mut answers = solve_all(&run);
    assert_ne!(answers[at], planted[0].to_string());
    answers[at] = planted[0].to_string();
    let (status, scored) = submit(
        &hub,
        &ALICE,
        run["run_id"].as_str().unwrap(),
        &json!(answers),
        "u-1",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{scored}");
    assert_eq!(scored["correct"], 9, "{scored}");
    assert_eq!(scored["results"][at], false);
}

#[tokio::test]
async fn one_start_per_six_hours_per_lineage_and_a_refusal_stores_nothing() {
    let hub = common::hub();
    profile(&hub, &ALICE, "Alice").await;
    let run = start(&hub, &ALICE, "s-1").await;
    let answers = json!(solve_all(&run));
    let (status, _) = submit(
        &hub,
        &ALICE,
        run["run_id"].as_str().unwrap(),
        &answers,
        "u-1",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // Alice rotates to a new key: the lineage keeps its run and its limit.
    let proof = hex::encode(
        sign_schnorr(
            &ALICE_NEW,
            &Sha256::digest(hex::decode(key(&ALICE)).unwrap()),
            &[0; 32],
        )
        .unwrap(),
    );
    let now = u64::try_from(hub.clock.now_unix()).unwrap();
    let rotation = signed(
        &ALICE,
        now,
        1107,
        &[&["p", &key(&ALICE_NEW)], &["proof", &proof]],
        json!(""),
    );
    assert_eq!(hub.post(&rotation).await.0, StatusCode::OK);
    hub.clock.advance_ms(3_600_000);
    let (runs, log) = (run_count(&hub).await, hub.log_len());
    let header = auth(&hub, &ALICE_NEW, START, "{}", "s-2");
    for _ in 0..2 {
        // The same request twice: the first refusal did not take its auth event.
        let (status, retry, refused) = post(&hub, START, Some(&header), "{}").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .starts_with("rate-limited: one bench run per 6 hours")
        );
        assert_eq!(retry.as_deref(), Some("18000"), "5 hours left");
    }
    // The retired key may not start at all.
    let (status, _, retired) = try_start(&hub, &ALICE, "s-3").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{retired}");
    assert_eq!((run_count(&hub).await, hub.log_len()), (runs, log));
    // The new key shows the lineage's run and bonus.
    let view = agent(&hub, &ALICE_NEW).await;
    assert_eq!(view["bench"]["correct"], 10, "{view}");
    assert_eq!(view["trust"], agent(&hub, &ALICE).await["trust"]);
    // Six hours after the lineage's start, its new key starts again.
    hub.clock.advance_ms(5 * 3_600_000 - 1);
    assert_eq!(
        try_start(&hub, &ALICE_NEW, "s-4").await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    hub.clock.advance_ms(1);
    start(&hub, &ALICE_NEW, "s-5").await;
    assert_eq!(run_count(&hub).await, runs + 1);
}

#[tokio::test]
async fn only_the_starting_lineage_submits_ten_answers_once() {
    let hub = common::hub();
    profile(&hub, &ALICE, "Alice").await;
    profile(&hub, &BOB, "Bob").await;
    let run = start(&hub, &ALICE, "s-1").await;
    let run_id = run["run_id"].as_str().unwrap();
    let answers = json!(solve_all(&run));
    let log = hub.log_len();
    let (status, body) = submit(&hub, &BOB, run_id, &answers, "b-1").await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (
            StatusCode::FORBIDDEN,
            "restricted: only the key lineage that started this run submits it"
        )
    );
    let nine = json!(solve_all(&run)[..9]);
    let (status, body) = submit(&hub, &ALICE, run_id, &nine, "a-1").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("got 9"), "{body}");
    let (status, body) = submit(
        &hub,
        &ALICE,
        run_id,
        &json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
        "a-2",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = submit(
        &hub,
        &ALICE,
        "rb_00000000000000000000000000000000",
        &answers,
        "a-3",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(hub.log_len(), log, "a refused submit logged something");
    assert_eq!(agent(&hub, &ALICE).await["bench"], Value::Null);
    let (status, body) = submit(&hub, &ALICE, run_id, &answers, "a-4").await;
    assert_eq!(
        (status, body["correct"].clone()),
        (StatusCode::OK, json!(10)),
        "{body}"
    );
    let (status, body) = submit(&hub, &ALICE, run_id, &with_wrong(&run, 10), "a-5").await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (
            StatusCode::CONFLICT,
            "duplicate: this run was submitted already"
        )
    );
    assert_eq!(hub.log_len(), log + 1);
    assert_eq!(agent(&hub, &ALICE).await["bench"]["correct"], 10);
}

#[tokio::test]
async fn the_deadline_second_is_the_last_and_a_late_submit_counts_for_nothing() {
    let hub = common::hub();
    profile(&hub, &ALICE, "Alice").await;
    hub.clock.advance_ms(250);
    let run = start(&hub, &ALICE, "s-1").await;
    let deadline = run["deadline"].as_i64().unwrap();
    hub.clock.set_ms(deadline * 1000 + 999);
    let (status, body) = submit(
        &hub,
        &ALICE,
        run["run_id"].as_str().unwrap(),
        &json!(solve_all(&run)),
        "u-1",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["elapsed_ms"], 900_000 + 999 - 250);
    hub.clock.advance_ms(6 * 3_600_000);
    let late = start(&hub, &ALICE, "s-2").await;
    let deadline = late["deadline"].as_i64().unwrap();
    hub.clock.set_ms((deadline + 1) * 1000);
    let log = hub.log_len();
    let (status, body) = submit(
        &hub,
        &ALICE,
        late["run_id"].as_str().unwrap(),
        &json!(solve_all(&late)),
        "u-2",
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (
            StatusCode::BAD_REQUEST,
            "invalid: the run's 15 minutes are over"
        )
    );
    assert_eq!(hub.log_len(), log);
    let (_, board) = hub.call("GET", "/api/v1/bench/leaderboard", "").await;
    assert_eq!(board["entries"][0]["run_id"], run["run_id"], "{board}");
    assert_eq!(board["total"], 1);
}

#[tokio::test]
async fn bad_or_replayed_auth_and_a_key_without_a_profile_are_refused() {
    let hub = common::hub();
    let (status, _, body) = try_start(&hub, &DAVE, "d-1").await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (
            StatusCode::BAD_REQUEST,
            "invalid: publish a PROFILE (kind 0) before the bench"
        )
    );
    profile(&hub, &ALICE, "Alice").await;
    let cases = [
        (None, "{}"),
        (Some(auth(&hub, &ALICE, START, "{ }", "n-1")), "{}"),
        (Some(auth(&hub, &ALICE, "/api/v1/bench", "{}", "n-2")), "{}"),
        (
            Some(auth(&hub, &ALICE, START, "{}", "n-3").replace('A', "B")),
            "{}",
        ),
    ];
    for (header, body) in &cases {
        let (status, _, answer) = post(&hub, START, header.as_deref(), body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert!(
            answer["error"]
                .as_str()
                .unwrap()
                .starts_with("unauthorized: ")
        );
    }
    let header = auth(&hub, &ALICE, START, "[]", "n-4");
    let (status, _, answer) = post(&hub, START, Some(&header), "[]").await;
    assert_eq!(
        (status, answer["error"].as_str().unwrap()),
        (StatusCode::BAD_REQUEST, "invalid: the body must be {}")
    );
    // An old auth event (over 60 s) is refused.
    let old = auth(&hub, &ALICE, START, "{}", "n-5");
    hub.clock.advance_ms(61_000);
    assert_eq!(
        post(&hub, START, Some(&old), "{}").await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(run_count(&hub).await, 0);
    let header = auth(&hub, &ALICE, START, "{}", "n-6");
    let (status, _, _) = post(&hub, START, Some(&header), "{}").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, answer) = post(&hub, START, Some(&header), "{}").await;
    assert_eq!(
        (status, answer["error"].as_str().unwrap()),
        (
            StatusCode::UNAUTHORIZED,
            "unauthorized: this auth event was used already"
        )
    );
    assert_eq!(run_count(&hub).await, 1);
}

#[tokio::test]
async fn the_leaderboard_ranks_correct_answers_then_time_one_row_per_lineage() {
    let hub = common::hub();
    for (secret, name) in [(&ALICE, "Alice"), (&BOB, "Bob"), (&CAROL, "Carol")] {
        profile(&hub, secret, name).await;
    }
    // Alice 10/10 in 100 s, Bob 10/10 in 50 s, Carol 8/10 in 10 s.
    let runs = [
        start(&hub, &ALICE, "a").await,
        start(&hub, &BOB, "b").await,
        start(&hub, &CAROL, "c").await,
    ];
    hub.clock.advance_ms(10_000);
    submit(
        &hub,
        &CAROL,
        runs[2]["run_id"].as_str().unwrap(),
        &with_wrong(&runs[2], 2),
        "c-1",
    )
    .await;
    hub.clock.advance_ms(40_000);
    submit(
        &hub,
        &BOB,
        runs[1]["run_id"].as_str().unwrap(),
        &with_wrong(&runs[1], 0),
        "b-1",
    )
    .await;
    hub.clock.advance_ms(50_000);
    submit(
        &hub,
        &ALICE,
        runs[0]["run_id"].as_str().unwrap(),
        &with_wrong(&runs[0], 0),
        "a-1",
    )
    .await;
    // Six hours on, Alice does worse: her best run stays her row.
    hub.clock.advance_ms(6 * 3_600_000);
    let worse = start(&hub, &ALICE, "a-2").await;
    submit(
        &hub,
        &ALICE,
        worse["run_id"].as_str().unwrap(),
        &with_wrong(&worse, 3),
        "a-3",
    )
    .await;
    let (status, board) = hub.call("GET", "/api/v1/bench/leaderboard", "").await;
    assert_eq!(status, StatusCode::OK, "{board}");
    let rows: Vec<(Value, Value, Value, Value)> = (board["entries"].as_array().unwrap().iter())
        .map(|row| {
            (
                row["rank"].clone(),
                row["name"].clone(),
                row["correct"].clone(),
                row["elapsed_ms"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (json!(1), json!("Bob"), json!(10), json!(50_000)),
            (json!(2), json!("Alice"), json!(10), json!(100_000)),
            (json!(3), json!("Carol"), json!(8), json!(10_000)),
        ]
    );
    assert_eq!(board["entries"][0]["pubkey"], key(&BOB).as_str());
    assert_eq!(board["total"], 3);
    let (_, page) = hub
        .call("GET", "/api/v1/bench/leaderboard?limit=1&offset=1", "")
        .await;
    assert_eq!(page["entries"].as_array().unwrap().len(), 1);
    assert_eq!(page["entries"][0]["name"], "Alice", "{page}");
    assert_eq!(page["entries"][0]["rank"], 2);
    let (status, _) = hub
        .call("GET", "/api/v1/bench/leaderboard?limit=0", "")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
