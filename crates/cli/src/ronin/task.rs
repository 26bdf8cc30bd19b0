//! The task commands of `karmadue ronin`: waiting and reading (`work`, `me`), and the steps
//! of a task, each signed from the template the hub hands out for it (sections 3, 5 and 6).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::client::{Hub, Key, load_key, write_private};

/// `paid` and `received`: the task, and what changed hands when it differs from the template.
#[derive(Debug, clap::Args)]
pub struct Settlement {
    /// The task (its OFFER id).
    task: String,
    /// The amount, as a decimal string (default: the task's price, or what PAID said).
    #[arg(long)]
    amount: Option<String>,
    /// The currency (default: the task's).
    #[arg(long)]
    currency: Option<String>,
    /// A PAID receipt: 64 hex digits.
    #[arg(long)]
    receipt: Option<String>,
}

/// A step signed from its template.
pub enum Step {
    /// ACCEPT (the listing's owner; on a WANTED listing, the buyer).
    Accept,
    /// COMPLETE.
    Complete,
    /// RATING with its stars and text.
    Rate {
        /// 1 to 5.
        stars: u8,
        /// Optional text.
        text: Option<String>,
    },
}

const ACCEPT: u64 = 1101;
const DELIVER: u64 = 1102;
const COMPLETE: u64 = 1103;
const RATING: u64 = 1104;
const PAID: u64 = 1105;
const RECEIVED: u64 = 1106;

/// The template of `kind` the hub offers `key` on `task`.
fn template(hub: &Hub, key: &Key, task: &str, kind: u64) -> anyhow::Result<Value> {
    if task.is_empty() || !task.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("a task is its OFFER's id, 64 hex digits");
    }
    let view = hub.get(&format!("/tasks/{task}?as={}", key.pubkey))?.ok()?;
    view["next"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|template| template["kind"] == kind)
        .cloned()
        .with_context(|| {
            format!(
                "nothing of kind {kind} for you to sign on task {task} now (status {})",
                view["task"]["status"]
            )
        })
}

/// Replaces the value of the tag `name` in a template.
fn set_tag(template: &mut Value, name: &str, value: &str) {
    for tag in template["tags"].as_array_mut().into_iter().flatten() {
        if tag[0] == name {
            tag[1] = json!(value);
        }
    }
}

/// `deliver`: the DELIVER template with `{note?, hash?, url?}` (a file is uploaded first).
pub fn deliver(
    hub: &Hub,
    home: &Path,
    task: &str,
    note: Option<String>,
    file: Option<PathBuf>,
    content_type: Option<&str>,
) -> anyhow::Result<Value> {
    let key = load_key(home)?;
    let mut template = template(hub, &key, task, DELIVER)?;
    let mut content = json!({});
    if let Some(note) = note {
        content["note"] = json!(note);
    }
    if let Some(path) = file {
        let uploaded = hub.upload(&key, &path, content_type)?;
        content["hash"] = uploaded["hash"].clone();
        content["url"] =
            serde_json::json!(hub.absolute(uploaded["url"].as_str().unwrap_or_default()));
    }
    template["content"] = json!(content.to_string());
    hub.post_events(&[key.sign_template(&template)?], false)?
        .ok()
}

/// `accept`, `complete` and `rate`.
pub fn step(hub: &Hub, home: &Path, task: &str, step: Step) -> anyhow::Result<Value> {
    let key = load_key(home)?;
    let template = match step {
        Step::Accept => template(hub, &key, task, ACCEPT)?,
        Step::Complete => template(hub, &key, task, COMPLETE)?,
        Step::Rate { stars, text } => {
            if !(1..=5).contains(&stars) {
                bail!("a rating is 1 to 5");
            }
            let mut template = template(hub, &key, task, RATING)?;
            set_tag(&mut template, "rating", &stars.to_string());
            template["content"] = json!(text.unwrap_or_default());
            template
        }
    };
    hub.post_events(&[key.sign_template(&template)?], false)?
        .ok()
}

/// `paid` (the buyer) and `received` (the agent).
pub fn settle(hub: &Hub, home: &Path, settlement: Settlement, paid: bool) -> anyhow::Result<Value> {
    let key = load_key(home)?;
    let kind = if paid { PAID } else { RECEIVED };
    let mut template = template(hub, &key, &settlement.task, kind)?;
    if let Some(amount) = &settlement.amount {
        set_tag(&mut template, "amount", amount);
    }
    if let Some(currency) = &settlement.currency {
        set_tag(&mut template, "currency", currency);
    }
    if let Some(receipt) = settlement.receipt {
        if !paid {
            bail!("a receipt goes on PAID");
        }
        template["content"] = json!(json!({ "receipt": receipt }).to_string());
    }
    hub.post_events(&[key.sign_template(&template)?], false)?
        .ok()
}

fn cursor_file(home: &Path) -> PathBuf {
    home.join("cursor.json")
}

fn kept_cursor(home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(cursor_file(home)).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value["cursor"].as_str().map(str::to_owned)
}

fn keep_cursor(home: &Path, answer: &Value) -> anyhow::Result<()> {
    if let Some(cursor) = answer["cursor"].as_str() {
        write_private(&cursor_file(home), &json!({ "cursor": cursor }))?;
    }
    Ok(())
}

/// `since=<cursor>` with every byte but the unreserved ones percent-encoded (the NIP-98 `u`
/// tag names the exact URL, so it is built here once).
fn since(cursor: Option<&str>) -> String {
    cursor.map_or_else(String::new, |cursor| {
        let mut query = String::from("since=");
        for byte in cursor.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                query.push(char::from(byte));
            } else {
                query.push_str(&format!("%{byte:02X}"));
            }
        }
        query
    })
}

/// `me`: what is new, from `--since` or the kept cursor; the cursor is kept.
pub fn me(hub: &Hub, home: &Path, cursor: Option<String>) -> anyhow::Result<Value> {
    let key = load_key(home)?;
    let cursor = cursor.or_else(|| kept_cursor(home));
    let answer = hub
        .get_signed(&key, &format!("/me?{}", since(cursor.as_deref())))?
        .ok()?;
    keep_cursor(home, &answer)?;
    Ok(answer)
}

/// `work`: loops on `me/wait`, printing each task of every answer as one JSON line (the `me`
/// task with its `next`); with `once`, returns after one answer, empty or not (as the served
/// clients do, docs/decisions.md 372). Prints itself: the answer is `null`.
pub fn work(hub: &Hub, home: &Path, once: bool, timeout: u8) -> anyhow::Result<Value> {
    let key = load_key(home)?;
    loop {
        let cursor = kept_cursor(home);
        let mut query = since(cursor.as_deref());
        if !query.is_empty() {
            query.push('&');
        }
        let answer = hub
            .get_signed(&key, &format!("/me/wait?{query}timeout={timeout}"))?
            .ok()?;
        keep_cursor(home, &answer)?;
        for task in answer["new"]["tasks"].as_array().into_iter().flatten() {
            println!("{task}");
        }
        if once {
            return Ok(Value::Null);
        }
    }
}

/// `rotate`: a fresh key signs the proof, the old key publishes the SUCCESSOR, and only once
/// the hub took it does key.json hold the new key (the old one is kept as
/// `retired-<old pubkey>.json`, as the served clients keep it).
pub fn rotate(hub: &Hub, home: &Path) -> anyhow::Result<Value> {
    let old = load_key(home)?;
    let new = Key::generate();
    let pending = home.join("key.next.json");
    write_private(&pending, &serde_json::to_value(&new)?)?;
    let successor = old.sign(
        1107,
        vec![
            vec!["p".into(), new.pubkey.clone()],
            vec!["proof".into(), new.proof_for(&old.pubkey)?],
        ],
        String::new(),
    )?;
    let mut answer = hub.post_events(&[successor], false)?.ok()?;
    write_private(
        &home.join(format!("retired-{}.json", old.pubkey)),
        &serde_json::to_value(&old)?,
    )?;
    std::fs::rename(&pending, home.join("key.json")).context("cannot keep the new key")?;
    answer["old"] = json!(old.pubkey);
    answer["pubkey"] = json!(new.pubkey);
    Ok(answer)
}
