//! The task chain's rules that need the store (Ronin "Kinds" and "Rules that refuse you"),
//! run inside the writer's transaction before anything of the event is written: what each
//! event must reference, who may sign it, which key its `p` tag must name, and one of each
//! per task. Each rule returns the task as it will be; [`super::apply`] writes it.
//!
//! Roles come from the listing: on a service or skill listing the offer's author is the buyer
//! and the owner the agent; on a wanted listing the reverse. A role is held by a lineage: the
//! key that held it at offer time, or the key that succeeded it (only a lineage's head signs).

use kd_core::db::Connection;
use kd_protocol::nostr::Event;

use super::invalid;
use super::task::{
    ACCEPT, COMPLETE, DELIVER, Detail, OFFER, Offer, PAID, RATING, RECEIVED, Step, article,
};
use crate::Refusal;
use crate::store::{self, ListingRow, Task};

fn db<T>(result: kd_core::db::Result<T>) -> Result<T, Refusal> {
    result.map_err(Refusal::server)
}

fn restricted(message: impl Into<String>) -> Refusal {
    Refusal::restricted(message)
}

fn duplicate(message: impl Into<String>) -> Refusal {
    Refusal::duplicate(message)
}

/// Whether `signer` holds the role held by `role_key` (it is that lineage's head).
fn acts_as(conn: &Connection, signer: &str, role_key: &str) -> Result<bool, Refusal> {
    Ok(signer == db(store::head(conn, role_key))?)
}

/// A new task for an OFFER: the listing is live, the `p` tag names its owner's head key, the
/// author is not the owner and has a profile; accepted at once when it meets the terms.
pub(super) fn offer(
    conn: &Connection,
    event: &Event,
    offer: &Offer,
    now_ms: i64,
) -> Result<Task, Refusal> {
    let no_listing = || invalid("the a tag of an OFFER must name a live listing");
    let listing = db(store::listing(conn, &offer.owner, &offer.d))?
        .filter(|listing| listing.available)
        .ok_or_else(no_listing)?;
    let owner_head = db(store::head(conn, &offer.owner))?;
    if db(store::key_status(conn, &owner_head))?.as_deref() == Some("revoked") {
        return Err(no_listing());
    }
    if offer.p != owner_head {
        return Err(invalid(
            "an OFFER must name the listing owner's current (head) key in its p tag",
        ));
    }
    if db(store::head(conn, &event.pubkey))? == owner_head {
        return Err(restricted("you cannot hire yourself"));
    }
    if !db(store::lineage_has_profile(conn, &event.pubkey))? {
        return Err(invalid("publish a PROFILE (kind 0) before an OFFER"));
    }
    let (agent, buyer) = if listing.kind == "wanted" {
        (event.pubkey.clone(), owner_head)
    } else {
        (owner_head, event.pubkey.clone())
    };
    let open = db(store::open_tasks(conn, &offer.owner, &offer.d))?;
    let by_terms = meets_terms(&listing, offer, open);
    Ok(Task {
        id: event.id.clone(),
        listing_owner: offer.owner.clone(),
        listing_d: offer.d.clone(),
        listing_id: listing.event_id.clone(),
        kind: listing.kind.clone(),
        hirer: event.pubkey.clone(),
        agent,
        buyer,
        scope: offer.scope.clone(),
        price: offer.price.clone(),
        currency: offer.currency.clone(),
        deadline: offer.deadline,
        scope_scan: offer.scan.clone(),
        status: if by_terms { "accepted" } else { "offered" }.to_owned(),
        by_terms,
        accept_id: None,
        deliver_id: None,
        deliver: None,
        deliver_scan: None,
        complete_id: None,
        completed_by: None,
        rating_id: None,
        rating: None,
        paid_id: None,
        paid_amount: None,
        paid_currency: None,
        paid_to: None,
        received_id: None,
        settlement: "unpaid".to_owned(),
        created_ms: now_ms,
        updated_ms: now_ms,
    })
}

/// Whether the offer meets the listing's `terms` (section 4): `auto_accept` on a service or
/// skill listing, a clean scope, the price at least `min_price`, the same currency, the scope
/// within `max_scope_chars`, and fewer than `max_open` of the listing's tasks accepted or
/// delivered.
fn meets_terms(listing: &ListingRow, offer: &Offer, open: i64) -> bool {
    let terms = &listing.content["terms"];
    if listing.kind == "wanted" || terms["auto_accept"] != true || !offer.clean {
        return false;
    }
    let min_price = terms["min_price"].as_f64().unwrap_or(0.0);
    let currency = terms["currency"]
        .as_str()
        .is_none_or(|currency| currency.eq_ignore_ascii_case(&offer.currency));
    let scope_fits = terms["max_scope_chars"]
        .as_u64()
        .is_none_or(|max| u64::try_from(offer.scope.chars().count()).unwrap_or(u64::MAX) <= max);
    let room = terms["max_open"]
        .as_u64()
        .is_none_or(|max| u64::try_from(open).unwrap_or(0) < max);
    offer.price_value >= min_price && currency && scope_fits && room
}

/// The task a later event joins, as it will be after it: the `e` tag names the right event,
/// the signer holds the right role, the `p` tag names the counterparty, and the link does
/// not exist yet.
pub(super) fn step(
    conn: &Connection,
    event: &Event,
    step: &Step,
    now_ms: i64,
) -> Result<Task, Refusal> {
    let what = match step.kind {
        ACCEPT => "the OFFER",
        DELIVER => "the ACCEPT, or the OFFER when accepted by terms",
        COMPLETE => "the DELIVER",
        RATING | PAID => "the COMPLETE",
        _ => "the PAID",
    };
    let wrong_reference = || {
        invalid(format!(
            "the e tag of {} must name {what}",
            article(step.kind)
        ))
    };
    let (task_id, referenced) =
        db(store::task_of_event(conn, &step.e))?.ok_or_else(wrong_reference)?;
    let mut task = db(store::task(conn, &task_id))?
        .ok_or_else(|| Refusal::server(format!("task {task_id} of a linked event is missing")))?;
    let expected = match step.kind {
        ACCEPT => OFFER,
        DELIVER if task.by_terms => OFFER,
        DELIVER => ACCEPT,
        COMPLETE => DELIVER,
        RATING | PAID => COMPLETE,
        _ => PAID,
    };
    if referenced != expected {
        if step.kind == DELIVER && referenced == OFFER && task.status == "offered" {
            return Err(invalid("this OFFER is not accepted yet"));
        }
        return Err(wrong_reference());
    }
    let (role_key, role, counterparty, whom) = roles(&task, step.kind);
    if !acts_as(conn, &event.pubkey, &role_key)? {
        return Err(restricted(format!(
            "only {role} signs {}",
            article(step.kind)
        )));
    }
    if !db(store::same_lineage(conn, &step.p, &counterparty))? {
        return Err(invalid(format!(
            "the p tag of {} must name {whom}",
            article(step.kind)
        )));
    }
    advance(&mut task, event, step)?;
    task.updated_ms = now_ms;
    Ok(task)
}

/// Who signs `kind` on this task (the key holding the role, and its name), and whom its `p`
/// tag names (the key, and its name).
fn roles(task: &Task, kind: u16) -> (String, &'static str, String, &'static str) {
    let owner = if task.kind == "wanted" {
        &task.buyer
    } else {
        &task.agent
    };
    let completer = task.completed_by.clone().unwrap_or_default();
    match kind {
        ACCEPT => (
            owner.clone(),
            "the listing owner",
            task.hirer.clone(),
            "the offer's author",
        ),
        DELIVER => (
            task.agent.clone(),
            "the agent on the task",
            task.buyer.clone(),
            "the buyer",
        ),
        COMPLETE => (
            task.buyer.clone(),
            "the buyer on the task",
            task.agent.clone(),
            "the agent",
        ),
        RATING | PAID => (
            completer,
            "the buyer who completed",
            task.agent.clone(),
            "the agent",
        ),
        _ => (
            task.paid_to.clone().unwrap_or_default(),
            "the agent named in the PAID",
            task.buyer.clone(),
            "the buyer",
        ),
    }
}

/// Applies the step to the task: `duplicate` when its link exists already.
fn advance(task: &mut Task, event: &Event, step: &Step) -> Result<(), Refusal> {
    let id = Some(event.id.clone());
    match (step.kind, &step.detail) {
        (ACCEPT, _) if task.status != "offered" => Err(duplicate("this OFFER is accepted already")),
        (ACCEPT, _) => {
            task.status = "accepted".to_owned();
            task.accept_id = id;
            Ok(())
        }
        (DELIVER, _) if task.deliver_id.is_some() => {
            Err(duplicate("this task is delivered already"))
        }
        (DELIVER, Detail::Deliver { content, scan }) => {
            if task.kind == "skill"
                && (content.get("hash").is_none() || content.get("url").is_none())
            {
                return Err(invalid("a skill is delivered as hash plus url"));
            }
            task.status = "delivered".to_owned();
            task.deliver_id = id;
            task.deliver = Some(content.clone());
            task.deliver_scan = Some(scan.clone());
            Ok(())
        }
        (COMPLETE, _) if task.complete_id.is_some() => {
            Err(duplicate("this task is completed already"))
        }
        (COMPLETE, _) => {
            task.status = "completed".to_owned();
            task.complete_id = id;
            task.completed_by = Some(event.pubkey.clone());
            Ok(())
        }
        (RATING, _) if task.rating_id.is_some() => Err(duplicate("this task is rated already")),
        (RATING, Detail::Rating(rating)) => {
            task.rating_id = id;
            task.rating = Some(*rating);
            Ok(())
        }
        (PAID, _) if task.paid_id.is_some() => Err(duplicate("this task is paid already")),
        (PAID, Detail::Money { amount, currency }) => {
            task.paid_id = id;
            task.paid_amount = Some(amount.clone());
            task.paid_currency = Some(currency.clone());
            task.paid_to = Some(step.p.clone());
            task.settlement = "paid".to_owned();
            Ok(())
        }
        (RECEIVED, _) if task.received_id.is_some() => {
            Err(duplicate("this PAID is received already"))
        }
        (RECEIVED, Detail::Money { amount, currency }) => {
            let same_amount = task
                .paid_amount
                .as_deref()
                .is_some_and(|paid| same_decimal(paid, amount));
            let same_currency = task
                .paid_currency
                .as_deref()
                .is_some_and(|paid| paid.eq_ignore_ascii_case(currency));
            task.received_id = id;
            task.settlement = if same_amount && same_currency {
                "received"
            } else {
                "mismatch"
            }
            .to_owned();
            Ok(())
        }
        _ => Err(Refusal::server("a task step without its detail")),
    }
}

/// Two decimal strings of one value (`"2.5"` and `"2.50"`).
fn same_decimal(a: &str, b: &str) -> bool {
    fn normal(text: &str) -> (String, String) {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let whole = whole.trim_start_matches('0');
        (whole.to_owned(), fraction.trim_end_matches('0').to_owned())
    }
    normal(a) == normal(b)
}
