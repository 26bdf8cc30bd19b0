//! NIP-01 event ids and BIP-340 signatures against the published vectors.

use super::*;

const SECRET: [u8; 32] = [7; 32];

fn auth_header(event: &Event) -> String {
    use base64::Engine as _;
    format!(
        "Nostr {}",
        base64::engine::general_purpose::STANDARD.encode(event.to_json_text())
    )
}

fn auth_event(tags: &[[&str; 2]], content: &str, created_at: u64) -> Event {
    sign_event(
        &SECRET,
        created_at,
        HTTP_AUTH_KIND,
        tags.iter()
            .map(|[name, value]| vec![(*name).to_owned(), (*value).to_owned()])
            .collect(),
        content.to_owned(),
        &[0; 32],
    )
    .unwrap()
}

const URL: &str = "https://hub.example/ronin/api/v1/me?since=c1";
const NOW: u64 = 1_800_000_000;

fn request(body: &[u8], payload_required: bool) -> HttpRequest<'_> {
    HttpRequest {
        url: URL,
        method: "GET",
        body,
        payload_required,
        now_s: NOW,
    }
}

#[test]
fn a_signed_event_verifies_and_any_changed_field_does_not() {
    let event = sign_event(
        &SECRET,
        NOW,
        1,
        vec![vec!["t".into(), "x".into()]],
        "hi".into(),
        &[0; 32],
    )
    .unwrap();
    assert_eq!(event.verify(), Ok(()));
    assert_eq!(Event::parse(&event.to_json_text()).unwrap(), event);
    let mut changed = event.clone();
    changed.content.push('!');
    assert_eq!(changed.verify(), Err(EventError::IdMismatch));
    let mut resigned = changed.clone();
    resigned.id = resigned.computed_id();
    assert_eq!(resigned.verify(), Err(EventError::BadSignature));
}

#[test]
fn the_wire_form_is_read_strictly() {
    let event = sign_event(&SECRET, NOW, 1, vec![], String::new(), &[0; 32]).unwrap();
    let good: serde_json::Value = serde_json::from_str(&event.to_json_text()).unwrap();
    let with = |field: &str, value: serde_json::Value| {
        let mut copy = good.clone();
        copy[field] = value;
        Event::parse(&copy.to_string())
    };
    assert!(matches!(
        with("kind", 70_000.into()),
        Err(EventError::Shape(_))
    ));
    assert!(matches!(
        with("kind", (-1).into()),
        Err(EventError::Shape(_))
    ));
    assert!(matches!(
        Event::parse(&good.to_string().replace("\"kind\":1", "\"kind\":1.5")),
        Err(EventError::Shape(_))
    ));
    assert!(matches!(
        Event::parse(&good.to_string().replace("\"kind\":1", "\"kind\":1e0")),
        Err(EventError::Shape(_))
    ));
    assert!(matches!(
        with("created_at", (MAX_CREATED_AT + 1).into()),
        Err(EventError::Field {
            field: "created_at",
            ..
        })
    ));
    assert!(matches!(
        with("pubkey", event.pubkey.to_uppercase().into()),
        Err(EventError::Field {
            field: "pubkey",
            ..
        })
    ));
    assert!(matches!(
        with("tags", serde_json::json!([[]])),
        Err(EventError::Field { field: "tags", .. })
    ));
    assert!(matches!(
        with("tags", serde_json::json!([["t", null]])),
        Err(EventError::Shape(_))
    ));
    // A repeated field is refused rather than read as its last value.
    let text = good.to_string();
    let repeated = text.replacen("{", "{\"content\":\"other\",", 1);
    assert!(
        matches!(Event::parse(&repeated), Err(EventError::Shape(_))),
        "{repeated}"
    );
    // Unknown fields are ignored.
    assert_eq!(with("extra", true.into()).unwrap(), event);
    // The array form serde would accept for a struct is not an event.
    let array = serde_json::json!([
        event.id,
        event.pubkey,
        event.created_at,
        event.kind,
        event.tags,
        event.content,
        event.sig
    ]);
    assert!(matches!(
        Event::parse(&array.to_string()),
        Err(EventError::Shape(_))
    ));
    assert!(matches!(
        Event::from_value(array),
        Err(EventError::Shape(_))
    ));
}

#[test]
fn a_nip98_header_is_checked_against_the_request() {
    let tags = [["u", URL], ["method", "get"], ["nonce", "n-1"]];
    let event = auth_event(&tags, "", NOW - 30);
    assert_eq!(
        verify_http_auth(&auth_header(&event), &request(b"", false)).unwrap(),
        event
    );
    // Padding may be left off; the scheme is read in any case.
    let unpadded = auth_header(&event)
        .trim_end_matches('=')
        .replace("Nostr", "nostr");
    assert!(verify_http_auth(&unpadded, &request(b"", false)).is_ok());
    let refused = |event: &Event, request: &HttpRequest<'_>| {
        verify_http_auth(&auth_header(event), request).unwrap_err()
    };
    assert_eq!(
        refused(&auth_event(&tags, "", NOW - 61), &request(b"", false)),
        HttpAuthError::Stale
    );
    assert_eq!(
        refused(&auth_event(&tags, "", NOW + 61), &request(b"", false)),
        HttpAuthError::Stale
    );
    let other_url = [
        ["u", "https://hub.example/ronin/api/v1/me"],
        ["method", "GET"],
        ["nonce", "n"],
    ];
    assert_eq!(
        refused(&auth_event(&other_url, "", NOW), &request(b"", false)),
        HttpAuthError::Url
    );
    let post = [["u", URL], ["method", "POST"], ["nonce", "n"]];
    assert_eq!(
        refused(&auth_event(&post, "", NOW), &request(b"", false)),
        HttpAuthError::Method
    );
    let no_nonce = [["u", URL], ["method", "GET"]];
    assert_eq!(
        refused(&auth_event(&no_nonce, "", NOW), &request(b"", false)),
        HttpAuthError::Nonce
    );
    assert_eq!(
        refused(&auth_event(&tags, "x", NOW), &request(b"", false)),
        HttpAuthError::Content
    );
}

#[test]
fn a_nip98_payload_tag_binds_the_body_and_the_event_must_be_whole() {
    let tags = [["u", URL], ["method", "get"], ["nonce", "n-1"]];
    let event = auth_event(&tags, "", NOW - 30);
    let refused = |event: &Event, request: &HttpRequest<'_>| {
        verify_http_auth(&auth_header(event), request).unwrap_err()
    };
    let body = b"{}";
    let digest = hex::encode(Sha256::digest(body));
    let with_payload = [
        ["u", URL],
        ["method", "GET"],
        ["nonce", "n"],
        ["payload", digest.as_str()],
    ];
    let bound = auth_event(&with_payload, "", NOW);
    assert!(verify_http_auth(&auth_header(&bound), &request(body, true)).is_ok());
    assert_eq!(
        refused(&bound, &request(b"{ }", true)),
        HttpAuthError::Payload
    );
    assert_eq!(
        refused(&event, &request(body, true)),
        HttpAuthError::Payload
    );
    // Another kind, a bad scheme, bad base64, a tampered event.
    let mut note = auth_event(&tags, "", NOW);
    note = sign_event(
        &SECRET,
        note.created_at,
        1,
        note.tags,
        note.content,
        &[0; 32],
    )
    .unwrap();
    assert_eq!(refused(&note, &request(b"", false)), HttpAuthError::Kind);
    assert_eq!(
        verify_http_auth("Bearer abc", &request(b"", false)),
        Err(HttpAuthError::Scheme)
    );
    assert_eq!(
        verify_http_auth("Nostr %%%", &request(b"", false)),
        Err(HttpAuthError::Encoding)
    );
    let mut tampered = event.clone();
    tampered.tags[2][1] = "n-2".into();
    assert_eq!(
        refused(&tampered, &request(b"", false)),
        HttpAuthError::Event(EventError::IdMismatch)
    );
}
