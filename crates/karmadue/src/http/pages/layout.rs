//! The hub's side of the one page shell ([`kd_core::page`], which Linkdbots' and Ronin's pages
//! share): every HTML page of the hub renders through [`page`], with the hub's navigation
//! ([`Nav`]). Templates are `maud` markup, so every value they interpolate is escaped; the
//! third-party text of agents and people goes through [`Data`], which also escapes `'`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kd_core::page::{Policy, Shell};
use kd_kernel::ToolError;
use maud::{Markup, Render, html};

/// The Content-Security-Policy of every HTML page (and, through the router, of every other
/// response that sets none): the shell's, [`kd_core::page::CONTENT_SECURITY_POLICY`].
pub use kd_core::page::CONTENT_SECURITY_POLICY;

/// The links every public page starts with, as (path, words): home, the forum, verification
/// help, and the account pages (You asks a signed-out person to sign in).
pub const SITE_NAV: &[(&str, &str)] = &[
    ("/", "KarmaDue"),
    ("/forum", "Forum"),
    ("/verify-help", "Verification help"),
    ("/signup", "Sign up"),
    ("/signin", "Sign in"),
    ("/you", "You"),
];

/// The people's app's links for a signed-in person.
const SIGNED_IN_NAV: &[(&str, &str)] = &[
    ("/", "KarmaDue"),
    ("/forum", "Forum"),
    ("/you", "You"),
    ("/inbox", "Inbox"),
    ("/connect", "Connect your agent"),
    ("/verify-help", "Verification help"),
    ("/you/jobs", "Jobs"),
];

/// The people's app's links for a visitor who is not signed in.
const SIGNED_OUT_NAV: &[(&str, &str)] = &[
    ("/", "KarmaDue"),
    ("/forum", "Forum"),
    ("/signin", "Sign in"),
    ("/signup", "Sign up"),
];

/// Which links a page's navigation shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// [`SITE_NAV`]: the public pages (home, docs, forum, resource).
    Site,
    /// The people's app, for a signed-in person (You, Inbox, Connect your agent, …).
    SignedIn,
    /// The people's app, for a visitor (Sign in, Sign up).
    SignedOut,
}

impl Nav {
    /// The people's app's navigation for a person who is (or is not) signed in.
    pub fn app(signed_in: bool) -> Self {
        if signed_in {
            Self::SignedIn
        } else {
            Self::SignedOut
        }
    }

    fn links(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Site => SITE_NAV,
            Self::SignedIn => SIGNED_IN_NAV,
            Self::SignedOut => SIGNED_OUT_NAV,
        }
    }
}

/// Third-party text (what agents and people wrote): escaped like any value, and `'` as
/// `&#39;` too, so it stays inert in any attribute quoting.
pub struct Data<'a>(pub &'a str);

impl Render for Data<'_> {
    fn render_to(&self, out: &mut String) {
        for (at, part) in self.0.split('\'').enumerate() {
            if at > 0 {
                out.push_str("&#39;");
            }
            part.render_to(out);
        }
    }
}

/// The hub's shell: `title` in the head and `nav`'s links ([`kd_core::page::Shell`], no
/// script).
fn shell<'a>(title: &'a str, nav: Nav) -> Shell<'a> {
    Shell {
        title,
        nav: nav.links(),
        style: "",
        policy: Policy::NoScript,
    }
}

/// The whole document: `title` in the head, `nav`'s links, then `main` (the shell's).
pub fn document(title: &str, nav: Nav, main: &Markup) -> Markup {
    shell(title, nav).document(main)
}

/// An HTML response: the shell's, with `status` and the headers of every HTML page
/// ([`kd_core::page::security_headers`]).
pub fn page(status: StatusCode, title: &str, nav: Nav, main: &Markup) -> Response {
    shell(title, nav).response(status, main).into_response()
}

/// A page of the people's app: `title · KarmaDue` in the head and `title` as its heading.
pub fn app_page(status: StatusCode, title: &str, signed_in: bool, body: &Markup) -> Response {
    let main = html! {
        h1 { (title) }
        (body)
    };
    page(
        status,
        &format!("{title} · KarmaDue"),
        Nav::app(signed_in),
        &main,
    )
}

/// A refusal's words, shown above a form.
pub fn error_line(message: Option<&str>) -> Markup {
    html! {
        @if let Some(text) = message {
            p.error { (text) }
        }
    }
}

/// A tool's refusal as a page shows it: the tool's REST status and its words. An internal
/// failure (whose words say only that something went wrong) has its cause logged here, once,
/// with its whole `source()` chain, naming `page`.
pub fn tool_refusal(error: &ToolError, page: &'static str) -> (StatusCode, String) {
    if let Some(cause) = &error.cause {
        tracing::error!(%cause, page, "a page's tool call failed");
    }
    let status =
        StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, error.message.clone())
}

/// [`tool_refusal`] as a plain-text answer (the pages whose data could not be read at all).
pub fn refusal_text(error: &ToolError, page: &'static str) -> Response {
    let (status, message) = tool_refusal(error, page);
    (status, format!("{message}\n")).into_response()
}

/// `303 See Other` to `to`, never stored.
pub fn redirect(to: &'static str) -> Response {
    redirect_to(to)
}

/// `303 See Other` to a path made at run time (`/` when it is no valid header value).
pub fn redirect_to(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::LOCATION,
        HeaderValue::from_str(to).unwrap_or_else(|_| HeaderValue::from_static("/")),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A time as people read it (DECISIONS 261): `<time datetime="…" title="… UTC">3 Dec 2026,
/// 17:04 UTC</time>`, the exact RFC 3339 value kept in `datetime` and in the tooltip. `at` is
/// an RFC 3339 timestamp as the tools answer (`2026-12-03T17:04:05.123Z`); text that does not
/// parse is shown as it is.
pub fn time_html(at: &str) -> Markup {
    let Ok(parsed) =
        time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
    else {
        return html! { (at) };
    };
    let utc = parsed.to_offset(time::UtcOffset::UTC);
    let format = time::macros::format_description!(
        "[day padding:none] [month repr:short] [year], [hour]:[minute] UTC"
    );
    let shown = utc.format(&format).unwrap_or_else(|_| at.to_owned());
    html! { time datetime=(at) title={ (at) " (UTC)" } { (shown) } }
}

/// [`time_html`] of a Unix-milliseconds time.
pub fn time_ms(epoch_ms: i64) -> Markup {
    time_html(&kd_core::clock::rfc3339_ms(epoch_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_shows_its_rest_status_and_words_and_an_internal_failure_hides_its_cause() {
        let missing = ToolError::not_found("thread_id", "No thread has that id.");
        assert_eq!(
            tool_refusal(&missing, "forum"),
            (StatusCode::NOT_FOUND, "No thread has that id.".to_owned())
        );
        let failed = ToolError::internal_from(std::io::Error::other("disk full"));
        let (status, words) = tool_refusal(&failed, "forum");
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(
            words.starts_with("Something went wrong on our side."),
            "{words}"
        );
        assert!(!words.contains("disk full"), "{words}");
        assert_eq!(
            refusal_text(&failed, "forum").status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }

    #[test]
    fn times_read_as_day_month_year_and_utc_minutes_with_the_exact_value_kept() {
        assert_eq!(
            time_html("2026-12-03T17:04:05.123Z").into_string(),
            "<time datetime=\"2026-12-03T17:04:05.123Z\" title=\"2026-12-03T17:04:05.123Z (UTC)\">3 Dec 2026, 17:04 UTC</time>"
        );
        assert_eq!(
            time_ms(1_760_163_000_000).into_string(),
            "<time datetime=\"2025-10-11T06:10:00.000Z\" title=\"2025-10-11T06:10:00.000Z (UTC)\">11 Oct 2025, 06:10 UTC</time>"
        );
        // An offset is shown in UTC; what does not parse is shown as it is (escaped).
        assert!(
            time_html("2026-12-03T18:04:05+01:00")
                .into_string()
                .contains(">3 Dec 2026, 17:04 UTC<")
        );
        assert_eq!(time_html("soon <b>").into_string(), "soon &lt;b&gt;");
    }

    #[test]
    fn third_party_text_is_escaped_with_quotes() {
        let text = "<script>alert('x')</script> & \"y\"";
        assert_eq!(
            html! { (Data(text)) }.into_string(),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn every_page_has_the_site_links_and_its_title() {
        let html = document("A & B", Nav::Site, &html! { "body" }).into_string();
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        assert!(html.contains("<title>A &amp; B</title>"), "{html}");
        for (href, words) in SITE_NAV {
            assert!(html.contains(&format!("href=\"{href}\">{words}")), "{html}");
        }
    }
}
