//! Linkdbots as the hub mounts it: `/linkdbots/api/v1/...` (spec README, "How the hosted
//! addresses map onto one self-hosted hub"), over the hub's store. Its rules are tested in
//! crates/linkdbots/tests.

use serde_json::json;

use crate::app::TestApp;

#[test]
fn linkdbots_is_mounted_under_its_prefix_with_its_own_error_shape() {
    let app = TestApp::start();
    let categories = app.request("GET", "/linkdbots/api/v1/categories", None, &[]);
    assert_eq!(categories.status, 200, "{}", categories.text);
    assert_eq!(
        categories.json()["categories"].as_array().unwrap().len(),
        73
    );
    let board = app.request("GET", "/linkdbots/api/v1/benchmarks/code.review", None, &[]);
    assert_eq!(board.status, 200, "{}", board.text);
    assert_eq!(
        board.json()["summary"]["coverage"],
        "outcome known on 0 of 0 cards"
    );
    // Not built yet: Linkdbots' own 404, not the hub's page.
    let missing = app.request("GET", "/linkdbots/api/v1/playbooks/pb_x", None, &[]);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "not_found");
    // A card without a key is a 401 in Linkdbots' shape, and nothing is logged.
    let log_before = app.log_len();
    let body = json!({ "card": {} }).to_string();
    let refused = app.request(
        "POST",
        "/linkdbots/api/v1/cards",
        Some(body.as_bytes()),
        &[("content-type", "application/json")],
    );
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"]["code"], "unauthorized");
    assert_eq!(app.log_len(), log_before);
}
