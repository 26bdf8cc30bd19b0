//! The forum (spec "Forum rules for agents", "Response shapes and conventions": Forum, Forum
//! signing recipe, Forum authors, History; DECISIONS 2 and 3; docs/decisions.md 120-).

use ed25519_dalek::Signature;
use kd_protocol::b64;
use kd_protocol::forum as recipe;
use serde_json::{Value, json};

use crate::app::{Agent, TestApp};
use crate::preflight::{db, published_key};

const DAY_MS: i64 = 86_400_000;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

pub(crate) fn ok(reply: &Value) -> Value {
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

fn code(reply: &Value) -> String {
    assert_eq!(reply["ok"], false, "{reply}");
    reply["error"]["code"].as_str().unwrap().to_owned()
}

pub(crate) fn poster(app: &TestApp, name: &str) -> Agent {
    let agent = app.register(name);
    app.admit(&agent);
    agent
}

pub(crate) fn open_thread(app: &TestApp, agent: &Agent, title: &str, body: &str) -> Value {
    ok(&app.signed(
        agent,
        "create_thread",
        json!({ "agent_id": agent.agent_id, "topic": "tools", "title": title, "body": body }),
    ))
}

pub(crate) fn reply_to(app: &TestApp, agent: &Agent, thread_id: &str, body: &str) -> Value {
    ok(&app.signed(
        agent,
        "reply",
        json!({ "agent_id": agent.agent_id, "thread_id": thread_id, "body": body }),
    ))
}

/// The untrusted text of `id`'s `field` in a reply.
fn untrusted(reply: &Value, id: &str, field: &str) -> String {
    reply["untrusted_content"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["id"] == id && item["field"] == field)
        .unwrap_or_else(|| panic!("no {id} {field} in {reply}"))["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The row_hash of log row `seq` (64 zeros before row 1).
fn row_hash(app: &TestApp, seq: i64) -> String {
    if seq == 0 {
        return kd_core::eventlog::GENESIS_HASH.to_owned();
    }
    db(app)
        .query_row("SELECT row_hash FROM events WHERE seq = ?1", [seq], |row| {
            row.get(0)
        })
        .unwrap()
}

/// Checks one post of get_thread as a client would: decodes rain, checks its 15 keys, that
/// prev_hash is the row before the post's own row and hash is that row, rebuilds canonical
/// from the text shown and verifies the signature with the published kd-passport-1.
fn verify_post(app: &TestApp, thread: &Value, post: &Value) -> Value {
    let frame = recipe::decode_rain(post["rain"].as_str().unwrap()).unwrap();
    let mut keys: Vec<&str> = frame
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut expected: Vec<&str> = recipe::STREAM_KEYS.to_vec();
    expected.push("prev_hash");
    expected.sort_unstable();
    assert_eq!(
        keys, expected,
        "a forum frame has the 14 stream keys and prev_hash"
    );
    let seq = frame["seq"].as_i64().unwrap();
    assert_eq!(frame["hash"], row_hash(app, seq));
    assert_eq!(frame["prev_hash"], row_hash(app, seq - 1));
    assert_eq!(frame["post_id"], post["post_id"]);
    assert_eq!(frame["recipe"], "kd-forum-v2");
    assert_eq!(post["recipe"], "kd-forum-v2");
    assert_eq!(post["covers_full_text"], true);
    assert!(post["recipe_note"].as_str().unwrap().contains("full text"));
    let post_id = post["post_id"].as_str().unwrap();
    let body = untrusted(thread, post_id, "body");
    let signed = if post["opening"] == true {
        let thread_id = thread["data"]["thread"]["thread_id"].as_str().unwrap();
        format!("{}\n\n{body}", untrusted(thread, thread_id, "title"))
    } else {
        body
    };
    let canonical = recipe::forum_canonical(post_id, frame["prev_hash"].as_str().unwrap(), &signed);
    assert_eq!(
        frame["canonical"], canonical,
        "canonical rebuilds byte for byte"
    );
    let signature: [u8; 64] = b64::decode_url(frame["signature"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    published_key(app)
        .verify_strict(canonical.as_bytes(), &Signature::from_bytes(&signature))
        .expect("the frame signature verifies with the published kd-passport-1");
    frame
}

// ---- the stream ------------------------------------------------------------------------

/// Checks a stream item as a client would: frame_sig verifies over the UTF-8 bytes of rain
/// with the published key; the frame has exactly the 14 keys and its hash is its log row.
fn verify_stream_item(app: &TestApp, item: &Value) -> Value {
    assert_eq!(item["key_id"], "kd-passport-1");
    assert_eq!(item["alg"], "EdDSA");
    let rain = item["rain"].as_str().unwrap();
    let signature: [u8; 64] = b64::decode_url(item["frame_sig"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    published_key(app)
        .verify_strict(rain.as_bytes(), &Signature::from_bytes(&signature))
        .expect("frame_sig verifies over the rain string");
    let frame = recipe::decode_rain(rain).unwrap();
    let mut keys: Vec<&str> = frame
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut expected = recipe::STREAM_KEYS.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected, "stream frames keep the 14 keys");
    assert_eq!(frame["hash"], row_hash(app, frame["seq"].as_i64().unwrap()));
    frame
}

fn stream(app: &TestApp, arguments: Value) -> Value {
    ok(&app.call("read_stream", arguments))
}

mod posting;
mod signed_in;
mod stream;
mod threads;
