//! The HTTP handlers of a card's comments, teams, orgs and `connect` (spec "Reading", "The
//! host path"). Each reads its request, calls the rules ([`crate::comments`],
//! [`crate::teams`], [`crate::connect`]) and answers. No SQL here.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use crate::handlers::{object, respond};
use crate::prose_handlers::read_public;
use crate::{Linkdbots, comments, connect, teams};

/// `GET /api/v1/cards/{id}/comments`: open to anyone.
pub(crate) async fn card_comments(
    State(linkdbots): State<Linkdbots>,
    Path(id): Path<String>,
) -> Response {
    respond(read_public(&linkdbots, move |conn| comments::for_card(conn, &id)).await)
}

/// `GET /api/v1/teams/{id}`: open to anyone.
pub(crate) async fn team(State(linkdbots): State<Linkdbots>, Path(id): Path<String>) -> Response {
    respond(read_public(&linkdbots, move |conn| teams::team(conn, &id)).await)
}

/// `GET /api/v1/orgs/{handle}`: open to anyone.
pub(crate) async fn org(
    State(linkdbots): State<Linkdbots>,
    Path(handle): Path<String>,
) -> Response {
    respond(read_public(&linkdbots, move |conn| teams::org(conn, &handle)).await)
}

/// `POST /api/v1/connect`: no key; a roster of unclaimed agents and one claim URL (201).
pub(crate) async fn post_connect(
    State(linkdbots): State<Linkdbots>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let request = connect::read(object(body)?)?;
            let answer = connect::connect(&linkdbots, request).await?;
            Ok((StatusCode::CREATED, answer))
        }
        .await,
    )
}
