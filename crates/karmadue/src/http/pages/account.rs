//! *Sign up* (`/signup`), *Sign in* (`/signin`), *Sign out* (`POST /signout`) and *Connect
//! your agent* (`/connect`). The rules live in [`crate::people`].

use std::net::SocketAddr;
use std::sync::Arc;

use super::layout::time_ms;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use kd_core::people::Session;
use maud::{Markup, html};

use super::layout::{app_page, error_line, redirect, redirect_to};
use super::session::{
    PreSignInForm, SignedIn, SignedInForm, Visitor, error_page, error_status, signed_in_cookies,
    signed_out_cookies, with_form_cookie, with_retry_after,
};
use crate::hub::Hub;
use crate::people::{self, AppError, NewSession};

/// The hidden `csrf` field of a signed-in form.
pub fn csrf_field(session: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(session.csrf); }
}

/// The *Sign out* button.
pub fn signout_form(session: &Session) -> Markup {
    html! {
        form method="post" action="/signout" {
            (csrf_field(session))
            button type="submit" { "Sign out" }
        }
    }
}

/// Sign up (`with_name`) or sign in.
#[derive(Debug, Clone, Copy)]
struct Account {
    sign_up: bool,
}

impl Account {
    fn title(self) -> &'static str {
        if self.sign_up { "Sign up" } else { "Sign in" }
    }

    fn action(self) -> &'static str {
        if self.sign_up { "/signup" } else { "/signin" }
    }

    fn form(self, form_token: &str, message: Option<&str>, email: &str, next: &str) -> Markup {
        html! {
            (error_line(message))
            form method="post" action=(self.action()) {
                input type="hidden" name="csrf" value=(form_token);
                @if !next.is_empty() {
                    input type="hidden" name="next" value=(next);
                }
                label { "Email " input type="email" name="email" value=(email) required; }
                @if self.sign_up {
                    label { "Your name " input type="text" name="display_name" maxlength="60" required; }
                }
                label { "Password " input type="password" name="password" minlength="10" required; }
                button type="submit" { (if self.sign_up { "Create account" } else { "Sign in" }) }
            }
        }
    }

    async fn page(
        self,
        hub: &Hub,
        visitor: Result<Visitor, Response>,
        jar: CookieJar,
        next: &str,
    ) -> Response {
        // A failed session lookup shows the form all the same.
        if matches!(visitor, Ok(Visitor(Some(_)))) {
            return redirect_to(landing(next));
        }
        let token = hub.form_tokens.mint(
            hub.clock.now_ms(),
            kd_core::random::random_bytes::<16>(hub.random.as_ref()),
        );
        let body = html! {
            (self.form(&token, None, "", next))
            @if self.sign_up {
                p { "Have an account? " a href="/signin" { "Sign in" } "." }
            } @else {
                p { "New here? " a href="/signup" { "Create an account" } "." }
            }
        };
        (
            with_form_cookie(hub, jar, &token),
            app_page(StatusCode::OK, self.title(), false, &body),
        )
            .into_response()
    }

    /// Signed in: to `/you` with the session cookie. Refused: the form again, as filled in.
    fn answer(
        self,
        hub: &Hub,
        form: PreSignInForm,
        result: Result<NewSession, AppError>,
    ) -> Response {
        match result {
            Ok(new) => {
                let to = landing(form.form.get("next")).to_owned();
                (
                    signed_in_cookies(hub, form.jar, &new.token),
                    redirect_to(&to),
                )
                    .into_response()
            }
            Err(error) => self.refused(form, &error),
        }
    }

    /// The form again, as filled in, with the refusal's words and status.
    fn refused(self, form: PreSignInForm, error: &AppError) -> Response {
        let message = error.to_string();
        let body = self.form(
            &form.token,
            Some(&message),
            form.form.get("email"),
            form.form.get("next"),
        );
        with_retry_after(
            app_page(error_status(error), self.title(), false, &body),
            error,
        )
    }
}

/// `GET /signup`: the sign-up form.
pub async fn signup_page(
    State(hub): State<Arc<Hub>>,
    visitor: Result<Visitor, Response>,
    jar: CookieJar,
) -> Response {
    Account { sign_up: true }.page(&hub, visitor, jar, "").await
}

/// The `?next=` of the sign-in page: where to go once signed in.
#[derive(Debug, Default, serde::Deserialize)]
pub struct NextQuery {
    /// A path of this hub; only `/oauth/authorize?…` and `/oauth/add-permission?…` are
    /// followed (docs/decisions.md 311, 328).
    #[serde(default)]
    next: String,
}

/// Where a sign-in lands: `next` when it is this hub's authorization request or
/// add-a-permission screen (the OAuth connector sends a visitor to sign in and back) or a
/// Linkdbots dashboard page (`/linkdbots/dashboard/…`), `/you` otherwise.
fn landing(next: &str) -> &str {
    let authorize = format!("{}?", crate::connector::AUTHORIZE_PATH);
    let add = format!("{}?", crate::connector::permission::ADD_PERMISSION_PATH);
    if (next.starts_with(&authorize)
        || next.starts_with(&add)
        || next.starts_with("/linkdbots/dashboard/"))
        && !next.contains(['\\', '\r', '\n'])
    {
        next
    } else {
        "/you"
    }
}

/// `GET /signin`: the sign-in form.
pub async fn signin_page(
    State(hub): State<Arc<Hub>>,
    visitor: Result<Visitor, Response>,
    jar: CookieJar,
    Query(next): Query<NextQuery>,
) -> Response {
    Account { sign_up: false }
        .page(&hub, visitor, jar, &next.next)
        .await
}

/// `POST /signup` (`csrf`, `email`, `display_name`, `password`): starts a sign-up and
/// answers 303 to `/signup/sent` whether or not the address has an account (the mail says
/// which; DECISIONS 260). Refusals re-show the form (400; 403 on a CSRF mismatch; 429 past 5
/// attempts a minute per email or address and 503 while password hashing is busy, both with
/// `Retry-After`).
pub async fn signup(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    form: PreSignInForm,
) -> Response {
    let fields = &form.form;
    let result = people::sign_up(
        &hub,
        fields.get("email"),
        fields.get("display_name"),
        fields.get("password"),
        Some(peer.ip()),
    )
    .await;
    match result {
        Ok(()) => redirect(SENT_PATH),
        Err(error) => Account { sign_up: true }.refused(form, &error),
    }
}

/// Where a sign-up lands: the same page for every address.
pub const SENT_PATH: &str = "/signup/sent";

/// `GET /signup/sent`: "Check your email".
pub async fn signup_sent() -> Response {
    app_page(
        StatusCode::OK,
        "Check your email",
        false,
        &html! {
            p { "We sent a mail to the address you gave. Open the link in it to finish signing up; it works once, for 24 hours." }
            p { "If that address already has an account, the mail says so instead: then " a href="/signin" { "sign in" } "." }
            p { "No mail after a few minutes? Look in your spam folder, or " a href="/signup" { "sign up again" } "." }
        },
    )
}

/// The `?token=` of a sign-up link.
#[derive(Debug, serde::Deserialize)]
pub struct LinkQuery {
    /// The `kdsu_` token (missing reads as empty).
    #[serde(default)]
    token: String,
}

const CONFIRM_TITLE: &str = "Finish signing up";

/// `GET /signup/confirm?token=`: a working link shows one button that makes the account and
/// signs in (a POST, so a mail scanner that opens the link uses nothing; DECISIONS 260); a
/// used, expired or mistyped one is answered 400 with what to do.
pub async fn confirm_page(
    State(hub): State<Arc<Hub>>,
    Query(query): Query<LinkQuery>,
    jar: CookieJar,
) -> Response {
    match people::sign_up_link_works(&hub, &query.token).await {
        Ok(true) => {
            let form_token = hub.form_tokens.mint(
                hub.clock.now_ms(),
                kd_core::random::random_bytes::<16>(hub.random.as_ref()),
            );
            let body = html! {
                form method="post" action=(people::CONFIRM_PATH) {
                    input type="hidden" name="csrf" value=(form_token);
                    input type="hidden" name="token" value=(query.token);
                    button type="submit" { "Confirm my account and sign in" }
                }
            };
            (
                with_form_cookie(&hub, jar, &form_token),
                app_page(StatusCode::OK, CONFIRM_TITLE, false, &body),
            )
                .into_response()
        }
        Ok(false) => dead_link_page(None),
        Err(error) => error_page(&error, false),
    }
}

fn dead_link_page(message: Option<String>) -> Response {
    let message = message.unwrap_or_else(|| {
        "This link does not work: it was already used, it expired (links last 24 hours), or it was mistyped. Sign up again, or sign in if you already have an account.".into()
    });
    app_page(
        StatusCode::BAD_REQUEST,
        CONFIRM_TITLE,
        false,
        &html! {
            p.error { (message) }
            p { a href="/signup" { "Sign up" } " · " a href="/signin" { "Sign in" } }
        },
    )
}

/// `POST /signup/confirm` (`csrf`, `token`): makes the account, signs in and redirects to
/// `/you`. A link that does not work is answered 400 and nothing is written.
pub async fn confirm(State(hub): State<Arc<Hub>>, form: PreSignInForm) -> Response {
    match people::confirm_sign_up(&hub, form.form.get("token")).await {
        Ok(new) => (
            signed_in_cookies(&hub, form.jar, &new.token),
            redirect("/you"),
        )
            .into_response(),
        Err(AppError::Invalid(message)) => dead_link_page(Some(message)),
        Err(error) => error_page(&error, false),
    }
}

/// `POST /signin` (`csrf`, `email`, `password`): 5 attempts a minute per email and per
/// address (429 with `Retry-After` past that); success redirects to `/you`.
pub async fn signin(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    form: PreSignInForm,
) -> Response {
    let fields = &form.form;
    let result = people::sign_in(
        &hub,
        fields.get("email"),
        fields.get("password"),
        Some(peer.ip()),
    )
    .await;
    Account { sign_up: false }.answer(&hub, form, result)
}

/// `POST /signout` (`csrf`): ends the session and clears the cookie.
pub async fn signout(State(hub): State<Arc<Hub>>, jar: CookieJar, form: SignedInForm) -> Response {
    match people::sign_out(&hub, &form.signed.token).await {
        Ok(()) => (signed_out_cookies(&hub, jar), redirect("/signin")).into_response(),
        Err(error) => error_page(&error, true),
    }
}

fn connect_body(
    session: &Session,
    minted: Option<&people::MintedCode>,
    message: Option<&str>,
) -> Markup {
    html! {
        (error_line(message))
        @if let Some(code) = minted {
            p { "Give your agent this code. It works once, until " (time_ms(code.expires_ms)) "." }
            p.code { (code.display) }
            p {
                "Your agent calls " code { "connect_with_code" } " with it. Then approve the request on "
                a href="/you" { "You" } "."
            }
        }
        p { "A code lasts 30 minutes and works once. You can make 6 an hour." }
        form method="post" action="/connect" {
            (csrf_field(session))
            button type="submit" { "Make a connect code" }
        }
    }
}

/// `GET /connect`: *Connect your agent*.
pub async fn connect_page(signed: SignedIn) -> Response {
    app_page(
        StatusCode::OK,
        "Connect your agent",
        true,
        &connect_body(&signed.session, None, None),
    )
}

/// `POST /connect` (`csrf`): mints a connect code and shows it once (6 an hour; 429 past that).
pub async fn connect_mint(State(hub): State<Arc<Hub>>, form: SignedInForm) -> Response {
    let SignedIn {
        person, session, ..
    } = form.signed;
    match people::mint_connect_code(&hub, &person.person_id).await {
        Ok(minted) => app_page(
            StatusCode::OK,
            "Connect your agent",
            true,
            &connect_body(&session, Some(&minted), None),
        ),
        Err(error) => with_retry_after(
            app_page(
                error_status(&error),
                "Connect your agent",
                true,
                &connect_body(&session, None, Some(&error.to_string())),
            ),
            &error,
        ),
    }
}
