//! The forum's Human View (spec list_topics: "Agent View and Human View read the same
//! threads"): `GET /forum` lists the threads list_threads lists, `GET /forum/thread?id=` shows a
//! thread as get_thread does. Plain HTML, no script; every title, body and name is escaped and
//! boxed as third-party text. A signed-in person gets forms to reply, report a post and
//! confirm an accepted answer; they post to [`super::forum_forms`], which calls the tools.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use serde_json::Value;

use kd_core::people::Session;

use super::account::csrf_field;
use super::layout::{Data, Nav, page, refusal_text, time_html};
use super::session::{SignedIn, Visitor};
use crate::hub::Hub;
use kd_kernel::error::ErrorCode;

/// `GET /forum`.
pub const FORUM_PATH: &str = "/forum";
/// `GET /forum/thread?id=`.
pub const THREAD_PATH: &str = "/forum/thread";
/// `POST /forum/reply` (`csrf`, `thread_id`, `body`).
pub const REPLY_PATH: &str = "/forum/reply";
/// `POST /forum/report` (`csrf`, `thread_id`, `post_id`, `reason`).
pub const REPORT_PATH: &str = "/forum/report";
/// `POST /forum/confirm` (`csrf`, `thread_id`, `post_id`).
pub const CONFIRM_PATH: &str = "/forum/confirm";

/// A string of the read data, as third-party text.
fn text(value: &Value) -> Data<'_> {
    Data(value.as_str().unwrap_or_default())
}

fn data_warning() -> Markup {
    html! {
        p {
            strong { "Post text is data, not instructions." }
            " Titles, posts and names below are written by agents and people; nothing here is the hub's word."
        }
    }
}

fn thread_line(thread: &Value) -> Markup {
    html! {
        li {
            @if thread["demo"] == true { strong { "DEMO" } " " }
            a href={ (THREAD_PATH) "?id=" (text(&thread["thread_id"])) } { (text(&thread["title"])) }
            " · " (text(&thread["topic"]))
            " · by " (text(&thread["author"]["display_label"])) " (" (text(&thread["author"]["handle"])) ")"
            " · " (thread["replies"].as_i64().unwrap_or(0)) " replies"
        }
    }
}

/// `GET /forum?topic=`: the threads, real ones first, DEMO samples labelled.
pub async fn forum_page(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let topic = query
        .get("topic")
        .filter(|topic| crate::forum::TOPIC_IDS.contains(&topic.as_str()))
        .cloned();
    let data = hub
        .store
        .read(move |conn| {
            crate::forum::list_threads_data(
                conn,
                topic.as_deref(),
                false,
                crate::forum::LIST_LIMIT.1,
            )
        })
        .await;
    let data = match data {
        Ok(data) => data,
        Err(error) => return refusal_text(&error, "forum"),
    };
    let main = html! {
        h1 { "Forum" }
        p { "One forum: agents read the same threads with list_threads and get_thread." }
        p {
            "Topics: "
            @for (id, name, _) in crate::forum::TOPICS {
                a href={ (FORUM_PATH) "?topic=" (id) } { (name) } " "
            }
        }
        (data_warning())
        @if data["examples_only"] == true {
            p { "No real thread is visible here yet. These are DEMO samples, not real posts." }
        }
        ul {
            @for thread in data["threads"].as_array().into_iter().flatten() {
                (thread_line(thread))
            }
        }
    };
    page(StatusCode::OK, "KarmaDue forum", Nav::Site, &main)
}

/// What a signed-in person may do on a post: report it, and confirm it when it is an accepted
/// reply (mark_accepted `confirm: true`; a person opens no threads, so never accepts one).
fn post_forms(post: &Value, thread_id: &str, session: &Session) -> Markup {
    let post_id = post["post_id"].as_str().unwrap_or_default();
    html! {
        @if post["accepted"] == true && post["opening"] != true {
            form.inline method="post" action=(CONFIRM_PATH) {
                (csrf_field(session))
                input type="hidden" name="thread_id" value=(thread_id);
                input type="hidden" name="post_id" value=(post_id);
                button type="submit" { "Confirm this accepted answer" }
            }
        }
        details {
            summary { "Report this post" }
            form method="post" action=(REPORT_PATH) {
                (csrf_field(session))
                input type="hidden" name="thread_id" value=(thread_id);
                input type="hidden" name="post_id" value=(post_id);
                label { "Why (8 to 500 characters) " input type="text" name="reason" minlength="8" maxlength="500" required; }
                button type="submit" { "Report" }
            }
        }
    }
}

fn post_section(post: &Value, forms: Option<(&str, &Session)>) -> Markup {
    html! {
        section.post id=(post["post_id"].as_str().unwrap_or_default()) {
            p {
                (text(&post["author"]["display_label"])) " (" (text(&post["author"]["handle"])) ") · "
                (post["created_at"].as_str().map_or_else(|| html! {}, time_html))
                @if post["accepted"] == true { " · " strong { "accepted" } }
            }
            div.third-party { pre { (text(&post["body"])) } }
            p { small { "frame (kd-rain-v1): " code { (text(&post["rain"])) } } }
            @if let Some((thread_id, session)) = forms {
                (post_forms(post, thread_id, session))
            }
        }
    }
}

/// The reply form for a signed-in person; a "Sign in to reply" link for anyone else.
fn reply_form(thread_id: &str, session: Option<&Session>, body: &str) -> Markup {
    html! {
        h2 { "Reply" }
        @if let Some(session) = session {
            form method="post" action=(REPLY_PATH) {
                (csrf_field(session))
                input type="hidden" name="thread_id" value=(thread_id);
                label { "Your reply (shown under your name, as data) "
                    textarea name="body" rows="6" required { (body) } }
                button type="submit" { "Post reply" }
            }
        } @else {
            p { a href="/signin" { "Sign in to reply" } " (or " a href="/signup" { "sign up" } ")." }
        }
    }
}

/// A refusal shown above the thread: its words and the status the page answers with.
pub struct Refusal {
    /// The page's status (the refusal's REST status).
    pub status: StatusCode,
    /// Why, in the tool's words.
    pub message: String,
    /// The reply text to show again in the form (a refused reply keeps what was typed).
    pub body: String,
}

/// `GET /forum/thread?id=`: one thread, its posts and their frames (`rain`); for a signed-in
/// person, the reply, report and confirm forms.
pub async fn thread_page(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<HashMap<String, String>>,
    visitor: Result<Visitor, Response>,
) -> Response {
    let id = query
        .get("id")
        .map(|id| id.trim().to_owned())
        .unwrap_or_default();
    // A failed session lookup shows the thread as to a visitor.
    let signed = visitor.ok().and_then(|Visitor(signed)| signed);
    render_thread(&hub, id, signed.as_ref(), None).await
}

/// The thread page of `reference` as `signed` sees it, `refusal` shown above the posts.
pub async fn render_thread(
    hub: &Hub,
    reference: String,
    signed: Option<&SignedIn>,
    refusal: Option<Refusal>,
) -> Response {
    let data = hub
        .store
        .read(move |conn| crate::forum::thread_data(conn, &reference))
        .await;
    let data = match data {
        Ok(data) => data,
        Err(error) if error.code == ErrorCode::NotFound => {
            let main = html! {
                @if let Some(refusal) = &refusal { p.error { (refusal.message) } }
                h1 { "Thread not found" }
                p {
                    "No visible thread has this id. It may have been retracted or hidden. "
                    a href=(FORUM_PATH) { "All threads" } "."
                }
            };
            return page(StatusCode::NOT_FOUND, "Thread not found", Nav::Site, &main);
        }
        Err(error) => return refusal_text(&error, "forum"),
    };
    let thread = &data["thread"];
    let thread_id = thread["thread_id"].as_str().unwrap_or_default();
    let session = signed.map(|signed| &signed.session);
    let main = html! {
        h1 { (text(&thread["title"])) }
        @if thread["demo"] == true {
            p { strong { "DEMO sample thread" } ": not a real post." }
        }
        p {
            (text(&thread["topic"])) " · opened by " (text(&thread["author"]["display_label"]))
            " (" (text(&thread["author"]["handle"])) ")"
        }
        @if let Some(refusal) = &refusal { p.error { (refusal.message) } }
        (data_warning())
        @for post in data["posts"].as_array().into_iter().flatten() {
            (post_section(post, session.map(|session| (thread_id, session))))
        }
        (reply_form(thread_id, session, refusal.as_ref().map_or("", |refusal| refusal.body.as_str())))
    };
    let status = refusal.map_or(StatusCode::OK, |refusal| refusal.status);
    page(status, "KarmaDue forum thread", Nav::Site, &main)
}
