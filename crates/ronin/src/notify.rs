//! Mail to a key (Ronin section 8 "Email"): `POST /api/v1/me/notify` puts an address on file
//! for the calling key's lineage, and from then on every task event that names the lineage
//! queues one plain-text mail in the hub's outbox ([`kd_core::outbox`], DECISIONS 7).
//!
//! The request is NIP-98 (`Authorization: Nostr ...`, method `POST`, the `u` tag the exact
//! URL) with the `payload` tag over the body (section 6b), so a captured header cannot set
//! another address. The body is `{"email": "you@example.com"}` (trimmed and lowercased:
//! [`kd_core::people::normalize_email`]); `{"email": ""}` clears it. The answer is
//! `{"ok": true, "notify": true|false}`; the address is never served by any door, not even
//! back to its key. Setting it is not a signed event: nothing goes into the log.
//!
//! Which events mail: OFFER, ACCEPT, DELIVER, COMPLETE, RATING, PAID and RECEIVED whose `p`
//! tag names a key of the lineage (the counterparty the event is addressed to; the signer is
//! never mailed about its own event). The mail is queued in the batch's writer transaction
//! ([`queue_mail`]), so a refused event mails nothing. It carries the task id, the kind, the
//! signer's public key, what the recipient may sign next (the templates' `why`) and the
//! command that fetches the task with those templates; no secret, no event content.

use axum::extract::State;
use axum::http::{Extensions, StatusCode};
use axum::response::{IntoResponse, Response};
use kd_core::db::Connection;
use kd_core::outbox::{self, Mail};
use kd_core::store::StoreError;
use kd_protocol::nostr::Event;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::events::task;
use crate::nip98::Nip98Post;
use crate::store::{self, Task};
use crate::{Refusal, Ronin, answer};

/// The kinds that mail the key their `p` tag names, with their names.
pub const MAILED_KINDS: [(u16, &str); 7] = [
    (task::OFFER, "OFFER"),
    (task::ACCEPT, "ACCEPT"),
    (task::DELIVER, "DELIVER"),
    (task::COMPLETE, "COMPLETE"),
    (task::RATING, "RATING"),
    (task::PAID, "PAID"),
    (task::RECEIVED, "RECEIVED"),
];

/// Reads the body: `Some(address)` to set, `None` to clear.
fn requested_email(body: &[u8]) -> Result<Option<String>, Refusal> {
    let text = std::str::from_utf8(body).map_err(|_| Refusal::invalid("the body is not UTF-8"))?;
    // Read strictly, as event content is: a repeated key is refused, never read as its last.
    let canonical = kd_protocol::canonical::canonical_text(text)
        .map_err(|error| Refusal::invalid(format!("the body is not JSON ({error})")))?;
    let value: Value = serde_json::from_str(&canonical)
        .map_err(|error| Refusal::invalid(format!("the body is not JSON ({error})")))?;
    let fields = value
        .as_object()
        .filter(|fields| fields.len() == 1)
        .ok_or_else(|| Refusal::invalid("the body must be {\"email\": \"...\"}"))?;
    let email = fields
        .get("email")
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::invalid("email must be a string (\"\" clears it)"))?;
    if email.is_empty() {
        return Ok(None);
    }
    kd_core::people::normalize_email(email)
        .map(Some)
        .ok_or_else(|| Refusal::invalid("email is not an address like you@example.com"))
}

/// `POST /api/v1/me/notify` (see the module doc). Refusals, all before anything is stored:
/// `unauthorized:` 401 (auth, or an auth event used before), `invalid:` 400 (the body or the
/// address), `rate-limited:` 429 (a write of the key), `restricted:` 403 (a retired or
/// revoked key).
pub async fn set_notify(
    State(ronin): State<Ronin>,
    extensions: Extensions,
    Nip98Post {
        event: auth, body, ..
    }: Nip98Post,
) -> Response {
    let answered = async {
        let email = requested_email(&body)?;
        crate::charge_writes(&ronin, &[auth.pubkey.as_str()], &extensions)
            .await
            .map_err(Stop::Answer)?;
        let now_ms = ronin.clock.now_ms();
        let set = email.is_some();
        let written = ronin
            .store
            .write(move |txn| {
                let conn = txn.conn();
                crate::events::may_write(conn, &auth.pubkey)?;
                if !store::take_auth(conn, &auth.id, now_ms, crate::me::AUTH_KEEP_MS)
                    .map_err(Refusal::server)?
                {
                    return Err(Refusal::unauthorized("this auth event was used already"));
                }
                let keys = store::lineage(conn, &auth.pubkey).map_err(Refusal::server)?;
                store::set_email(conn, &keys, &auth.pubkey, email.as_deref(), now_ms)
                    .map_err(Refusal::server)
            })
            .await
            .map_err(Refusal::server)?;
        written?;
        Ok::<_, Stop>(set)
    };
    match answered.await {
        Ok(set) => answer(StatusCode::OK, &json!({ "ok": true, "notify": set })),
        Err(Stop::Refused(refusal)) => refusal.into_response(),
        Err(Stop::Answer(response)) => response,
    }
}

/// Why [`set_notify`] stopped: a refusal, or an answer made already (the rate limit's).
enum Stop {
    Refused(Refusal),
    Answer(Response),
}

impl From<Refusal> for Stop {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

/// Queues the mail an accepted task event sends (in its writer transaction): to the address on
/// file for the lineage its `p` tag names, when the kind is one of [`MAILED_KINDS`]. Its links
/// start with `ronin_url`, Ronin's base URL ([`crate::Ronin::base_url`]).
///
/// # Errors
/// The store's error (the batch is then refused whole).
pub(crate) fn queue_mail(
    conn: &Connection,
    event: &Event,
    task: &Task,
    ronin_url: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    let Some((_, kind_name)) = MAILED_KINDS.iter().find(|(kind, _)| *kind == event.kind) else {
        return Ok(());
    };
    let Some(named) = event.tag_value("p") else {
        return Ok(());
    };
    let recipient = store::head(conn, named)?;
    if store::same_lineage(conn, &recipient, &event.pubkey)? {
        return Ok(());
    }
    let keys = store::lineage(conn, &recipient)?;
    let Some(to_email) = store::lineage_email(conn, &keys)? else {
        return Ok(());
    };
    let next = crate::tasks::templates(conn, task, &recipient)?;
    let digest = Sha256::new()
        .chain_update(b"ronin-notify:")
        .chain_update(event.id.as_bytes())
        .finalize();
    let mail = Mail {
        mail_id: format!("kdm_{}", hex::encode(&digest[..12])),
        to_email,
        subject: format!(
            "Ronin: {kind_name} on task {}",
            &task.id[..12.min(task.id.len())]
        ),
        body: mail_body(kind_name, event, task, &recipient, &next, ronin_url),
        created_ms: now_ms,
        sent_ms: None,
    };
    outbox::queue(conn, &mail)
}

/// The plain text of a mail: the task, what happened, what to sign next and the command.
fn mail_body(
    kind_name: &str,
    event: &Event,
    task: &Task,
    recipient: &str,
    next: &[Value],
    ronin_url: &str,
) -> String {
    // "An OFFER", "An ACCEPT", "A DELIVER".
    let article = if kind_name.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "An"
    } else {
        "A"
    };
    let mut text = format!(
        "{article} {kind_name} on a Ronin task names your key.\n\n\
         Task:      {}\nStatus:    {}\nSigned by: {}\nYour key:  {recipient}\n\n",
        task.id, task.status, event.pubkey
    );
    if next.is_empty() {
        text.push_str("Nothing for you to sign on this task now.\n");
    } else {
        text.push_str("What you may sign next:\n");
        for template in next {
            text.push_str(&format!(
                "- kind {}: {}\n",
                template["kind"],
                template["why"].as_str().unwrap_or_default()
            ));
        }
    }
    text.push_str(&format!(
        "\nNext command (the task with your ready-to-sign templates):\n\
         curl -s '{ronin_url}/api/v1/tasks/{}?as={recipient}'\n\n\
         Or let the reference client wait for your work: node ronin.mjs work\n\n\
         Stop these mails: POST {{\"email\":\"\"}} to {ronin_url}/api/v1/me/notify (signed).\n\
         Ronin never asks for your secret key.\n",
        task.id,
    ));
    text
}
