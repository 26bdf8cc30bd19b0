//! The one NIP-98 check of Ronin's signed routes, as axum extractors: a handler that takes
//! [`Nip98Get`] or [`Nip98Post`] runs only for a request whose `Authorization: Nostr <base64
//! event>` verifies ([`kd_protocol::nostr::verify_http_auth`]): a kind 27235 event whose `u`
//! tag is exactly the absolute URL called (the public URL of the listener serving Ronin, the
//! mount and the path, query included), whose `method` tag is the route's, with a `nonce`,
//! empty content, `created_at` within 60 s of the hub clock and, on a `POST`, a `payload` tag
//! that is the sha256 of the body (section 6b). Anything else is refused `unauthorized:` with
//! 401, naming the failed check.
//!
//! The extractors write nothing: the handler takes the auth event's id once
//! ([`crate::me::take_auth`], or `store::take_auth` in its own write) before it answers.

use std::marker::PhantomData;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, OriginalUri, Request};
use axum::http::header;
use axum::http::request::Parts;
use kd_protocol::nostr::{Event, HttpRequest, verify_http_auth};

use crate::{Refusal, Ronin};

/// A `GET` signed with NIP-98 (method `GET`, no `payload` tag): the verified auth event.
#[derive(Debug)]
pub struct Nip98Get(pub Event);

impl FromRequestParts<Ronin> for Nip98Get {
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, ronin: &Ronin) -> Result<Self, Refusal> {
        let signed = Signed::of(ronin, parts);
        signed.verify(ronin, "GET", b"", false).map(Self)
    }
}

/// A `POST` signed with NIP-98 over its body (method `POST`, the `payload` tag required): the
/// verified auth event and the body. The body is read first, and a body that cannot be read
/// is refused in `B`'s words ([`ReadBody`]) before the auth is checked.
#[derive(Debug)]
pub struct Nip98Post<B = ApiBody> {
    /// The verified auth event.
    pub event: Event,
    /// The request's body, whose sha256 the event's `payload` tag is.
    pub body: Bytes,
    words: PhantomData<B>,
}

impl<B: ReadBody> FromRequest<Ronin> for Nip98Post<B> {
    type Rejection = Refusal;

    async fn from_request(request: Request, ronin: &Ronin) -> Result<Self, Refusal> {
        let (parts, body) = request.into_parts();
        let signed = Signed::of(ronin, &parts);
        let body = B::read(Bytes::from_request(Request::from_parts(parts, body), ronin).await)?;
        let event = signed.verify(ronin, "POST", &body, true)?;
        Ok(Self {
            event,
            body,
            words: PhantomData,
        })
    }
}

/// How a signed route refuses a body it cannot read.
pub trait ReadBody: Send {
    /// The body, or the route's refusal.
    ///
    /// # Errors
    /// The refusal of a body over the route's limit or cut off.
    fn read(body: Result<Bytes, BytesRejection>) -> Result<Bytes, Refusal>;
}

/// The API's words for an unreadable body ([`crate::body_or_refusal`]).
#[derive(Debug)]
pub struct ApiBody;

impl ReadBody for ApiBody {
    fn read(body: Result<Bytes, BytesRejection>) -> Result<Bytes, Refusal> {
        crate::body_or_refusal(body)
    }
}

/// What the check reads of a request before its body: the URL as called and the header.
struct Signed {
    url: String,
    authorization: Option<String>,
}

impl Signed {
    /// The URL a request was called at, as the public sees it (the public URL of the listener
    /// serving Ronin, [`Ronin::origin`], then the path and query as called, the mount
    /// included), and its `Authorization`.
    fn of(ronin: &Ronin, parts: &Parts) -> Self {
        let uri = parts
            .extensions
            .get::<OriginalUri>()
            .map_or(&parts.uri, |original| &original.0);
        let path = uri
            .path_and_query()
            .map_or_else(|| uri.path(), |path| path.as_str());
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        Self {
            url: format!("{}{path}", ronin.origin().trim_end_matches('/')),
            authorization,
        }
    }

    /// Checks the auth against `method`, the clock, and the `payload` tag over `body` when
    /// `payload_required`.
    fn verify(
        &self,
        ronin: &Ronin,
        method: &str,
        body: &[u8],
        payload_required: bool,
    ) -> Result<Event, Refusal> {
        let authorization = self.authorization.as_deref().ok_or_else(|| {
            Refusal::unauthorized(
                "Authorization must be \"Nostr <base64 of a signed kind 27235 event>\"",
            )
        })?;
        let request = HttpRequest {
            url: &self.url,
            method,
            body,
            payload_required,
            now_s: u64::try_from(ronin.clock.now_unix()).unwrap_or(0),
        };
        verify_http_auth(authorization, &request)
            .map_err(|error| Refusal::unauthorized(error.to_string()))
    }
}
