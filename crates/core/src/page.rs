//! The one page shell of every HTML page the hub process serves: the hub's pages, Linkdbots'
//! leaderboards and Ronin's front page (docs/decisions.md 441). One head, one
//! Content-Security-Policy family ([`Policy`]), one stylesheet ([`STYLE`], which a service may
//! follow with a few rules of its own), one navigation (each service passes its links) and the
//! security headers of every HTML response ([`security_headers`]).
//!
//! It lives in kd-core, below the areas, so that kd-ronin and kd-linkdbots render through it
//! as the hub's server does (docs/architecture.md "Layers"). Templates are `maud` markup, so
//! every value they interpolate is escaped.

use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use maud::{DOCTYPE, Markup, PreEscaped, html};

/// The Content-Security-Policy of every page without a script (and, through the hub's router,
/// of every other response that sets none): no script, no frames, nothing loaded from
/// elsewhere; images only from this hub; forms post only here.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// [`CONTENT_SECURITY_POLICY`] for a page that runs its own script (Ronin's `#work`): scripts
/// and fetches from this hub only, never inline; the rest as the pages without a script.
pub const SCRIPT_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The stylesheet every page starts with; a service's own rules ([`Shell::style`]) follow it.
pub const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}\
code,pre{font:14px ui-monospace,monospace;background:#f4f4f2}pre{padding:.75rem;overflow-x:auto;white-space:pre-wrap}\
code{padding:0 .2rem;overflow-wrap:anywhere}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}\
h2{margin-top:2.2rem;border-top:1px solid #ddd;padding-top:1rem}nav a{margin-right:1rem}\
label{display:block;margin:.6rem 0}input[type=text],input[type=email],input[type=password]{display:block;width:100%;max-width:24rem;padding:.3rem}\
.error{color:#a40000}.done{color:#1b5e20}nav.dash{margin:.5rem 0 1rem}.code{font:700 2rem ui-monospace,monospace;letter-spacing:.2rem}form.inline{display:inline}\
.third-party{border-left:4px solid #d9a400;background:#fffbe6;padding:.4rem .75rem;margin:.5rem 0}\
.tp-label{font-size:13px;color:#6b5800;text-transform:uppercase;letter-spacing:.04em}\
.demo{background:#fde7e7;border:1px solid #c62828;padding:.5rem .75rem}dt{font-weight:600}dd{margin:0 0 .4rem 0}\
.post{min-width:0;overflow-wrap:anywhere}.post pre,.post code{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}";

/// Which Content-Security-Policy a page is served with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// [`CONTENT_SECURITY_POLICY`]: no script at all (every page but Ronin's).
    NoScript,
    /// [`SCRIPT_CONTENT_SECURITY_POLICY`]: scripts and fetches from this hub only.
    SelfScript,
}

impl Policy {
    /// The policy's header value.
    pub const fn header(self) -> &'static str {
        match self {
            Self::NoScript => CONTENT_SECURITY_POLICY,
            Self::SelfScript => SCRIPT_CONTENT_SECURITY_POLICY,
        }
    }
}

/// What one page passes the shell: its title, its service's links and rules, its policy.
#[derive(Debug, Clone, Copy)]
pub struct Shell<'a> {
    /// The document's `<title>`, whole (a service adds its own name).
    pub title: &'a str,
    /// The navigation's links, as (href, words), in order.
    pub nav: &'a [(&'a str, &'a str)],
    /// The service's own CSS rules, after [`STYLE`] (empty for none).
    pub style: &'a str,
    /// The page's Content-Security-Policy.
    pub policy: Policy,
}

impl Shell<'_> {
    /// The whole document: the head, the navigation, then `main`.
    pub fn document(&self, main: &Markup) -> Markup {
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (self.title) }
                    style { (PreEscaped(STYLE)) (PreEscaped(self.style)) }
                }
                body {
                    nav {
                        @for (href, words) in self.nav {
                            a href=(href) { (words) }
                        }
                    }
                    main { (main) }
                }
            }
        }
    }

    /// An HTML response: [`Shell::document`] with `status`, `text/html` and the
    /// [`security_headers`] of this page's [`Policy`].
    pub fn response(&self, status: StatusCode, main: &Markup) -> Response<String> {
        let mut response = Response::new(self.document(main).into_string());
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        security_headers(headers, self.policy);
        response
    }
}

/// The headers of every HTML page: `policy`'s Content-Security-Policy, never stored by a cache
/// (account pages carry a person's data and form tokens), never framed, no referrer sent.
pub fn security_headers(headers: &mut HeaderMap, policy: Policy) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy.header()),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAV: &[(&str, &str)] = &[("/", "Home"), ("/a?b=1&c=2", "A & B")];

    #[test]
    fn a_document_has_the_head_the_stylesheet_then_the_service_rules_and_its_links() {
        let shell = Shell {
            title: "T <1>",
            nav: NAV,
            style: ".mine{color:red}",
            policy: Policy::NoScript,
        };
        let html = shell.document(&html! { p { "body" } }).into_string();
        assert!(
            html.starts_with("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
        );
        assert!(html.contains("<title>T &lt;1&gt;</title>"), "{html}");
        assert!(
            html.contains(&format!("<style>{STYLE}.mine{{color:red}}</style>")),
            "{html}"
        );
        assert!(
            html.contains("<nav><a href=\"/\">Home</a><a href=\"/a?b=1&amp;c=2\">A &amp; B</a></nav><main><p>body</p></main></body></html>"),
            "{html}"
        );
    }

    #[test]
    fn a_response_carries_its_policy_and_the_security_headers() {
        for (policy, expected) in [
            (Policy::NoScript, CONTENT_SECURITY_POLICY),
            (Policy::SelfScript, SCRIPT_CONTENT_SECURITY_POLICY),
        ] {
            let shell = Shell {
                title: "T",
                nav: &[],
                style: "",
                policy,
            };
            let response = shell.response(StatusCode::NOT_FOUND, &html! {});
            assert_eq!(response.status(), StatusCode::NOT_FOUND);
            let header = |name| response.headers().get(name).and_then(|v| v.to_str().ok());
            assert_eq!(header(header::CONTENT_SECURITY_POLICY), Some(expected));
            assert_eq!(
                header(header::CONTENT_TYPE),
                Some("text/html; charset=utf-8")
            );
            assert_eq!(header(header::CACHE_CONTROL), Some("no-store"));
            assert_eq!(header(header::X_FRAME_OPTIONS), Some("DENY"));
            assert_eq!(header(header::REFERRER_POLICY), Some("no-referrer"));
        }
    }

    #[test]
    fn the_script_policy_is_the_page_policy_with_scripts_and_fetches_from_this_hub_only() {
        assert_eq!(
            SCRIPT_CONTENT_SECURITY_POLICY.replace(" script-src 'self'; connect-src 'self';", ""),
            CONTENT_SECURITY_POLICY
        );
        assert!(!CONTENT_SECURITY_POLICY.contains("script-src"));
        assert!(!SCRIPT_CONTENT_SECURITY_POLICY.contains("unsafe-eval"));
        assert!(!SCRIPT_CONTENT_SECURITY_POLICY.contains("script-src 'self' 'unsafe-inline'"));
    }
}
