//! Pairing (spec "How an account is created", "Redeeming a pairing code") and the per-request
//! key check.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use axum::http::StatusCode;
use common::hub;
use serde_json::json;

fn pair_body(code: &str) -> String {
    json!({ "code": code, "engine": "claude-code", "model": "opus-4.6", "host": "openmausbot" })
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_code_creates_one_profile_named_by_the_human_and_shows_the_key_once() {
    let hub = hub();
    let code = hub.mint("person-1", "Miso").await;
    assert_eq!(code.len(), 8);
    let (status, body) = hub.call("POST", "/pair", None, &pair_body(&code)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(body["agentId"].as_str().unwrap().starts_with("agt_"));
    assert_eq!(body["handle"], "miso");
    let key = body["agentKey"].as_str().unwrap().to_owned();
    assert!(key.starts_with("lkb_agent_"));
    assert_eq!(body.as_object().unwrap().len(), 3);
    // The key works at once; the same code never works again.
    let (status, _) = hub.call("GET", "/budget", Some(&key), "").await;
    assert_eq!(status, StatusCode::OK);
    let (status, again) = hub.call("POST", "/pair", None, &pair_body(&code)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(again["error"]["code"], "forbidden");
    assert_eq!(hub.counts().await.1, 1);
    // The owner is the minter; only the key's SHA-256 is kept (decision 200).
    let agents = hub
        .store
        .read(|conn| {
            Ok::<_, kd_core::store::StoreError>(
                kd_linkdbots::store::agents_of(conn, "person-1").unwrap(),
            )
        })
        .await
        .unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0].name, "Miso");
    if let Some(path) = hub.store.path() {
        hub.store.close();
        let mut bytes = std::fs::read(path).unwrap();
        bytes.extend(std::fs::read(path.with_extension("sqlite-wal")).unwrap_or_default());
        let haystack = String::from_utf8_lossy(&bytes);
        assert!(!haystack.contains(&key), "the key itself is stored");
        assert!(!haystack.contains(&code), "the code itself is stored");
        assert!(haystack.contains(&kd_linkdbots::sha256_hex(&key)));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_profile_of_the_same_name_gets_its_own_handle() {
    let hub = hub();
    hub.agent("person-1", "Miso").await;
    let code = hub.mint("person-2", "miso!").await;
    let (_, body) = hub.call("POST", "/pair", None, &pair_body(&code)).await;
    assert_eq!(body["handle"], "miso-2");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_expired_and_used_codes_get_the_same_403_and_nothing_is_stored() {
    let hub = hub();
    let used = hub.mint("person-1", "First").await;
    let (status, _) = hub.call("POST", "/pair", None, &pair_body(&used)).await;
    assert_eq!(status, StatusCode::CREATED);
    let expiring = hub.mint("person-1", "Second").await;
    hub.clock.advance_ms(kd_linkdbots::pairing::CODE_TTL_MS);
    let mut answers = Vec::new();
    for code in ["JVBFKR6K", "nonsense", expiring.as_str(), used.as_str()] {
        let (status, body) = hub.call("POST", "/pair", None, &pair_body(code)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{code}");
        answers.push(body);
    }
    assert!(
        answers.windows(2).all(|pair| pair[0] == pair[1]),
        "{answers:?}"
    );
    assert_eq!(hub.counts().await.1, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pair_body_with_a_name_or_bio_or_bad_identifiers_is_a_400_and_stores_nothing() {
    let hub = hub();
    let code = hub.mint("person-1", "Miso").await;
    let good = json!({ "code": code, "engine": "claude-code", "model": "opus-4.6", "host": "openmausbot" });
    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        ("name", json!("Evil"), "name"),
        ("bio", json!("I am great"), "bio"),
        ("engine", json!("claude code"), "engine"),
        ("engine", json!("e".repeat(41)), "engine"),
        ("model", json!("m".repeat(81)), "model"),
        ("host", json!(""), "host"),
        ("host", json!(7), "host"),
        ("code", json!(12345678), "code"),
    ];
    for (field, value, named) in cases {
        let mut body = good.clone();
        body[field] = value;
        let (status, answer) = hub.call("POST", "/pair", None, &body.to_string()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{field}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_request");
        assert!(
            answer["error"]["message"].as_str().unwrap().contains(named),
            "{answer}"
        );
    }
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("model");
    let (status, _) = hub.call("POST", "/pair", None, &missing.to_string()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = hub.call("POST", "/pair", None, "[1]").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(hub.counts().await.1, 0);
    // The refused requests did not spend the code: it still pairs, at the longest lengths.
    let mut longest = good.clone();
    longest["engine"] = json!("e".repeat(40));
    longest["model"] = json!("a.b_c:d+e/f-9".repeat(7)[..80].to_owned());
    let (status, body) = hub.call("POST", "/pair", None, &longest.to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_mints_ten_codes_a_utc_day() {
    let hub = hub();
    for _ in 0..10 {
        hub.mint("person-1", "Miso").await;
    }
    let random = hub.lk.random.clone();
    let refused =
        kd_linkdbots::mint_pairing_code(&hub.store, random.as_ref(), "person-1", "Miso").await;
    assert_eq!(refused.unwrap_err().status(), StatusCode::TOO_MANY_REQUESTS);
    // Another person is not charged; the next UTC day renews.
    hub.mint("person-2", "Other").await;
    hub.clock
        .set_ms(kd_linkdbots::budget::next_midnight_ms(common::NOW_MS));
    hub.mint("person-1", "Miso").await;
    for bad in ["", "   ", &"x".repeat(61), "tab\there"] {
        let refused =
            kd_linkdbots::mint_pairing_code(&hub.store, random.as_ref(), "person-1", bad).await;
        assert_eq!(
            refused.unwrap_err().status(),
            StatusCode::BAD_REQUEST,
            "{bad:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_keyed_route_answers_401_without_a_live_key() {
    let hub = hub();
    let card = common::body(&common::card());
    for key in [None, Some("lkb_agent_nope"), Some("")] {
        let (status, body) = hub.call("POST", "/cards", key, &card).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{key:?}");
        assert_eq!(body["error"]["code"], "unauthorized");
        let (status, _) = hub.call("GET", "/budget", key, "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, _) = hub.call("GET", "/feed", Some("lkb_agent_nope"), "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(hub.counts().await, (0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn names_and_texts_refuse_invisible_and_direction_changing_characters() {
    let hub = hub();
    let random = hub.lk.random.clone();
    for bad in ["evil\u{202e}gnp.exe", "\u{200b}\u{200b}", "Mi\u{2066}so"] {
        let refused =
            kd_linkdbots::mint_pairing_code(&hub.store, random.as_ref(), "person-1", bad).await;
        let error = refused.unwrap_err();
        assert_eq!(error.status(), StatusCode::BAD_REQUEST, "{bad:?}");
        assert!(error.to_string().contains("invisible"), "{error}");
    }
    let (_, key) = hub.agent("person-1", "Miso").await;
    let before = hub.social_counts().await.0;
    for body in [
        json!({ "bio": "a\u{202e}b" }),
        json!({ "bio": "zero\u{200b}width" }),
        json!({ "skills": ["rust\u{feff}"] }),
    ] {
        let (status, answer) = hub
            .call("POST", "/agents/me/profile", Some(&key), &body.to_string())
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
    }
    assert_eq!(hub.social_counts().await.0, before, "nothing proposed");
    // Emoji sequences (a joiner, a variation selector) are text, not hidden marks.
    let (status, answer) = hub
        .call(
            "POST",
            "/agents/me/profile",
            Some(&key),
            &json!({ "bio": "Reviews diffs \u{1f469}\u{200d}\u{1f4bb} \u{2764}\u{fe0f}" })
                .to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let (status, answer) = hub
        .call(
            "POST",
            "/agents/register",
            None,
            &json!({ "name": "\u{200b}", "engine": "e", "model": "m", "host": "h" }).to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
}
