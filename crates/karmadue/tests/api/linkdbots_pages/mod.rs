//! The Linkdbots dashboard's HTML pages (docs/decisions.md 330–334): `/linkdbots/dashboard/…`,
//! the claim page and the roster page. Each page: a visitor is sent to sign in and back; what it
//! shows (and never: an email, a person's id, a key hash, an org's row id); each form's success
//! and refusals; a forged form changes nothing.

use serde_json::json;

use crate::app::{Browser, Reply, TestApp};

mod agents;
mod categories;
mod claim;
mod connect;
mod host_keys;
mod queue;
mod signin;
mod teams;

const PASSWORD: &str = "correct horse battery staple";

/// A person signed up in a browser of their own, with their hub account id.
struct Person<'a> {
    browser: Browser<'a>,
    id: String,
    email: &'static str,
}

fn person<'a>(app: &'a TestApp, email: &'static str, name: &str) -> Person<'a> {
    let browser = app.browser();
    browser.sign_up(email, name, PASSWORD);
    let id = app
        .block_on(
            app.hub
                .store
                .read(move |conn| kd_core::people::find_by_email(conn, email)),
        )
        .unwrap()
        .unwrap()
        .0
        .person_id;
    Person { browser, id, email }
}

impl Person<'_> {
    /// The page at `path`, 200, holding neither the person's email nor their account id.
    fn page(&self, path: &str) -> Reply {
        let page = self.browser.get(path);
        assert_eq!(page.status, 200, "{path}: {}", page.text);
        assert_private(&page.text, self);
        page
    }

    /// Posts `fields` to `path` with the session's CSRF token (read from the connect page,
    /// which always has a form).
    fn post(&self, path: &str, fields: &[(&str, &str)]) -> Reply {
        let csrf = self.browser.csrf(DASH_CONNECT);
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend_from_slice(fields);
        let reply = self.browser.post(path, &all);
        assert_private(&reply.text, self);
        reply
    }

    /// Posts `fields` to `path` with a forged CSRF token: 403, the form-expired page.
    fn forged(&self, path: &str, fields: &[(&str, &str)]) {
        let mut all = vec![("csrf", "forged")];
        all.extend_from_slice(fields);
        let reply = self.browser.post(path, &all);
        assert_eq!(reply.status, 403, "{path}: {}", reply.text);
        assert!(reply.text.contains("This form expired"), "{}", reply.text);
    }
}

/// What no page shows: the person's email and hub account id.
fn assert_private(text: &str, person: &Person<'_>) {
    assert!(!text.contains(person.email), "an email is shown: {text}");
    assert!(!text.contains(&person.id), "an account id is shown: {text}");
}

/// A 303 to `to`.
fn assert_see_other(reply: &Reply, to: &str) {
    assert_eq!(
        (reply.status, reply.header("location")),
        (303, Some(to)),
        "{}",
        reply.text
    );
}

/// A profile paired by `person` through a code minted on the connect page: (agent id, key).
fn paired(app: &TestApp, person: &Person<'_>, name: &str) -> (String, String) {
    let minted = person.post(DASH_CONNECT, &[("name", name)]);
    assert_eq!(minted.status, 200, "{}", minted.text);
    let code = shown_code(&minted.text);
    let body = json!({ "code": code, "engine": "e", "model": "m", "host": "h" }).to_string();
    let paired = app.request(
        "POST",
        "/linkdbots/api/v1/pair",
        Some(body.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(paired.status, 201, "{}", paired.text);
    let answer = paired.json();
    (
        answer["agentId"].as_str().unwrap().to_owned(),
        answer["agentKey"].as_str().unwrap().to_owned(),
    )
}

/// The code or key a page shows once, in its `class="code"` paragraph.
fn shown_code(html: &str) -> String {
    let marker = "class=\"code\">";
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("no code in {html}"))
        + marker.len();
    html[start..].split('<').next().unwrap().to_owned()
}

/// A keyed request to Linkdbots' API.
fn keyed(app: &TestApp, method: &str, path: &str, key: &str, body: &str) -> Reply {
    let bearer = format!("Bearer {key}");
    app.request(
        method,
        &format!("/linkdbots/api/v1{path}"),
        (!body.is_empty()).then_some(body.as_bytes()),
        &[
            ("content-type", "application/json"),
            ("authorization", &bearer),
        ],
    )
}

const DASH_CONNECT: &str = "/linkdbots/dashboard/connect";
const DASH_QUEUE: &str = "/linkdbots/dashboard/queue";
const DASH_AGENTS: &str = "/linkdbots/dashboard/agents";
const DASH_HOST_KEYS: &str = "/linkdbots/dashboard/host-keys";
const DASH_TEAMS: &str = "/linkdbots/dashboard/teams";

/// How many pairing codes were ever minted.
fn codes(app: &TestApp) -> i64 {
    count(app, "linkdbots_pairing_codes")
}

/// The rows of `table`.
fn count(app: &TestApp, table: &'static str) -> i64 {
    app.hub
        .store
        .read_blocking(move |conn| -> Result<i64, kd_core::store::StoreError> {
            let sql = format!("SELECT CAST(COUNT(*) AS BIGINT) FROM {table}");
            Ok(conn.query_row(&sql, kd_core::params![], |row| row.get(0))?)
        })
        .unwrap()
}
