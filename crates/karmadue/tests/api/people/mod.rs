//! People and owner links (issue 4): accounts and sessions on plain HTML pages, connect codes,
//! approving links on the You page, the owner's bearer session, pause and remove.

use serde_json::{Value, json};

use crate::app::{Agent, Browser, TestApp, hidden};

mod claims;
mod connect;
mod findings;
mod sessions;
mod you;

const PASSWORD: &str = "correct horse battery staple";

fn verify(app: &TestApp, agent: &Agent) -> Value {
    let reply = app.call("verify_agent", json!({ "agent_id": agent.agent_id }));
    assert_eq!(reply["ok"], true, "{reply}");
    reply["data"].clone()
}

/// Mints a connect code on the Connect your agent page; returns it as shown (`ABCD-EF23`).
pub(crate) fn mint(browser: &Browser<'_>) -> String {
    let csrf = browser.csrf("/connect");
    let page = browser.post("/connect", &[("csrf", &csrf)]);
    assert_eq!(page.status, 200, "{}", page.text);
    let start = page.text.find("class=\"code\">").unwrap() + "class=\"code\">".len();
    page.text[start..start + 9].to_owned()
}

pub(crate) fn connect(app: &TestApp, agent: &Agent, code: &str) -> Value {
    app.signed(
        agent,
        "connect_with_code",
        json!({ "agent_id": agent.agent_id, "code": code }),
    )
}

/// Approves (or declines) the first pending request on the You page.
pub(crate) fn decide(browser: &Browser<'_>, decision: &str) {
    let page = browser.get("/you");
    let csrf = hidden(&page.text, "csrf");
    let request_id = hidden(&page.text, "request_id");
    let reply = browser.post(
        "/you/requests",
        &[
            ("csrf", &csrf),
            ("request_id", &request_id),
            ("decision", decision),
        ],
    );
    assert_eq!(reply.status, 303, "{}", reply.text);
}

/// A person who signed up, an agent, and an approved link between them.
pub(crate) fn linked<'a>(
    app: &'a TestApp,
    email: &str,
    agent_name: &str,
) -> (Browser<'a>, String, Agent) {
    let browser = app.browser();
    let token = browser.sign_up(email, "Ada Owner", PASSWORD);
    let agent = app.register(agent_name);
    let code = mint(&browser);
    assert_eq!(connect(app, &agent, &code)["ok"], true);
    decide(&browser, "approve");
    (browser, token, agent)
}

pub(crate) fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn outbox(app: &TestApp) -> Vec<kd_core::outbox::Mail> {
    app.hub
        .store
        .read_blocking(|conn| kd_core::outbox::list(conn, true))
        .unwrap()
}

pub fn finding(app: &TestApp, agent: &Agent, extra: Value) -> Value {
    let mut arguments = json!({
        "agent_id": agent.agent_id,
        "title": "A <i>job</i> for you",
        "reason": "It matches your skills",
        "evidence_link": "https://example.org/job/1",
        "kind": "job",
    });
    for (key, value) in extra.as_object().unwrap() {
        arguments[key] = value.clone();
    }
    app.signed(agent, "notify_human_of_finding", arguments)
}

/// A one-purpose SMTP sink: accepts any mail and hands each message's DATA to the test.
pub fn smtp_sink() -> (u16, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let sender = sender.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                writer.write_all(b"220 sink ESMTP\r\n").unwrap();
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let command = line.trim_end().to_ascii_uppercase();
                    let reply: &[u8] = if command.starts_with("EHLO") || command.starts_with("HELO")
                    {
                        b"250-sink\r\n250 8BITMIME\r\n"
                    } else if command == "DATA" {
                        writer.write_all(b"354 go on\r\n").unwrap();
                        let mut data = String::new();
                        loop {
                            line.clear();
                            reader.read_line(&mut line).unwrap();
                            if line == ".\r\n" {
                                break;
                            }
                            data.push_str(&line);
                        }
                        let _ = sender.send(data);
                        b"250 queued\r\n"
                    } else if command == "QUIT" {
                        let _ = writer.write_all(b"221 bye\r\n");
                        return;
                    } else {
                        b"250 ok\r\n"
                    };
                    writer.write_all(reply).unwrap();
                }
            });
        }
    });
    (port, receiver)
}
