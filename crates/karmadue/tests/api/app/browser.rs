//! The people's app (tests/api/people.rs): a browser without JavaScript, keeping cookies
//! and posting forms, and the TestApp helpers that read mails and pages for it.

use super::*;

// ---- The people's app (tests/api/people.rs): a browser without JavaScript ----------------

/// A cookie-keeping form client: posts `application/x-www-form-urlencoded`, never follows
/// redirects (so tests see each 303 and its cookies).
pub struct Browser<'a> {
    app: &'a TestApp,
    http: ureq::Agent,
    cookies: std::sync::Mutex<Vec<(String, String)>>,
}

impl TestApp {
    pub fn browser(&self) -> Browser<'_> {
        let http = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .build()
            .into();
        Browser {
            app: self,
            http,
            cookies: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Every event row's kind, actor, subject and payload, as one text (for secret scans).
    pub fn events_text(&self) -> String {
        self.hub
            .store
            .read_blocking(|conn| -> Result<String, kd_core::store::StoreError> {
                let mut statement = conn.prepare_cached(
                    "SELECT kind || ' ' || actor || ' ' || subject || ' ' || payload FROM events",
                )?;
                let rows = statement.query_map([], |row| row.get::<String>(0))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?.join("\n"))
            })
            .unwrap()
    }
}

impl Browser<'_> {
    fn send(&self, method: &str, path: &str, form: Option<&[(&str, &str)]>) -> Reply {
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.app.base));
        let jar = self
            .cookies
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        if !jar.is_empty() {
            builder = builder.header("cookie", jar);
        }
        let body = form.map(|fields| {
            fields
                .iter()
                .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
                .collect::<Vec<_>>()
                .join("&")
        });
        if body.is_some() {
            builder = builder.header("content-type", "application/x-www-form-urlencoded");
        }
        let mut response = self
            .http
            .run(builder.body(body.unwrap_or_default().into_bytes()).unwrap())
            .unwrap();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string(),
                    value.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        for (_, value) in headers.iter().filter(|(name, _)| name == "set-cookie") {
            let pair = value.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            let mut jar = self.cookies.lock().unwrap();
            jar.retain(|(key, _)| key != name);
            if !value.is_empty() {
                jar.push((name.to_owned(), value.to_owned()));
            }
        }
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        Reply {
            status,
            headers,
            text,
        }
    }

    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None)
    }

    pub fn post(&self, path: &str, fields: &[(&str, &str)]) -> Reply {
        self.send("POST", path, Some(fields))
    }

    pub fn cookie(&self, name: &str) -> Option<String> {
        self.cookies
            .lock()
            .unwrap()
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    }

    /// The csrf hidden field of the page at `path`.
    pub fn csrf(&self, path: &str) -> String {
        let page = self.get(path);
        assert_eq!(page.status, 200, "{path}: {}", page.text);
        hidden(&page.text, "csrf")
    }

    /// Signs up (email, name, password), follows the link of the confirmation mail
    /// ([`TestApp::signup_link`]) and returns the session token.
    pub fn sign_up(&self, email: &str, name: &str, password: &str) -> String {
        let csrf = self.csrf("/signup");
        let reply = self.post(
            "/signup",
            &[
                ("csrf", &csrf),
                ("email", email),
                ("display_name", name),
                ("password", password),
            ],
        );
        assert_eq!(reply.status, 303, "{}", reply.text);
        assert_eq!(reply.header("location"), Some("/signup/sent"));
        let link = self.app.signup_link(email).expect("no confirmation mail");
        let confirmed = self.confirm(&link);
        assert_eq!(confirmed.status, 303, "{}", confirmed.text);
        self.cookie("kd_session").unwrap()
    }

    /// Opens a sign-up `link` (the path and query) and presses its button: the reply of the
    /// POST (303 to `/you` when it worked).
    pub fn confirm(&self, link: &str) -> Reply {
        let page = self.get(link);
        assert_eq!(page.status, 200, "{link}: {}", page.text);
        let csrf = hidden(&page.text, "csrf");
        let token = hidden(&page.text, "token");
        self.post("/signup/confirm", &[("csrf", &csrf), ("token", &token)])
    }
}

impl TestApp {
    /// Mails in the outbox, delivered or not.
    pub fn outbox_len(&self) -> usize {
        self.hub
            .store
            .read_blocking(|conn| kd_core::outbox::list(conn, false))
            .unwrap()
            .len()
    }

    /// The path and query of the sign-up link in the newest waiting confirmation mail to
    /// `email`, if any; the mail is then marked delivered, as the relay would (so tests that
    /// count the outbox see the mails their own steps queued).
    pub fn signup_link(&self, email: &str) -> Option<String> {
        let email = email.trim().to_lowercase();
        let mail = self
            .hub
            .store
            .read_blocking(|conn| kd_core::outbox::list(conn, true))
            .unwrap()
            .into_iter()
            .rev()
            .find(|mail| {
                mail.to_email == email && mail.subject == kd_karmadue::people::CONFIRM_SUBJECT
            })?;
        let line = mail
            .body
            .lines()
            .find(|line| line.contains(kd_karmadue::people::CONFIRM_PATH))?;
        let link = line[line.find(kd_karmadue::people::CONFIRM_PATH)?..]
            .trim()
            .to_owned();
        let mail_id = mail.mail_id.clone();
        self.block_on(
            self.hub
                .store
                .write(move |txn| kd_core::outbox::mark_sent(txn.conn(), &mail_id, txn.now_ms())),
        )
        .unwrap()
        .unwrap();
        Some(link)
    }
}

/// The value of the first hidden field `name` in an HTML page.
pub fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} field in {html}"))
        + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}
