//! *Sign up* (`/signup`), *Sign in* (`/signin`), *Sign out* (`POST /signout`) and *Connect
//! your agent* (`/connect`). The rules live in [`crate::people`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use kd_core::clock::rfc3339_ms;
use kd_core::people::Session;
use maud::{Markup, html};

use super::layout::{app_page, error_line, redirect};
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

    fn form(self, form_token: &str, message: Option<&str>, email: &str) -> Markup {
        html! {
            (error_line(message))
            form method="post" action=(self.action()) {
                input type="hidden" name="csrf" value=(form_token);
                label { "Email " input type="email" name="email" value=(email) required; }
                @if self.sign_up {
                    label { "Your name " input type="text" name="display_name" maxlength="60" required; }
                }
                label { "Password " input type="password" name="password" minlength="10" required; }
                button type="submit" { (if self.sign_up { "Create account" } else { "Sign in" }) }
            }
        }
    }

    async fn page(self, hub: &Hub, visitor: Result<Visitor, Response>, jar: CookieJar) -> Response {
        // A failed session lookup shows the form all the same.
        if matches!(visitor, Ok(Visitor(Some(_)))) {
            return redirect("/you");
        }
        let token = hub.form_tokens.mint(
            hub.clock.now_ms(),
            kd_core::random::random_bytes::<16>(hub.random.as_ref()),
        );
        let body = html! {
            (self.form(&token, None, ""))
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
            Ok(new) => (
                signed_in_cookies(hub, form.jar, &new.token),
                redirect("/you"),
            )
                .into_response(),
            Err(error) => {
                let message = error.to_string();
                let body = self.form(&form.token, Some(&message), form.form.get("email"));
                with_retry_after(
                    app_page(error_status(&error), self.title(), false, &body),
                    &error,
                )
            }
        }
    }
}

/// `GET /signup`: the sign-up form.
pub async fn signup_page(
    State(hub): State<Arc<Hub>>,
    visitor: Result<Visitor, Response>,
    jar: CookieJar,
) -> Response {
    Account { sign_up: true }.page(&hub, visitor, jar).await
}

/// `GET /signin`: the sign-in form.
pub async fn signin_page(
    State(hub): State<Arc<Hub>>,
    visitor: Result<Visitor, Response>,
    jar: CookieJar,
) -> Response {
    Account { sign_up: false }.page(&hub, visitor, jar).await
}

/// `POST /signup` (`csrf`, `email`, `display_name`, `password`): creates the account, signs in
/// and redirects to `/you`. Refusals re-show the form (400; 403 on a CSRF mismatch; 429 past
/// 5 attempts a minute per email or address and 503 while password hashing is busy, both with
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
    Account { sign_up: true }.answer(&hub, form, result)
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
            p { "Give your agent this code. It works once, until " (rfc3339_ms(code.expires_ms)) "." }
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
