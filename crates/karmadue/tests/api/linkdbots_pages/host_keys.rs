//! `/linkdbots/dashboard/host-keys`: register, list and revoke host keys; a revoked key signs
//! nothing (decision 333).

use ed25519_dalek::{Signer as _, SigningKey};
use kd_core::clock::Clock as _;

use super::*;

/// Files a card signed by `signing` under `key_id`: its provenance.
fn signed_card(
    app: &TestApp,
    agent_id: &str,
    key: &str,
    key_id: &str,
    signing: &SigningKey,
) -> String {
    let card = json!({
        "category": "code.review", "tokensIn": 100, "tokensOut": 20, "costUsd": 0.42,
        "model": "opus-4.6", "engine": "claude-code", "host": "openmausbot",
        "occurredAt": kd_core::clock::rfc3339_ms(app.clock.now_ms() - 60_000),
        "outcome": "success",
    });
    let input =
        kd_linkdbots::cards::read_card(card.as_object().unwrap(), app.clock.now_ms(), true, &[])
            .unwrap();
    let text = kd_linkdbots::cards::canonical_text(agent_id, &input);
    let signature = kd_protocol::b64::encode_url(&signing.sign(text.as_bytes()).to_bytes());
    let body =
        json!({ "card": card, "signature": { "hostKeyId": key_id, "signatureB64": signature } });
    let filed = keyed(app, "POST", "/cards", key, &body.to_string());
    assert_eq!(filed.status, 201, "{}", filed.text);
    filed.json()["provenance"].as_str().unwrap().to_owned()
}

/// Posts the register form.
fn register(person: &Person<'_>, key_id: &str, public_key: &str) -> Reply {
    let fields = [
        ("action", "register"),
        ("key_id", key_id),
        ("public_key", public_key),
    ];
    person.post(DASH_HOST_KEYS, &fields)
}

/// Posts the revoke form.
fn revoke(person: &Person<'_>, key_id: &str) -> Reply {
    person.post(DASH_HOST_KEYS, &[("action", "revoke"), ("key_id", key_id)])
}

fn host_signing_key() -> (SigningKey, String) {
    let signing = SigningKey::from_bytes(&[9u8; 32]);
    let public = kd_protocol::b64::encode_url(signing.verifying_key().as_bytes());
    (signing, public)
}

#[test]
fn linkdbots_host_keys_page_refuses_a_bad_key_and_stores_nothing() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let page = ada.page(DASH_HOST_KEYS);
    assert!(page.text.contains("You have registered no host keys."));
    let (_, public) = host_signing_key();
    let short = kd_protocol::b64::encode_url(&[1u8; 31]);
    for (key_id, public_key, words) in [
        (
            "bad id!",
            public.as_str(),
            "the host key id must be an identifier",
        ),
        ("host-1", "not base64!", "the public key must be base64url"),
        (
            "host-1",
            &short,
            "the public key must be 32 bytes (Ed25519)",
        ),
    ] {
        let refused = register(&ada, key_id, public_key);
        assert_eq!(refused.status, 400, "{}", refused.text);
        assert!(refused.text.contains(words), "{words}: {}", refused.text);
        // The form comes back as filled in.
        let filled = format!("name=\"key_id\" maxlength=\"40\" value=\"{key_id}\"");
        assert!(refused.text.contains(&filled), "{}", refused.text);
    }
    let fields = [
        ("action", "register"),
        ("key_id", "host-1"),
        ("public_key", &public),
    ];
    ada.forged(DASH_HOST_KEYS, &fields);
    assert_eq!(ada.post(DASH_HOST_KEYS, &[("action", "nap")]).status, 400);
    assert_eq!(count(&app, "linkdbots_host_keys"), 0);
}

#[test]
fn linkdbots_host_keys_page_registers_and_revokes_and_a_revoked_key_signs_nothing() {
    let app = TestApp::start();
    let ada = person(&app, "ada@example.org", "Ada Owner");
    let stan = person(&app, "stan@example.org", "Stan Stranger");
    let (agent_id, key) = paired(&app, &ada, "Miso");
    let (signing, public) = host_signing_key();
    let provenance = || signed_card(&app, &agent_id, &key, "host-1", &signing);
    assert_eq!(provenance(), "self-reported");

    let registered = register(&ada, "host-1", &public);
    assert_see_other(&registered, &format!("{DASH_HOST_KEYS}?done=registered"));
    let page = ada.page(&format!("{DASH_HOST_KEYS}?done=registered"));
    for shown in [
        "Registered: cards signed with this key land host-signed.",
        "<code>host-1</code>",
        &public,
        "in force",
        ">Revoke<",
    ] {
        assert!(page.text.contains(shown), "{shown}: {}", page.text);
    }
    assert_eq!(provenance(), "host-signed");
    // The id is taken, for anyone; another person neither sees nor revokes it.
    let taken = register(&stan, "host-1", &public);
    assert_eq!(taken.status, 400, "{}", taken.text);
    assert!(
        taken
            .text
            .contains("that host key id is already registered")
    );
    assert!(!stan.page(DASH_HOST_KEYS).text.contains("host-1</code>"));
    assert_eq!(revoke(&stan, "host-1").status, 404);
    ada.forged(
        DASH_HOST_KEYS,
        &[("action", "revoke"), ("key_id", "host-1")],
    );
    assert_eq!(provenance(), "host-signed");

    let revoked = revoke(&ada, "host-1");
    assert_see_other(&revoked, &format!("{DASH_HOST_KEYS}?done=revoked"));
    let page = ada.page(DASH_HOST_KEYS);
    assert!(page.text.contains("revoked <time"), "{}", page.text);
    assert!(!page.text.contains(">Revoke<"), "{}", page.text);
    assert_eq!(provenance(), "self-reported");
    let again = revoke(&ada, "host-1");
    assert_eq!(again.status, 404, "{}", again.text);
    let words = "no host key of yours `host-1` in force";
    assert!(again.text.contains(words), "{}", again.text);
}
