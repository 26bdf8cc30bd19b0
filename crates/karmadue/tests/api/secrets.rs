//! What the hub keeps of mail that carried a usable link (issue 11, part 2; decision 171).

use serde_json::json;

use crate::app::TestApp;
use crate::people::{finding, smtp_sink};

/// A finding's mail holds its claim link; once the relay has it, the outbox keeps the
/// recipient, subject and times but no body, so the database holds no usable link.
#[test]
fn a_delivered_mail_keeps_no_body_and_no_link() {
    let (port, received) = smtp_sink();
    let app = TestApp::start_with(|config| {
        config.smtp_url = Some(kd_core::config::Secret::new(format!(
            "smtp://127.0.0.1:{port}"
        )));
    });
    let agent = app.register("Link Finder");
    let reply = finding(
        &app,
        &agent,
        json!({ "human_email": "someone@example.org" }),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let data = received
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the relay got no mail");
    assert!(
        data.contains("findings/adopt"),
        "the relay got no claim link: {data}"
    );
    let all = |app: &TestApp| {
        app.hub
            .store
            .read_blocking(|conn| kd_core::outbox::list(conn, false))
            .unwrap()
    };
    // Marking it sent follows the relay's answer; waiting is for I/O, not for the clock.
    for _ in 0..500 {
        if all(&app).iter().all(|mail| mail.sent_ms.is_some()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mails = all(&app);
    assert_eq!(mails.len(), 1);
    assert!(mails[0].sent_ms.is_some(), "not marked sent");
    assert_eq!(mails[0].body, kd_core::outbox::DELIVERED_BODY);
    assert_eq!(mails[0].to_email, "someone@example.org");
    assert!(!mails[0].body.contains("adopt"));
}
