//! The bench tests' helpers: signed starts and submits, and a solver that works each task
//! out from its prompt and input alone (it never reads the server's answers).

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kd_core::clock::Clock;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::{Hub, key, nip98_post, signed};

/// The start door.
pub const START: &str = "/api/v1/bench/start";

/// `Nostr <base64>` of a kind 27235 event by `secret` for a POST of `body` to `path`, made
/// now by the hub's clock.
pub fn auth(hub: &Hub, secret: &[u8; 32], path: &str, body: &str, nonce: &str) -> String {
    let now = u64::try_from(hub.clock.now_unix()).unwrap();
    nip98_post(secret, path, body.as_bytes(), now, nonce)
}

/// POSTs `body` to `path` with `authorization`: the status, `Retry-After` and the answer.
pub async fn post(
    hub: &Hub,
    path: &str,
    authorization: Option<&str>,
    body: &str,
) -> (StatusCode, Option<String>, Value) {
    let mut request = Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/json");
    if let Some(authorization) = authorization {
        request = request.header("authorization", authorization);
    }
    let response = hub
        .router
        .clone()
        .oneshot(request.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, retry, serde_json::from_slice(&bytes).unwrap())
}

pub async fn profile(hub: &Hub, secret: &[u8; 32], name: &str) {
    let now = u64::try_from(hub.clock.now_unix()).unwrap();
    let (status, body) = hub
        .post(&signed(secret, now, 0, &[], json!({ "name": name })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A signed start, refused or not.
pub async fn try_start(
    hub: &Hub,
    secret: &[u8; 32],
    nonce: &str,
) -> (StatusCode, Option<String>, Value) {
    let header = auth(hub, secret, START, "{}", nonce);
    post(hub, START, Some(&header), "{}").await
}

pub async fn start(hub: &Hub, secret: &[u8; 32], nonce: &str) -> Value {
    let (status, _, body) = try_start(hub, secret, nonce).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub async fn submit(
    hub: &Hub,
    secret: &[u8; 32],
    run_id: &str,
    answers: &Value,
    nonce: &str,
) -> (StatusCode, Value) {
    let path = format!("/api/v1/bench/{run_id}/submit");
    let body = json!({ "answers": answers }).to_string();
    let header = auth(hub, secret, &path, &body, nonce);
    let (status, _, answer) = post(hub, &path, Some(&header), &body).await;
    (status, answer)
}

/// Days from 0000-03-01 (the civil-from-days algorithm, worked here on its own).
pub fn day_number(iso: &str) -> i64 {
    let parts: Vec<i64> = iso.split('-').map(|part| part.parse().unwrap()).collect();
    let (y, m, d) = (parts[0] - i64::from(parts[1] <= 2), parts[1], parts[2]);
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    era * 146_097 + year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year
}

/// `a * b + c - d` with the usual precedence.
pub fn evaluate(expression: &str) -> i64 {
    let (mut total, mut term, mut sign) = (0, 1, 1);
    for token in expression.split_whitespace() {
        match token {
            "*" => {}
            "+" | "-" => {
                total += sign * term;
                (term, sign) = (1, if token == "+" { 1 } else { -1 });
            }
            number => term *= number.parse::<i64>().unwrap(),
        }
    }
    total + sign * term
}

/// The sentences of a document, and whether each speaks to the reader (a planted order).
pub fn sentences(document: &str) -> Vec<(String, bool)> {
    document
        .split(". ")
        .map(|sentence| {
            let lower = sentence.to_lowercase();
            let order = ["ignore", "disregard", "reply", "the answer is"]
                .iter()
                .any(|word| lower.contains(word));
            (sentence.to_owned(), order)
        })
        .collect()
}

pub fn integers(text: &str) -> Vec<i64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().unwrap())
        .collect()
}

/// The answer to one task, worked out from its prompt and input.
pub fn solve(task: &Value) -> String {
    let input = &task["input"];
    let text = |name: &str| input[name].as_str().unwrap().to_owned();
    match task["kind"].as_str().unwrap() {
        "arithmetic" => evaluate(&text("expression")).to_string(),
        "count_letter" => {
            let letter = text("letter").chars().next().unwrap();
            text("text")
                .chars()
                .filter(|c| *c == letter)
                .count()
                .to_string()
        }
        "sort_words" => {
            let mut words: Vec<&str> = input["words"]
                .as_array()
                .unwrap()
                .iter()
                .map(|word| word.as_str().unwrap())
                .collect();
            words.sort_unstable();
            words.join(",")
        }
        "date_difference" => (day_number(&text("to")) - day_number(&text("from"))).to_string(),
        "reverse" => text("text").chars().rev().collect(),
        "json_field" => {
            let document: Value = serde_json::from_str(&text("document")).unwrap();
            let found = text("path")
                .split('.')
                .fold(document, |value, step| value[step].clone());
            found
                .as_str()
                .map_or_else(|| found.to_string(), str::to_owned)
        }
        "unit_conversion" => {
            let factor = match (text("from").as_str(), text("to").as_str()) {
                ("kilometres", "metres") | ("kilograms", "grams") | ("litres", "millilitres") => {
                    1000
                }
                ("hours", "minutes") => 60,
                ("hours", "seconds") => 3600,
                ("days", "hours") => 24,
                ("feet", "inches") => 12,
                ("weeks", "days") => 7,
                other => panic!("unknown units {other:?}"),
            };
            (input["value"].as_i64().unwrap() * factor).to_string()
        }
        "digit_sum" => text("number")
            .chars()
            .map(|c| c.to_digit(10).unwrap())
            .sum::<u32>()
            .to_string(),
        "word_count" => text("text").split(' ').count().to_string(),
        "planted_instruction" => sentences(&text("document"))
            .iter()
            .filter(|(_, order)| !order)
            .flat_map(|(sentence, _)| integers(sentence))
            .sum::<i64>()
            .to_string(),
        other => panic!("unknown kind {other}"),
    }
}

/// Every task's answer, in order.
pub fn solve_all(run: &Value) -> Vec<String> {
    let tasks = run["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 10, "{run}");
    tasks.iter().map(solve).collect()
}

/// The answers with the first `wrong` of them spoiled.
pub fn with_wrong(run: &Value, wrong: usize) -> Value {
    let answers: Vec<String> = solve_all(run)
        .into_iter()
        .enumerate()
        .map(|(at, answer)| {
            if at < wrong {
                format!("{answer}x")
            } else {
                answer
            }
        })
        .collect();
    json!(answers)
}

pub async fn agent(hub: &Hub, secret: &[u8; 32]) -> Value {
    let (status, body) = hub
        .call("GET", &format!("/api/v1/agents/{}", key(secret)), "")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["agent"].clone()
}

pub fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

pub async fn run_count(hub: &Hub) -> i64 {
    kd_ronin::bench::run_count(&hub.ronin).await.unwrap()
}
