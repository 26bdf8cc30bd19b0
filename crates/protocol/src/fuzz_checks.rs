//! The properties the fuzz targets check (`fuzz/fuzz_targets/*.rs`, run by `cargo fuzz`;
//! docs/reliability.md "Fuzzing"), one function per target: each takes the fuzzer's bytes and
//! panics when a property fails. The same functions replay every committed corpus file in the
//! unit tests below, so `cargo test` (and CI) runs each target's corpus on stable Rust.
//!
//! Built for the fuzz crate with the `fuzz-checks` feature, and for this crate's tests.

use serde_json::Value;

use crate::{canonical, jsonrpc, nostr};

/// The canonical-text printer (spec "Signing a write (kd-mcp-v1)"): never panics; a text it
/// prints is a fixed point (printing it again gives it back) and is what
/// [`canonical::canonical_value_text`] prints for the parsed value, so the text and value
/// printers agree.
///
/// # Panics
/// When a property fails.
pub fn canonical_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(printed) = canonical::canonical_text(text) else {
        return;
    };
    assert_eq!(
        canonical::canonical_text(&printed).as_deref(),
        Ok(printed.as_str()),
        "the canonical text of {text:?} is not a fixed point"
    );
    let value: Value = serde_json::from_str(&printed)
        .unwrap_or_else(|error| panic!("{printed:?} is not JSON: {error}"));
    assert_eq!(
        canonical::canonical_value_text(&value),
        printed,
        "the value printer disagrees with the text printer on {text:?}"
    );
}

/// The JSON-RPC envelope reader of the MCP endpoint: never panics; a request's id is a string
/// or an integer and its `params`, when present, an object; a refusal carries one of the three
/// codes the endpoint answers with.
///
/// # Panics
/// When a property fails.
pub fn jsonrpc_message(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match jsonrpc::parse(text) {
        Ok(jsonrpc::Message::Request { id, params, .. }) => {
            assert!(id.is_string() || id.is_i64() || id.is_u64(), "id {id}");
            if let Some(params) = params {
                assert!(
                    params.get().trim_start().starts_with('{'),
                    "params {params}"
                );
            }
        }
        Ok(jsonrpc::Message::Notification { .. } | jsonrpc::Message::Response) => {}
        Err(refused) => assert!(
            [
                jsonrpc::PARSE_ERROR,
                jsonrpc::INVALID_REQUEST,
                jsonrpc::INVALID_PARAMS
            ]
            .contains(&refused.code),
            "code {}",
            refused.code
        ),
    }
}

/// The Nostr event reader (NIP-01, Ronin's signed events): never panics; an event it reads
/// prints as JSON that reads back as the same event, with the same computed id, and checking
/// its signature never panics.
///
/// # Panics
/// When a property fails.
pub fn nostr_event(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(event) = nostr::Event::parse(text) else {
        return;
    };
    let printed = event.to_json_text();
    let again = nostr::Event::parse(&printed)
        .unwrap_or_else(|error| panic!("{printed:?} does not read back: {error}"));
    assert_eq!(again, event, "the event changed through its JSON");
    assert_eq!(again.computed_id(), event.computed_id());
    let _ = event.verify();
}

/// The URL the NIP-98 target's requests are made to.
pub const NIP98_URL: &str = "https://hub.example/ronin/api/v1/me?since=0";

/// NIP-98 `Authorization: Nostr …` checking: never panics. The input is the raw header value
/// when its first byte is 0, else an auth event's JSON text, sent base64-encoded (so the
/// fuzzer reaches the event checks); an accepted event is kind 27235 for exactly
/// [`NIP98_URL`] and `GET`.
///
/// # Panics
/// When a property fails.
pub fn nip98(data: &[u8]) {
    use base64::Engine as _;
    let header = match data.split_first() {
        Some((0, rest)) => match std::str::from_utf8(rest) {
            Ok(header) => header.to_owned(),
            Err(_) => return,
        },
        _ => format!(
            "Nostr {}",
            base64::engine::general_purpose::STANDARD.encode(data)
        ),
    };
    let request = nostr::HttpRequest {
        url: NIP98_URL,
        method: "GET",
        body: b"",
        payload_required: false,
        now_s: 1_700_000_000,
    };
    if let Ok(event) = nostr::verify_http_auth(&header, &request) {
        assert_eq!(event.kind, nostr::HTTP_AUTH_KIND);
        assert_eq!(event.tag_value("u"), Some(NIP98_URL));
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// Runs `check` over every file of `fuzz/corpus/<target>` and returns how many it read.
    fn replay(target: &str, check: fn(&[u8])) -> usize {
        let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus")
            .join(target);
        let mut count = 0;
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            check(&std::fs::read(&path).unwrap());
            count += 1;
        }
        count
    }

    #[test]
    fn every_committed_corpus_input_holds_its_targets_properties() {
        for (target, check) in [
            ("canonical_text", super::canonical_text as fn(&[u8])),
            ("jsonrpc_message", super::jsonrpc_message),
            ("nostr_event", super::nostr_event),
            ("nip98", super::nip98),
        ] {
            assert!(
                replay(target, check) >= 5,
                "{target}: a corpus of a few seeds at least"
            );
        }
    }

    /// The signed seeds (deterministic: zero auxiliary randomness), by file name.
    fn signed_seeds() -> Vec<(&'static str, &'static str, String)> {
        let secret = [7u8; 32];
        let auth = crate::nostr::sign_event(
            &secret,
            1_700_000_000,
            crate::nostr::HTTP_AUTH_KIND,
            vec![
                vec!["u".into(), super::NIP98_URL.into()],
                vec!["method".into(), "GET".into()],
                vec!["nonce".into(), "n1".into()],
            ],
            String::new(),
            &[0; 32],
        )
        .unwrap();
        let profile = crate::nostr::sign_event(
            &secret,
            1_700_000_000,
            0,
            vec![
                vec!["t".into(), "ronin".into()],
                vec!["p".into(), "x".into()],
            ],
            "{\"name\":\"a \\u00e9 \\n\"}".into(),
            &[0; 32],
        )
        .unwrap();
        vec![
            ("nip98", "signed_auth_event.json", auth.to_json_text()),
            ("nostr_event", "signed_auth_event.json", auth.to_json_text()),
            ("nostr_event", "signed_profile.json", profile.to_json_text()),
        ]
    }

    #[test]
    fn the_signed_seeds_are_committed_and_reach_the_accepting_paths() {
        for (target, name, text) in signed_seeds() {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../fuzz/corpus")
                .join(target)
                .join(name);
            if std::env::var("KD_WRITE_SEEDS").is_ok_and(|value| value == "1") {
                std::fs::write(&path, &text).unwrap();
            }
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "{target}/{name}"
            );
        }
        // The auth seed is accepted as it stands, so the fuzzer starts from a passing header
        // and mutates its way into each check.
        let (_, _, auth) = &signed_seeds()[0];
        let header = {
            use base64::Engine as _;
            format!(
                "Nostr {}",
                base64::engine::general_purpose::STANDARD.encode(auth)
            )
        };
        let request = crate::nostr::HttpRequest {
            url: super::NIP98_URL,
            method: "GET",
            body: b"",
            payload_required: false,
            now_s: 1_700_000_000,
        };
        assert!(crate::nostr::verify_http_auth(&header, &request).is_ok());
        let (_, _, profile) = &signed_seeds()[2];
        assert!(
            crate::nostr::Event::parse(profile)
                .unwrap()
                .verify()
                .is_ok()
        );
    }
}
