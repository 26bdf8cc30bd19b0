//! Jobs on the connector (docs/decisions.md 463): a connected app may ask for a quote, which
//! says it cannot open the job; committing is refused with spend_cap (an app's spend is
//! always $0 and kd.jobs.request is never granted); get_job, cancel_job and open_dispute are
//! not offered.

use super::surface::{call, tool_names};
use super::*;

#[test]
fn a_connected_app_gets_quotes_and_spend_cap_and_never_opens_a_job() {
    let app = TestApp::start();
    let (_, tokens) = connected(&app, "jobs-app@example.org");
    let access = tokens["access_token"].as_str().unwrap();
    let names = tool_names(&rpc(&app, CONNECTOR, access, "tools/list", json!({})));
    assert!(
        names.contains(&"request_verification".to_owned()),
        "{names:?}"
    );
    for hidden in ["get_job", "cancel_job", "open_dispute"] {
        assert!(!names.contains(&hidden.to_owned()), "{hidden} offered");
    }
    let before = app.log_len();
    let quote = call(
        &app,
        CONNECTOR,
        access,
        "request_verification",
        json!({ "title": "A check" }),
    );
    assert_eq!(quote["ok"], true, "{quote}");
    assert_eq!(quote["data"]["quote"]["fits"], false);
    assert_eq!(quote["data"]["quote"]["reason"], "spend_cap");
    assert_eq!(quote["data"]["quote"]["asked_by_connected_app"], true);
    for scope in ["public", "private"] {
        let commit = call(
            &app,
            CONNECTOR,
            access,
            "request_verification",
            json!({ "title": "A check", "scope": scope, "commit": true }),
        );
        assert_eq!(commit["error"]["code"], "spend_cap", "{commit}");
    }
    let never = call(
        &app,
        CONNECTOR,
        access,
        "get_job",
        json!({ "job_id": "kdjob_0" }),
    );
    assert_eq!(never["error"]["code"], "needs_your_approval", "{never}");
    assert_eq!(app.log_len(), before, "nothing was recorded");
}
