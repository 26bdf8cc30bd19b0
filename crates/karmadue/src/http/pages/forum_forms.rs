//! The forum's forms for a signed-in person (issue 16): `POST /forum/reply`, `/forum/report`
//! and `/forum/confirm`. Each is a [`SignedInForm`] (the session's form token checked first)
//! that calls the forum's own tool (`reply`, `report_post`, `mark_accepted` with
//! `confirm: true`) through the kernel's pipeline as the signed-in person, exactly as
//! `Authorization: Bearer <session>` would over REST: the same checks, limits and events, no
//! SQL here. Success is a 303 back to the thread at the post; a refusal re-shows the thread
//! with the tool's words and its REST status, and nothing is written (the tools refuse before
//! they write).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use kd_kernel::registry::Tool;
use kd_kernel::{RequestAuth, Transport};
use serde_json::{Value, json};

use super::forum::{Refusal, THREAD_PATH, render_thread};
use super::layout::{redirect_to, tool_refusal};
use super::session::SignedInForm;
use crate::http::observe::RequestId;
use crate::hub::Hub;

/// One form's call: the request a forum form came with, read by the extractor (the request id,
/// the peer's address, the headers, then the signed-in form itself; a missing session or a
/// form token mismatch answers before any handler runs).
pub struct FormCall {
    hub: Arc<Hub>,
    headers: HeaderMap,
    peer: SocketAddr,
    request_id: String,
    form: SignedInForm,
}

impl FromRequest<Arc<Hub>> for FormCall {
    type Rejection = Response;

    async fn from_request(request: Request, hub: &Arc<Hub>) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let Ok(RequestId(request_id)) = RequestId::from_request_parts(&mut parts, hub).await;
        let ConnectInfo(peer) = ConnectInfo::<SocketAddr>::from_request_parts(&mut parts, hub)
            .await
            .map_err(IntoResponse::into_response)?;
        let headers = parts.headers.clone();
        let form = SignedInForm::from_request(Request::from_parts(parts, body), hub).await?;
        Ok(Self {
            hub: hub.clone(),
            headers,
            peer,
            request_id,
            form,
        })
    }
}

impl FormCall {
    /// A trimmed field of the form.
    fn field(&self, name: &str) -> String {
        self.form.form.get(name).trim().to_owned()
    }

    /// Calls `tool` with `arguments` as the form's person; 303 to the thread (at the new or
    /// acted-on post) on success, the thread page with the refusal otherwise.
    async fn run(self, tool: &'static Tool, arguments: Value) -> Response {
        let SignedInForm { signed, form } = self.form;
        let thread_id = form.get("thread_id").trim().to_owned();
        let auth = RequestAuth {
            ip: crate::http::request_auth(&self.headers, Some(self.peer)).ip,
            bearer: Some(kd_core::config::Secret::new(signed.token.clone())),
            ..RequestAuth::default()
        };
        let called = self
            .hub
            .kernel
            .call(
                tool,
                Some(&arguments.to_string()),
                auth,
                self.request_id,
                Transport::Page,
            )
            .await;
        match called.outcome {
            Ok(answer) => {
                let thread = answer.data["thread_id"].as_str().unwrap_or(&thread_id);
                let post = answer.data["post_id"].as_str().unwrap_or_default();
                // The tool's own ids (`kdt_`/`kdp_` and hex): nothing to encode.
                redirect_to(&format!("{THREAD_PATH}?id={thread}#{post}"))
            }
            Err(error) => {
                let (status, message) = tool_refusal(&error, "forum");
                let refusal = Refusal {
                    status,
                    message,
                    body: if tool.name == crate::forum::write::REPLY.name {
                        form.get("body").to_owned()
                    } else {
                        String::new()
                    },
                };
                render_thread(&self.hub, thread_id, Some(&signed), Some(refusal)).await
            }
        }
    }
}

/// `POST /forum/reply` (`csrf`, `thread_id`, `body`): the `reply` tool as the signed-in
/// person. 303 to the thread at the new post; refusals (an empty or long body, a thread gone)
/// re-show the thread with the words, the typed text kept; 403 on a form token mismatch; 303
/// to `/signin` when no one is signed in.
pub async fn reply(call: FormCall) -> Response {
    let arguments = json!({
        "thread_id": call.field("thread_id"),
        "body": call.form.form.get("body"),
    });
    call.run(&crate::forum::write::REPLY, arguments).await
}

/// `POST /forum/report` (`csrf`, `thread_id`, `post_id`, `reason`): `report_post` as the
/// signed-in person (the post is hidden and a human verifier job queued). Refusals as
/// [`reply`].
pub async fn report(call: FormCall) -> Response {
    let arguments = json!({
        "post_id": call.field("post_id"),
        "reason": call.form.form.get("reason"),
    });
    call.run(&crate::forum::write::REPORT_POST, arguments).await
}

/// `POST /forum/confirm` (`csrf`, `thread_id`, `post_id`): `mark_accepted` with `confirm:
/// true` as the signed-in person, a peer confirmation of an accepted answer (same-owner and
/// own-reply confirmations are refused by the tool). Refusals as [`reply`].
pub async fn confirm(call: FormCall) -> Response {
    let arguments = json!({ "post_id": call.field("post_id"), "confirm": true });
    call.run(&crate::forum::write::MARK_ACCEPTED, arguments)
        .await
}
