//! The transparency log over HTTP (issue 15; docs/transparency.md): `get_history` gives each of
//! the agent's events its inclusion proof under the latest checkpoint (decision 241), the
//! proof route and the tiles serve the same tree, bad input is refused with nothing written,
//! and a hub whose log is off (kd-bench's baseline, decision 242) keeps no tree, signs no
//! checkpoint and answers no receipt, and catches up when it is turned on again.

use kd_core::tlog::{self, b64, note, parse_b64, proof};
use serde_json::{Value, json};

use crate::app::TestApp;

/// A hub whose background task does not sign checkpoints during the test: the test signs
/// them itself, so what is covered is known.
fn quiet_app(transparency: bool) -> TestApp {
    TestApp::start_with(|config| {
        config.checkpoint_interval = std::time::Duration::from_secs(3600);
        config.transparency = transparency;
    })
}

fn publish(app: &TestApp) -> Option<u64> {
    app.block_on(kd_karmadue::ledger::checkpoints::publish(&app.hub.kernel))
        .unwrap()
}

fn tree_size(app: &TestApp) -> u64 {
    app.hub.store.read_blocking(tlog::store::size).unwrap()
}

/// The hub's kd-passport-1 public key from its JWKS.
fn hub_key(app: &TestApp) -> [u8; 32] {
    let jwks = app
        .request("GET", "/.well-known/jwks.json", None, &[])
        .json();
    let x = jwks["keys"][0]["x"].as_str().unwrap();
    kd_protocol::b64::decode_url(x).unwrap().try_into().unwrap()
}

/// Whether `proved` (an inclusion proof as the hub prints it) proves `row_hash` at `seq`
/// under `root`.
fn proves(proved: &Value, seq: u64, row_hash: &str, root: &tlog::Hash) -> bool {
    let path: Vec<tlog::Hash> = proved["proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hash| parse_b64(hash.as_str().unwrap()).unwrap())
        .collect();
    proved["leaf_index"].as_u64() == Some(seq - 1)
        && proof::verify_inclusion(
            seq - 1,
            proved["tree_size"].as_u64().unwrap(),
            &tlog::event_leaf(row_hash).unwrap(),
            &path,
            root,
        )
}

/// The body of a GET, as bytes (a tile).
fn bytes(app: &TestApp, path: &str) -> Vec<u8> {
    let mut response = ureq::get(format!("{}{path}", app.base)).call().unwrap();
    response.body_mut().read_to_vec().unwrap()
}

fn rename(app: &TestApp, agent: &crate::app::Agent, name: &str) -> Value {
    let renamed = app.signed(
        agent,
        "rename_agent",
        json!({ "agent_id": agent.agent_id, "name": name }),
    );
    assert_eq!(renamed["ok"], true, "{renamed}");
    // Decision 258: the receipt proves the write's row under its batch's signed root.
    if let Some(receipt) = renamed.get("receipt") {
        let public_key = hub_key(app);
        let verifier = tlog::receipt::Verifier {
            key_id: "kd-passport-1",
            public_key: &public_key,
        };
        let signed = tlog::receipt::verify_receipt(verifier, receipt).unwrap();
        assert_eq!(receipt["seq"], renamed["data"]["event_seq"], "{renamed}");
        assert_eq!(signed.origin, note::origin_of(&app.base));
        let seq = receipt["seq"].as_i64().unwrap();
        assert!(signed.first_seq <= seq && seq < signed.first_seq + signed.size as i64);
    }
    renamed
}

#[test]
fn get_history_gives_every_event_its_proof_under_the_latest_checkpoint() {
    let app = quiet_app(true);
    let agent = app.register("History Prover");
    rename(&app, &agent, "History Prover Two");
    let size = publish(&app).unwrap();
    assert_eq!(size, u64::try_from(app.log_len()).unwrap());
    let renamed = rename(&app, &agent, "History Prover Three");
    let newest = renamed["receipt"]["seq"].as_u64().unwrap();
    assert!(newest > size);

    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    let data = &history["data"];
    let checkpoint = note::verify(
        data["checkpoint"].as_str().unwrap(),
        &note::origin_of(&app.base),
        &hub_key(&app),
    )
    .unwrap();
    assert_eq!(checkpoint.size, size);
    let events = data["events"].as_array().unwrap();
    assert!(events.len() >= 3, "{data}");
    for event in events {
        let seq = event["seq"].as_u64().unwrap();
        let row_hash = event["row_hash"].as_str().unwrap();
        assert_eq!(
            event["proof_url"],
            format!("{}/log/proof/inclusion?seq={seq}", app.base)
        );
        if seq > size {
            // Not under a checkpoint yet: the receipt's promise, redeemable later.
            assert_eq!(event["proof"], Value::Null, "{event}");
            continue;
        }
        assert!(
            proves(&event["proof"], seq, row_hash, &checkpoint.root),
            "{event}"
        );
        assert_eq!(event["proof"]["root_hash"], b64(&checkpoint.root));
    }
    assert_eq!(events[0]["seq"].as_u64(), Some(newest));

    // The next checkpoint covers the newest event; the REST route proves it (the receipt's
    // proof_url), and get_history now carries that proof too.
    let size = publish(&app).unwrap();
    let path = format!("/log/proof/inclusion?seq={newest}");
    let redeemed = app.request("GET", &path, None, &[]).json();
    let root = parse_b64(redeemed["root_hash"].as_str().unwrap()).unwrap();
    assert_eq!(redeemed["tree_size"].as_u64(), Some(size));
    assert!(proves(
        &redeemed,
        newest,
        renamed["receipt"]["row_hash"].as_str().unwrap(),
        &root
    ));
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    let first = &history["data"]["events"][0];
    assert_eq!(first["proof"]["proof"], redeemed["proof"], "{first}");
}

#[test]
fn the_proof_routes_refuse_bad_numbers_and_the_tiles_hold_the_leaves() {
    let app = quiet_app(true);
    let agent = app.register("Tile Reader");
    rename(&app, &agent, "Tile Reader Two");
    let size = publish(&app).unwrap();
    let before = app.log_len();
    for (path, status) in [
        ("/log/proof/inclusion", 400),
        ("/log/proof/inclusion?seq=0", 400),
        ("/log/proof/inclusion?seq=abc", 400),
        (&format!("/log/proof/inclusion?seq={}", size + 1), 400),
        (
            &format!("/log/proof/inclusion?seq=1&size={}", size + 1),
            400,
        ),
        ("/log/proof/consistency?old=0", 400),
        (&format!("/log/proof/consistency?old={}", size + 1), 400),
        ("/log/tile/0/1", 400),
        ("/log/tile/0/000", 404),
    ] {
        let reply = app.request("GET", path, None, &[]);
        assert_eq!(reply.status, status, "{path}: {}", reply.text);
        // The tools' refusal envelope (decision 285): ok false, the code of the status, a
        // message, and the request id, in the body as in the header.
        let body = reply.json();
        let code = if status == 404 {
            "not_found"
        } else {
            "validation"
        };
        assert_eq!(body["ok"], false, "{}", reply.text);
        assert_eq!(body["error"]["code"], code, "{}", reply.text);
        assert!(body["error"]["message"].is_string(), "{}", reply.text);
        let request_id = body["request_id"].as_str().unwrap_or_default();
        assert!(request_id.len() > 8, "{}", reply.text);
        assert_eq!(reply.header("x-request-id"), Some(request_id), "{path}");
    }
    assert_eq!(app.log_len(), before, "a refused read wrote nothing");

    // The partial level-0 tile is the leaf hashes of the rows, in order; the entry bundle
    // their row hashes; the checkpoint's root is their RFC 6962 root.
    let rows = app
        .hub
        .store
        .read_blocking(|conn| kd_core::eventlog::rows_after(conn, 0, 1000))
        .unwrap();
    let tile = app.request("GET", &format!("/log/tile/0/000.p/{size}"), None, &[]);
    assert_eq!(tile.status, 200);
    let mut expected = Vec::new();
    let mut leaves = Vec::new();
    for row in rows.iter().take(usize::try_from(size).unwrap()) {
        let leaf = tlog::event_leaf(&row.row_hash).unwrap();
        expected.extend_from_slice(&leaf);
        leaves.push(leaf);
    }
    assert_eq!(bytes(&app, &format!("/log/tile/0/000.p/{size}")), expected);
    let bundle = bytes(&app, &format!("/log/tile/entries/000.p/{size}"));
    assert_eq!(bundle.len(), 34 * leaves.len());
    assert_eq!(&bundle[2..34], hex::decode(&rows[0].row_hash).unwrap());
    let mut tree = proof::MemHashes::default();
    proof::append(&mut tree, 0, &leaves).unwrap();
    let latest = app.request("GET", "/log/checkpoint", None, &[]).text;
    let signed = note::verify(&latest, &note::origin_of(&app.base), &hub_key(&app)).unwrap();
    assert_eq!(signed.root, proof::root(&mut tree, size).unwrap());
}

#[test]
fn a_hub_with_its_transparency_log_off_keeps_no_tree_and_gives_no_receipt() {
    let app = quiet_app(false);
    let agent = app.register("No Tree Writer");
    let renamed = rename(&app, &agent, "No Tree Writer Two");
    assert!(renamed.get("receipt").is_none(), "{renamed}");
    assert!(renamed["data"]["event_seq"].is_u64());
    assert_eq!(publish(&app), None);
    assert_eq!(tree_size(&app), 0);
    assert_eq!(
        app.request("GET", "/.well-known/kd-checkpoint", None, &[])
            .status,
        404
    );
    let history = app.signed(&agent, "get_history", json!({ "agent_id": agent.agent_id }));
    assert_eq!(history["data"]["checkpoint"], Value::Null);
    assert_eq!(history["data"]["events"][0]["proof"], Value::Null);

    // Turned on again, the first batch adds every row written meanwhile.
    app.hub.store.set_transparency(true);
    rename(&app, &agent, "No Tree Writer Three");
    assert_eq!(tree_size(&app), u64::try_from(app.log_len()).unwrap());
    app.hub
        .store
        .read_blocking(|conn| tlog::check::check(conn, None))
        .unwrap()
        .unwrap();
}

/// The RFC 6962 root of the log's first `size` rows, computed here from the rows.
fn root_of_rows(app: &TestApp, size: u64) -> tlog::Hash {
    let rows = app
        .hub
        .store
        .read_blocking(|conn| kd_core::eventlog::rows_after(conn, 0, 100_000))
        .unwrap();
    let leaves: Vec<tlog::Hash> = rows
        .iter()
        .take(usize::try_from(size).unwrap())
        .map(|row| tlog::event_leaf(&row.row_hash).unwrap())
        .collect();
    let mut tree = proof::MemHashes::default();
    proof::append(&mut tree, 0, &leaves).unwrap();
    proof::root(&mut tree, size).unwrap()
}

#[test]
fn the_live_head_names_a_signed_checkpoint_of_exactly_its_seq() {
    let app = quiet_app(true);
    let agent = app.register("Head Checkpoint");
    rename(&app, &agent, "Head Checkpoint Two");
    // The next day's head (decision 212): its job signs a checkpoint of the head's seq.
    app.clock.advance_ms(86_400_000);
    let report = app
        .block_on(kd_karmadue::ledger::publish(&app.hub.kernel))
        .unwrap();
    let head_seq = u64::try_from(report.today.unwrap().seq).unwrap();
    // The log grows and a later checkpoint is signed: the head still names its own.
    rename(&app, &agent, "Head Checkpoint Three");
    let later = publish(&app).unwrap();
    assert!(later > head_seq);

    let live = app
        .request("GET", "/.well-known/kd-log-head.json", None, &[])
        .json();
    assert_eq!(live["seq"].as_u64(), Some(head_seq), "{live}");
    let named = live["checkpoint"].as_str().unwrap();
    let origin = note::origin_of(&app.base);
    let signed = note::verify(named, &origin, &hub_key(&app)).unwrap();
    assert_eq!(signed.size, head_seq);
    assert_eq!(signed.root, root_of_rows(&app, head_seq));
    // The head's row is the checkpoint's last leaf.
    let proved = app
        .request(
            "GET",
            &format!("/log/proof/inclusion?seq={head_seq}&size={head_seq}"),
            None,
            &[],
        )
        .json();
    let row_hash = live["row_hash"].as_str().unwrap();
    assert!(
        proves(&proved, head_seq, row_hash, &signed.root),
        "{proved}"
    );
    // An edited note does not verify.
    let edited = named.replacen(&format!("\n{head_seq}\n"), &format!("\n{later}\n"), 1);
    assert!(note::verify(&edited, &origin, &hub_key(&app)).is_err());
}

#[test]
fn full_tiles_are_immutable_and_partial_tiles_are_cached_briefly() {
    let app = quiet_app(true);
    let agent = app.register("Tile Cache");
    let mut n = 0;
    while app.log_len() < 300 {
        n += 1;
        rename(&app, &agent, &format!("Tile Cache {n}"));
    }
    let size = publish(&app).unwrap();
    assert!(size > 256);
    let partial = size - 256;
    for path in ["/log/tile/0/000", "/log/tile/entries/000"] {
        let full = app.request("GET", path, None, &[]);
        assert_eq!(full.status, 200, "{path}");
        assert_eq!(
            full.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "{path}"
        );
        assert_eq!(
            full.header("content-type"),
            Some("application/octet-stream")
        );
    }
    for path in [
        format!("/log/tile/0/001.p/{partial}"),
        format!("/log/tile/entries/001.p/{partial}"),
        "/log/tile/1/000.p/1".to_owned(),
    ] {
        let short = app.request("GET", &path, None, &[]);
        assert_eq!(short.status, 200, "{path}");
        assert_eq!(
            short.header("cache-control"),
            Some("public, max-age=5"),
            "{path}"
        );
    }
    // A tile the tree does not hold yet is a 404, never cached as immutable.
    let missing = app.request("GET", "/log/tile/0/001", None, &[]);
    assert_eq!(missing.status, 404);
    assert_ne!(
        missing.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
}
