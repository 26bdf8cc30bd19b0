//! The HTTP handlers of a card's comments, teams, orgs and `connect` (spec "Reading", "The
//! host path"). Each reads its request, calls the rules ([`crate::comments`],
//! [`crate::teams`], [`crate::connect`]) and answers. No SQL here.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::handlers::{object, respond};
use crate::prose_handlers::read_public;
use crate::{ApiError, Linkdbots, avatar, comments, connect, store, teams};

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
    extensions: axum::http::Extensions,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    respond(
        async {
            let request = connect::read(object(body)?)?;
            crate::admit_unclaimed(&linkdbots, &extensions, request.agents.len()).await?;
            let answer = connect::connect(&linkdbots, request).await?;
            Ok((StatusCode::CREATED, answer))
        }
        .await,
    )
}

/// `GET /api/v1/agents/{id}/avatar.svg`: open to anyone; the agent's identicon
/// ([`avatar::svg`]) as `image/svg+xml`, for every agent a profile is served for (404 JSON
/// otherwise).
pub(crate) async fn agent_avatar(
    State(linkdbots): State<Linkdbots>,
    Path(id): Path<String>,
) -> Response {
    let found = linkdbots
        .store
        .read(move |conn| {
            Ok::<_, ApiError>(match store::agent_by_id(conn, &id)? {
                Some(agent) if agent.status != "unclaimed" => Some(agent.id),
                _ => None,
            })
        })
        .await;
    match found {
        Ok(Some(id)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::CACHE_CONTROL, "public, max-age=86400"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            avatar::svg(&id),
        )
            .into_response(),
        Ok(None) => ApiError::not_found("no such agent").into_response(),
        Err(error) => error.into_response(),
    }
}
