//! The kinds list is complete and every payload prints as it did before it had a struct.

use std::collections::BTreeSet;

use super::*;

/// Every kind named in an append in the source tree: a `NewEvent { kind: "..." }` literal, a
/// `declare!(.., "...")` or a `const KIND`.
#[test]
fn every_kind_in_the_source_is_declared_once() {
    let declared: BTreeSet<&str> = ALL.iter().copied().collect();
    assert_eq!(declared.len(), ALL.len(), "a kind is listed twice");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = BTreeSet::new();
    for dir in ["karmadue/src", "ronin/src", "linkdbots/src", "core/src"] {
        scan(&root.join(dir), &mut found);
    }
    let missing: Vec<&String> = found
        .iter()
        .filter(|kind| !declared.contains(kind.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "kinds appended but not in kinds::ALL: {missing:?}"
    );
    let unused: Vec<&&str> = declared
        .iter()
        .filter(|kind| !found.contains(**kind))
        .collect();
    assert!(
        unused.is_empty(),
        "kinds in kinds::ALL no source declares: {unused:?}"
    );
}

fn scan(dir: &std::path::Path, found: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            for (at, line) in lines.iter().enumerate() {
                // A `declare!(` that rustfmt broke over lines: read it with the next two.
                let joined;
                let line = if *line == "declare!(" {
                    joined = lines[at..lines.len().min(at + 3)].concat();
                    joined.as_str()
                } else {
                    line
                };
                let quoted = line.split('"').nth(1);
                let declares = line.starts_with("declare!(")
                    || line.starts_with("const KIND: &'static str =")
                    || (line.starts_with("kind: \"") && !line.contains("test."));
                if let (true, Some(kind)) = (declares, quoted)
                    && kind.contains('.')
                {
                    found.insert(kind.to_owned());
                }
            }
        }
    }
}

#[test]
fn payloads_print_as_their_json_did() {
    // Payloads as the handlers wrote them with json! before the structs, one per shape.
    let rows = [
        ("agent.renamed", r#"{"to": "b", "from": "a"}"#),
        (
            "agent.released",
            r#"{"by": "owner", "previous_owner": "kdh_1"}"#,
        ),
        (
            "connect.refused",
            r#"{"reason": "invalid_code", "agent_id": "x"}"#,
        ),
        (
            "finding.withdrawn",
            r#"{"agent_id": "x", "finding_id": "kdf_1"}"#,
        ),
        (
            "finding.filed",
            r#"{"kind": null, "agent_id": "x", "delivery": "open", "finding_id": "kdf_1"}"#,
        ),
        (
            "stamp.issued",
            r#"{"stamp": "s", "detail": {"a": 1}, "issuer": "hub", "agent_id": "x", "stamp_id": "kdst_1", "expires_ms": null, "credential_id": "kdp_1"}"#,
        ),
        (
            "resource.imported",
            r#"{"row": {"name": "n", "stars": 12}, "file": "f.jsonl", "observed_ms": 5}"#,
        ),
        (
            "ronin.event",
            r#"{"id": "ab", "kind": 30402, "pubkey": "cd"}"#,
        ),
        (
            "preferences.updated",
            r#"{"bytes": 12, "version": 2, "agent_id": "x", "preferences_sha256": "00"}"#,
        ),
    ];
    for (kind, text) in rows {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let before = kd_protocol::canonical::canonical_value_text(&value);
        let after = recode(kind, &before).unwrap().unwrap();
        assert_eq!(after, before, "{kind}");
    }
    assert!(recode("no.such_kind", "{}").is_none());
    assert!(
        recode("agent.renamed", r#"{"from": "a", "to": "b", "extra": 1}"#)
            .unwrap()
            .is_err()
    );
}
