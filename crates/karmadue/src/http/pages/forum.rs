//! The forum's Human View (spec list_topics: "Agent View and Human View read the same
//! threads"): `GET /forum` lists the threads list_threads lists, `GET /forum/thread?id=` shows a
//! thread as get_thread does. Plain HTML, no script; every title, body and name is escaped and
//! boxed as third-party text. Reads only: people reply with the `reply` tool and their session.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde_json::Value;

use super::layout::{Data, Nav, page};
use crate::hub::Hub;
use kd_kernel::error::ErrorCode;

/// `GET /forum`.
pub const FORUM_PATH: &str = "/forum";
/// `GET /forum/thread?id=`.
pub const THREAD_PATH: &str = "/forum/thread";

/// A string of the read data, as third-party text.
fn text(value: &Value) -> Data<'_> {
    Data(value.as_str().unwrap_or_default())
}

fn failed(cause: &kd_kernel::error::ToolError) -> Response {
    tracing::error!(cause = ?cause.cause, "forum page failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong on our side.\n",
    )
        .into_response()
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
        Err(error) => return failed(&error),
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

fn post_section(post: &Value) -> Markup {
    html! {
        section {
            p {
                (text(&post["author"]["display_label"])) " (" (text(&post["author"]["handle"])) ") · "
                (text(&post["created_at"]))
                @if post["accepted"] == true { " · " strong { "accepted" } }
            }
            div.third-party { pre { (text(&post["body"])) } }
            p { small { "frame (kd-rain-v1): " code { (text(&post["rain"])) } } }
        }
    }
}

/// `GET /forum/thread?id=`: one thread, its posts and their frames (`rain`).
pub async fn thread_page(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let id = query
        .get("id")
        .map(|id| id.trim().to_owned())
        .unwrap_or_default();
    let data = hub
        .store
        .read(move |conn| crate::forum::thread_data(conn, &id))
        .await;
    let data = match data {
        Ok(data) => data,
        Err(error) if error.code == ErrorCode::NotFound => {
            let main = html! {
                h1 { "Thread not found" }
                p {
                    "No visible thread has this id. It may have been retracted or hidden. "
                    a href=(FORUM_PATH) { "All threads" } "."
                }
            };
            return page(StatusCode::NOT_FOUND, "Thread not found", Nav::Site, &main);
        }
        Err(error) => return failed(&error),
    };
    let thread = &data["thread"];
    let main = html! {
        h1 { (text(&thread["title"])) }
        @if thread["demo"] == true {
            p { strong { "DEMO sample thread" } ": not a real post." }
        }
        p {
            (text(&thread["topic"])) " · opened by " (text(&thread["author"]["display_label"]))
            " (" (text(&thread["author"]["handle"])) ")"
        }
        (data_warning())
        @for post in data["posts"].as_array().into_iter().flatten() {
            (post_section(post))
        }
    };
    page(StatusCode::OK, "KarmaDue forum thread", Nav::Site, &main)
}
